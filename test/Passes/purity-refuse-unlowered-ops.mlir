// RUN: purity-opt %s --purity-refuse-unlowered-ops --split-input-file | filecheck %s

// A module torch-mlir's conversions lowered completely (constants left for
// the backend type conversion) is unchanged.
// CHECK-LABEL: func.func @lowered(
// CHECK: %[[INT:.*]] = torch.constant.int 1
// CHECK: %[[ADD:.*]] = arith.addf
// CHECK: return %[[ADD]]
func.func @lowered(%a: tensor<4xf32>) -> tensor<4xf32> {
  %int1 = torch.constant.int 1
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Constants and lists remain only as operands: not reported on their own.
// CHECK-LABEL: func.func @operands_only(
// CHECK: torch.prim.ListConstruct
// CHECK: return
func.func @operands_only(%a: tensor<4xf32>) -> tensor<4xf32> {
  %int1 = torch.constant.int 1
  %list = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  return %a : tensor<4xf32>
}

// -----

// A literal is left to the backend type conversion after this pass (it
// becomes an arith.constant there).
// CHECK-LABEL: func.func @literal_left(
// CHECK: torch.vtensor.literal(dense<0.000000e+00> : tensor<2x3xf32>)
func.func @literal_left() -> !torch.vtensor<[2,3],f32> {
  %0 = torch.vtensor.literal(dense<0.000000e+00> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}
