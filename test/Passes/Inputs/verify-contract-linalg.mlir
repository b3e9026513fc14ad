// torch-mlir's output at the torch-backend and linalg stages keeps the
// boundary's attributes; at linalg the boundary has builtin types.
// CHECK-LABEL: func.func @lowered(
// CHECK-SAME: purity.written_input = 0 : i64
func.func @lowered(%x: tensor<3xf32>) -> (tensor<3xf32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32"]} {
  return %x : tensor<3xf32>
}
