// RUN: purity-opt %s --purity-expose-input-writes --split-input-file | filecheck %s

// The edge overwrite becomes an extra result; the argument's snapshot is the
// argument itself. (Read by the add, so not tied: see below.)
// CHECK-LABEL: func.func @written_argument(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[3],f32> {purity.input = "input:0"}, %[[Y:.*]]: !torch.vtensor<[3],f32>)
// CHECK-SAME: -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.written_input = 0 : i64})
// CHECK: %[[NEW:.*]] = torch.aten.add.Tensor %[[X]], %[[Y]]
// CHECK: %[[OUT:.*]] = torch.aten.mul.Tensor %[[NEW]], %[[Y]]
// CHECK-NOT: overwrite
// CHECK-NOT: copy.to_vtensor
// CHECK: return %[[OUT]], %[[NEW]] : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
func.func @written_argument(%x: !torch.tensor<[3],f32> {purity.input = "input:0"}, %y: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  %int1 = torch.constant.int 1
  %x0 = torch.copy.to_vtensor %x : !torch.vtensor<[3],f32>
  %new = torch.aten.add.Tensor %x0, %y, %int1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.int -> !torch.vtensor<[3],f32>
  %out = torch.aten.mul.Tensor %new, %y : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  torch.overwrite.tensor.contents %new overwrites %x : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
  return %out : !torch.vtensor<[3],f32>
}

// -----

// Two written arguments: results appended in argument order.
// CHECK-LABEL: func.func @two_written(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[2],f32>, %{{.*}}: !torch.vtensor<[2],f32>)
// CHECK-SAME: -> (!torch.vtensor<[2],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[2],f32> {purity.written_input = 1 : i64})
func.func @two_written(%a: !torch.tensor<[2],f32>, %b: !torch.tensor<[2],f32>) {
  %int1 = torch.constant.int 1
  %a0 = torch.copy.to_vtensor %a : !torch.vtensor<[2],f32>
  %b0 = torch.copy.to_vtensor %b : !torch.vtensor<[2],f32>
  %a1 = torch.aten.add.Scalar %a0, %int1, %int1 : !torch.vtensor<[2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2],f32>
  %b1 = torch.aten.sub.Scalar %b0, %int1, %int1 : !torch.vtensor<[2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2],f32>
  torch.overwrite.tensor.contents %b1 overwrites %b : !torch.vtensor<[2],f32>, !torch.tensor<[2],f32>
  torch.overwrite.tensor.contents %a1 overwrites %a : !torch.vtensor<[2],f32>, !torch.tensor<[2],f32>
  return
}

// -----

// The original value is read besides being written into: no tie (IREE would
// not order that read before writes into the tied buffer); the final value
// still comes back as a result for the runtime to copy.
// CHECK-LABEL: func.func @original_value_also_read(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[3],f32>)
// CHECK-NOT: iree.abi.output
// CHECK-SAME: -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.written_input = 0 : i64})
func.func @original_value_also_read(%x: !torch.tensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  %int1 = torch.constant.int 1
  %x0 = torch.copy.to_vtensor %x : !torch.vtensor<[3],f32>
  %new = torch.aten.add.Scalar %x0, %int1, %int1 : !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
  torch.overwrite.tensor.contents %new overwrites %x : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
  return %x0 : !torch.vtensor<[3],f32>
}

// -----

// Only written into (a row inserted): tied.
// CHECK-LABEL: func.func @row_written_into(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[4,3],f32> {iree.abi.output = 1 : index}
func.func @row_written_into(%x: !torch.tensor<[4,3],f32>, %row: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %x0 = torch.copy.to_vtensor %x : !torch.vtensor<[4,3],f32>
  %new = torch.aten.select_scatter %x0, %row, %int0, %int2 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  torch.overwrite.tensor.contents %new overwrites %x : !torch.vtensor<[4,3],f32>, !torch.tensor<[4,3],f32>
  return %row : !torch.vtensor<[3],f32>
}
