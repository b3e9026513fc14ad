// RUN: purity-opt %s --purity-expose-input-writes --split-input-file | filecheck %s

// The edge overwrite becomes an extra result; the argument's snapshot is the
// argument itself. The update is pointwise (an add of the argument's shape
// is its only read), so the result is tied to the argument's buffer.
// CHECK-LABEL: func.func @written_argument(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[3],f32> {iree.abi.output = 1 : index, purity.input = "input:0"}, %[[Y:.*]]: !torch.vtensor<[3],f32>)
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

// Two written arguments: results appended in argument order (each tied to
// its argument: pointwise updates).
// CHECK-LABEL: func.func @two_written(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[2],f32> {iree.abi.output = 0 : index}, %{{.*}}: !torch.vtensor<[2],f32> {iree.abi.output = 1 : index})
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

// -----

// An optimizer step (SGD with momentum): each argument is read only by
// pointwise ops of its shape that lead to its final value, so both are tied;
// the updated buffer is read afterwards (by the parameter's update and by the
// sum), which comes after its write.
// CHECK-LABEL: func.func @pointwise_updates(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[4],f32> {iree.abi.output = 1 : index}, %{{.*}}: !torch.vtensor<[4],f32>, %{{.*}}: !torch.vtensor<[4],f32> {iree.abi.output = 2 : index})
func.func @pointwise_updates(%p: !torch.tensor<[4],f32>, %g: !torch.vtensor<[4],f32>, %b: !torch.tensor<[4],f32>) -> !torch.vtensor<[],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %momentum = torch.constant.float 9.000000e-01
  %lr = torch.constant.float -1.000000e-02
  %p0 = torch.copy.to_vtensor %p : !torch.vtensor<[4],f32>
  %b0 = torch.copy.to_vtensor %b : !torch.vtensor<[4],f32>
  %scaled = torch.aten.mul.Scalar %b0, %momentum : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %b1 = torch.aten.add.Tensor %scaled, %g, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %p1 = torch.aten.add.Tensor %p0, %b1, %lr : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %sum = torch.aten.sum %p1, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
  torch.overwrite.tensor.contents %b1 overwrites %b : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
  torch.overwrite.tensor.contents %p1 overwrites %p : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
  return %sum : !torch.vtensor<[],f32>
}

// -----

// Reads of the original value that the final value does not wait for: a
// pointwise read kept as an output, a reduction feeding the update, a
// broadcast (the argument's shape differs from the op's). None is tied.
// CHECK-LABEL: func.func @reads_not_ordered_before_the_write(
// CHECK-NOT: iree.abi.output
// CHECK: return
func.func @reads_not_ordered_before_the_write(%x: !torch.tensor<[4],f32>, %y: !torch.tensor<[4],f32>, %z: !torch.tensor<[4],f32>, %m: !torch.vtensor<[3,4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[3,4],f32>) {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %two = torch.constant.float 2.000000e+00
  %x0 = torch.copy.to_vtensor %x : !torch.vtensor<[4],f32>
  %kept = torch.aten.mul.Scalar %x0, %two : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %x1 = torch.aten.add.Scalar %x0, %int1, %int1 : !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %y0 = torch.copy.to_vtensor %y : !torch.vtensor<[4],f32>
  %total = torch.aten.sum %y0, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
  %y1 = torch.aten.add.Tensor %y0, %total, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %z0 = torch.copy.to_vtensor %z : !torch.vtensor<[4],f32>
  %spread = torch.aten.add.Tensor %m, %z0, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[3,4],f32>
  %z1 = torch.aten.mul.Scalar %z0, %two : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  torch.overwrite.tensor.contents %x1 overwrites %x : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
  torch.overwrite.tensor.contents %y1 overwrites %y : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
  torch.overwrite.tensor.contents %z1 overwrites %z : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
  return %kept, %spread : !torch.vtensor<[4],f32>, !torch.vtensor<[3,4],f32>
}

// -----

// One value written into two arguments: neither is tied (one value cannot
// live in two tied buffers).
// CHECK-LABEL: func.func @one_value_two_targets(
// CHECK-NOT: iree.abi.output
// CHECK: return
func.func @one_value_two_targets(%a: !torch.tensor<[2],f32>, %b: !torch.tensor<[2],f32>, %v: !torch.vtensor<[2],f32>) {
  %two = torch.constant.float 2.000000e+00
  %doubled = torch.aten.mul.Scalar %v, %two : !torch.vtensor<[2],f32>, !torch.float -> !torch.vtensor<[2],f32>
  torch.overwrite.tensor.contents %doubled overwrites %a : !torch.vtensor<[2],f32>, !torch.tensor<[2],f32>
  torch.overwrite.tensor.contents %doubled overwrites %b : !torch.vtensor<[2],f32>, !torch.tensor<[2],f32>
  return
}
