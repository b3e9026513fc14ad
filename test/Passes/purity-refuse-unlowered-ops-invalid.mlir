// RUN: purity-opt %s --purity-refuse-unlowered-ops --split-input-file --verify-diagnostics

// An ATen op no conversion lowered is reported at its own location (the
// importer's location names the ATen op and the user's line), not at the
// constant feeding it.
func.func @unlowered_aten_op(%a: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],si32> {
  %int3 = torch.constant.int 3
  // expected-error @+1 {{purity-refuse-unlowered-ops: torch-mlir has no lowering of 'torch.aten.view.dtype' to linalg-on-tensors for operands (!torch.vtensor<[4],f32>, !torch.int)}}
  %0 = torch.aten.view.dtype %a, %int3 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],si32>
  return %0 : !torch.vtensor<[4],si32>
}

// -----

// Every op left is reported, in nested regions too.
func.func @two_left(%a: !torch.vtensor<[4],f32>, %c: i1) -> !torch.vtensor<[4],si32> {
  %int3 = torch.constant.int 3
  %0 = scf.if %c -> !torch.vtensor<[4],si32> {
    // expected-error @+1 {{purity-refuse-unlowered-ops: torch-mlir has no lowering of 'torch.aten.view.dtype'}}
    %1 = torch.aten.view.dtype %a, %int3 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],si32>
    scf.yield %1 : !torch.vtensor<[4],si32>
  } else {
    // expected-error @+1 {{purity-refuse-unlowered-ops: torch-mlir has no lowering of 'torch.aten.view.dtype'}}
    %2 = torch.aten.view.dtype %a, %int3 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],si32>
    scf.yield %2 : !torch.vtensor<[4],si32>
  }
  return %0 : !torch.vtensor<[4],si32>
}
