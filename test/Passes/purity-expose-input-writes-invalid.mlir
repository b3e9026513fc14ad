// RUN: purity-opt %s --purity-expose-input-writes --split-input-file --verify-diagnostics

// Not yet functionalized: a non-value argument used by an in-place op.
func.func @not_functionalized(%x: !torch.tensor<[3],f32>) -> !torch.none {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  // expected-error @+1 {{'torch.aten.add_.Scalar' uses a non-value argument (run purity-functionalize first)}}
  %0 = torch.aten.add_.Scalar %x, %int1, %int1 : !torch.tensor<[3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  return %none : !torch.none
}
