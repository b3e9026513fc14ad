// RUN: purity-opt %s --purity-expose-input-writes --split-input-file | filecheck %s

// The edge overwrite becomes an extra result; the argument's snapshot is the
// argument itself; the function records every result's element type. Ties
// to IREE buffers are not this pass's business (purity-tie-written-inputs).
// CHECK-LABEL: func.func @written_argument(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[3],f32> {purity.input = "input:0"}, %[[Y:.*]]: !torch.vtensor<[3],f32>)
// CHECK-SAME: -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.written_input = 0 : i64})
// CHECK-SAME: attributes {purity.result_element_types = ["f32", "f32"]}
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

// The original value is read besides being written into: the read is the
// argument itself, the final value an extra result.
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

// Results of several element types: signedness and booleans are recorded
// (the builtin tensor types after lowering keep neither).
// CHECK-LABEL: func.func @element_types(
// CHECK-SAME: attributes {purity.result_element_types = ["si64", "ui8", "i1"]}
func.func @element_types(%a: !torch.vtensor<[2],si64>, %b: !torch.vtensor<[2],ui8>, %c: !torch.vtensor<[2],i1>) -> (!torch.vtensor<[2],si64>, !torch.vtensor<[2],ui8>, !torch.vtensor<[2],i1>) {
  return %a, %b, %c : !torch.vtensor<[2],si64>, !torch.vtensor<[2],ui8>, !torch.vtensor<[2],i1>
}
