// IREE's ABI: result 0 in its storage argument, result 1 in the written
// argument it is the final value of.
// CHECK-LABEL: func.func @stored(
// CHECK-SAME: purity.result_storage = 0 : i64
func.func @stored(%x: tensor<3xf32> {iree.abi.output = 1 : index}, %storage: tensor<3xf32> {iree.abi.output = 0 : index, purity.result_storage = 0 : i64}) -> (tensor<3xf32>, tensor<3xf32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  return %x, %x : tensor<3xf32>, tensor<3xf32>
}
