// Value-boundary Torch IR: the written argument's final value is result 1,
// tied to it; every result's element type recorded.
// CHECK-LABEL: func.func @exposed(
// CHECK-SAME: iree.abi.output = 1 : index
// CHECK-SAME: purity.written_input = 0 : i64
func.func @exposed(%x: !torch.vtensor<[3],f32> {iree.abi.output = 1 : index}) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int1 = torch.constant.int 1
  %new = torch.aten.add.Scalar %x, %int1, %int1 : !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
  return %x, %new : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}
