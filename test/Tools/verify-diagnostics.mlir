// --verify-diagnostics fails on an expected error that is not produced and on
// an unexpected one, and passes when they match.

// RUN: purity-opt %s --split-input-file --verify-diagnostics --purity-functionalize
// RUN: not purity-opt %S/Inputs/wrong-expectation.mlir --verify-diagnostics --purity-functionalize 2>&1 | filecheck %s
// CHECK: wrong-expectation.mlir:{{[0-9]+}}:{{[0-9]+}}: error: unexpected error: purity-functionalize: a write through 'torch.aten.expand'
// CHECK: wrong-expectation.mlir:{{[0-9]+}}:1: error: expected error "something else" was not produced

func.func @ok(%x: !torch.tensor<[3],f32>) -> !torch.none {
  %none = torch.constant.none
  // expected-error @+1 {{unknown op 'torch.aten.mystery'}}
  %0 = torch.operator "torch.aten.mystery"(%x) : (!torch.tensor<[3],f32>) -> !torch.tensor<[3],f32>
  return %none : !torch.none
}

// -----

// expected-error @+2 {{Dialect `not' not found for custom op 'not.an.op'}}
func.func @parse_error() {
  %0 = not.an.op
}
