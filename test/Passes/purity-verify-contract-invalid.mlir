// RUN: purity-opt %s --purity-verify-contract=stage=functional-torch --split-input-file --verify-diagnostics
// RUN: purity-opt %S/Inputs/verify-contract-boundary-invalid.mlir --purity-verify-contract=stage=value-boundary-torch --split-input-file --verify-diagnostics
// RUN: purity-opt %S/Inputs/verify-contract-torch-backend-invalid.mlir --purity-verify-contract=stage=torch-backend --split-input-file --verify-diagnostics
// RUN: purity-opt %S/Inputs/verify-contract-linalg-invalid.mlir --purity-verify-contract=stage=linalg --split-input-file --verify-diagnostics
// RUN: purity-opt %S/Inputs/verify-contract-iree-abi-invalid.mlir --purity-verify-contract=stage=iree-abi --split-input-file --verify-diagnostics

// An in-place op left in functional IR.
func.func @in_place_left(%x: !torch.tensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  %int1 = torch.constant.int 1
  // expected-error @+2 {{functional-torch contract: 'torch.aten.add_.Scalar' mutates or makes a non-value tensor}}
  // expected-error @+1 {{'torch.aten.add_.Scalar' uses written argument 0, which only reads and one overwrite may}}
  %0 = torch.aten.add_.Scalar %x, %int1, %int1 : !torch.tensor<[3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  %1 = torch.copy.to_vtensor %x : !torch.vtensor<[3],f32>
  torch.overwrite.tensor.contents %1 overwrites %x : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
  return %1 : !torch.vtensor<[3],f32>
}

// -----

// A view of a non-value tensor left in functional IR.
func.func @view_left(%x: !torch.tensor<[2,3],f32>) -> !torch.vtensor<[3],f32> {
  %int0 = torch.constant.int 0
  // expected-error @+2 {{'torch.aten.select.int' produces a non-value tensor}}
  // expected-error @+1 {{'torch.aten.select.int' uses written argument 0}}
  %row = torch.aten.select.int %x, %int0, %int0 : !torch.tensor<[2,3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  %0 = torch.copy.to_vtensor %row : !torch.vtensor<[3],f32>
  %1 = torch.copy.to_vtensor %x : !torch.vtensor<[2,3],f32>
  torch.overwrite.tensor.contents %1 overwrites %x : !torch.vtensor<[2,3],f32>, !torch.tensor<[2,3],f32>
  return %0 : !torch.vtensor<[3],f32>
}

// -----

// A written argument overwritten twice.
// expected-error @+1 {{written argument 0 is overwritten 2 times, not once}}
func.func @overwritten_twice(%x: !torch.tensor<[3],f32>, %a: !torch.vtensor<[3],f32>) {
  torch.overwrite.tensor.contents %a overwrites %x : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
  torch.overwrite.tensor.contents %a overwrites %x : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
  return
}

// -----

// A non-value argument that is never overwritten (functionalize makes it a value tensor).
// expected-error @+1 {{written argument 0 is overwritten 0 times, not once}}
func.func @never_overwritten(%x: !torch.tensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  %0 = torch.copy.to_vtensor %x : !torch.vtensor<[3],f32>
  return %0 : !torch.vtensor<[3],f32>
}

// -----

// A non-value result.
// expected-error @+1 {{result 0 is a non-value tensor}}
func.func @non_value_result(%x: !torch.vtensor<[3],f32>) -> !torch.tensor<[3],f32> {
  // expected-error @+1 {{'torch.copy.to_tensor' mutates or makes a non-value tensor}}
  %0 = torch.copy.to_tensor %x : !torch.tensor<[3],f32>
  return %0 : !torch.tensor<[3],f32>
}

// -----

// The index checks' result has a flag count other than its checks'.
// expected-error @+1 {{the index checks' result 0 is !torch.vtensor<[3],i1>, not [2] flags of i1}}
func.func @flag_count(%flags: !torch.vtensor<[3],i1>) -> (!torch.vtensor<[3],i1> {purity.index_checks = [{count = 2 : i64, location = "", op = "aten.gather"}]}) {
  return %flags : !torch.vtensor<[3],i1>
}

// -----

// A result viewing an input without its layout (the runtime could not rebuild the view).
// expected-error @+1 {{result 0 views an input but has no purity.view_sizes}}
func.func @view_without_layout(%x: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[3],f32> {purity.aliases_input = 0 : i64}) {
  return %x : !torch.vtensor<[3],f32>
}

// -----

// Two results claim the index checks' flags.
// expected-error @+1 {{2 results carry purity.index_checks, not at most one}}
func.func @two_flag_results(%f: !torch.vtensor<[1],i1>) -> (!torch.vtensor<[1],i1> {purity.index_checks = [{count = 1 : i64, location = "", op = "aten.gather"}]}, !torch.vtensor<[1],i1> {purity.index_checks = [{count = 1 : i64, location = "", op = "aten.gather"}]}) {
  return %f, %f : !torch.vtensor<[1],i1>, !torch.vtensor<[1],i1>
}
