// RUN: purity-opt %s --canonicalize | filecheck %s

// torch-mlir 20261001 folds eq.Tensor(x, x) to true, wrong for NaN. The
// importer therefore imports `==` as not(!=) (fx_import._equal_without_self_fold).
// When this test fails, torch-mlir has stopped folding it: the workaround can go.
// CHECK-LABEL: func.func @equal_to_itself(
// CHECK: torch.vtensor.literal(dense<true>
func.func @equal_to_itself(%x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],i1> {
  %0 = torch.aten.eq.Tensor %x, %x : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],i1>
  return %0 : !torch.vtensor<[4],i1>
}
