// RUN: purity-opt %s --purity-expose-input-writes --split-input-file --verify-diagnostics

// Not yet functionalized: a non-value argument used by an in-place op.
func.func @not_functionalized(%x: !torch.tensor<[3],f32>) -> !torch.none {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  // expected-error @+1 {{'torch.aten.add_.Scalar' uses a non-value argument (run purity-functionalize first)}}
  %0 = torch.aten.add_.Scalar %x, %int1, %int1 : !torch.tensor<[3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  return %none : !torch.none
}

// -----

// An overwrite of a fresh tensor, not of a function argument.
func.func @overwrite_of_fresh_tensor(%v: !torch.vtensor<[3],f32>, %w: !torch.vtensor<[3],f32>) -> !torch.none {
  %none = torch.constant.none
  %t = torch.copy.to_tensor %v : !torch.tensor<[3],f32>
  // expected-error @+1 {{only overwrites of function arguments can be exposed (run purity-functionalize first)}}
  torch.overwrite.tensor.contents %w overwrites %t : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
  return %none : !torch.none
}
