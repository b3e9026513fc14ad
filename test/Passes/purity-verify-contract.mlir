// RUN: purity-opt %s --purity-verify-contract=stage=functional-torch --split-input-file | filecheck %s
// RUN: purity-opt %S/Inputs/verify-contract-boundary.mlir --purity-verify-contract=stage=value-boundary-torch --split-input-file | filecheck %S/Inputs/verify-contract-boundary.mlir
// RUN: purity-opt %S/Inputs/verify-contract-boundary.mlir --purity-verify-contract=stage=torch-backend --split-input-file | filecheck %S/Inputs/verify-contract-boundary.mlir
// RUN: purity-opt %S/Inputs/verify-contract-linalg.mlir --purity-verify-contract=stage=linalg --split-input-file | filecheck %S/Inputs/verify-contract-linalg.mlir
// RUN: purity-opt %S/Inputs/verify-contract-iree-abi.mlir --purity-verify-contract=stage=iree-abi --split-input-file | filecheck %S/Inputs/verify-contract-iree-abi.mlir

// Functional Torch IR as purity-functionalize leaves it: a written argument
// read once and overwritten once; the pass changes nothing.
// CHECK-LABEL: func.func @written_once(
// CHECK: %[[READ:.*]] = torch.copy.to_vtensor %arg0
// CHECK: torch.overwrite.tensor.contents %{{.*}} overwrites %arg0
// CHECK: return %[[READ]]
func.func @written_once(%x: !torch.tensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  %int1 = torch.constant.int 1
  %x0 = torch.copy.to_vtensor %x : !torch.vtensor<[3],f32>
  %new = torch.aten.add.Scalar %x0, %int1, %int1 : !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
  torch.overwrite.tensor.contents %new overwrites %x : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
  return %x0 : !torch.vtensor<[3],f32>
}

// -----

// The index checks' flags: as many i1 as the checks count, and a view of an
// input with its layout.
// CHECK-LABEL: func.func @checks_and_views(
// CHECK-SAME: purity.index_checks = [{count = 2 : i64
// CHECK-SAME: purity.aliases_input = 0 : i64
func.func @checks_and_views(%x: !torch.vtensor<[3],f32>, %flags: !torch.vtensor<[2],i1>) -> (!torch.vtensor<[2],i1> {purity.index_checks = [{count = 2 : i64, location = "", op = "aten.index_select"}]}, !torch.vtensor<[3],f32> {purity.aliases_input = 0 : i64, purity.view_sizes = array<i64: 3>, purity.view_storage_offset = 0 : i64, purity.view_strides = array<i64: 1>}) {
  return %flags, %x : !torch.vtensor<[2],i1>, !torch.vtensor<[3],f32>
}
