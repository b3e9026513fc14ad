// RUN: purity-opt %s --purity-tie-written-inputs --split-input-file | filecheck %s

// The update is pointwise (an add of the argument's shape is its only read),
// so the argument's final value (result 1) is tied to its buffer.
// CHECK-LABEL: func.func @written_argument(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[3],f32> {iree.abi.output = 1 : index, purity.input = "input:0"}, %{{.*}}: !torch.vtensor<[3],f32>)
func.func @written_argument(%arg0: !torch.vtensor<[3],f32> {purity.input = "input:0"}, %arg1: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %arg0, %arg1, %int1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.int -> !torch.vtensor<[3],f32>
  %1 = torch.aten.mul.Tensor %0, %arg1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  return %1, %0 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}

// -----

// Two written arguments, each tied to its own final value (pointwise updates).
// CHECK-LABEL: func.func @two_written(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[2],f32> {iree.abi.output = 0 : index}, %{{.*}}: !torch.vtensor<[2],f32> {iree.abi.output = 1 : index})
func.func @two_written(%arg0: !torch.vtensor<[2],f32>, %arg1: !torch.vtensor<[2],f32>) -> (!torch.vtensor<[2],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[2],f32> {purity.written_input = 1 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Scalar %arg0, %int1, %int1 : !torch.vtensor<[2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2],f32>
  %1 = torch.aten.sub.Scalar %arg1, %int1, %int1 : !torch.vtensor<[2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2],f32>
  return %0, %1 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>
}

// -----

// The original value is read besides being written into: no tie (IREE would
// not order that read before writes into the tied buffer); the final value
// comes back in a buffer of its own, for the runtime to copy.
// CHECK-LABEL: func.func @original_value_also_read(
// CHECK-NOT: iree.abi.output
func.func @original_value_also_read(%arg0: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Scalar %arg0, %int1, %int1 : !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
  return %arg0, %0 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}

// -----

// Only written into (a row inserted): tied.
// CHECK-LABEL: func.func @row_written_into(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[4,3],f32> {iree.abi.output = 1 : index}
func.func @row_written_into(%arg0: !torch.vtensor<[4,3],f32>, %arg1: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[4,3],f32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %0 = torch.aten.select_scatter %arg0, %arg1, %int0, %int2 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  return %arg1, %0 : !torch.vtensor<[3],f32>, !torch.vtensor<[4,3],f32>
}

// -----

// Elements at a tensor position replaced (index_put, accumulate false: a
// static KV cache's row), the region read first for the index checks'
// guard: tied.
// CHECK-LABEL: func.func @index_put_into(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[4,3],f32> {iree.abi.output = 1 : index}
func.func @index_put_into(%arg0: !torch.vtensor<[4,3],f32>, %arg1: !torch.vtensor<[1,3],f32>, %arg2: !torch.vtensor<[1],si64>) -> (!torch.vtensor<[1,3],f32>, !torch.vtensor<[4,3],f32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %false = torch.constant.bool false
  %indices = torch.prim.ListConstruct %arg2 : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %old = torch.aten.index.Tensor %arg0, %indices {purity.guard_read} : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[1,3],f32>
  %0 = torch.aten.index_put %arg0, %indices, %arg1, %false : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,3],f32>, !torch.bool -> !torch.vtensor<[4,3],f32>
  return %old, %0 : !torch.vtensor<[1,3],f32>, !torch.vtensor<[4,3],f32>
}

// -----

// Accumulating (`index_add_`, `scatter_add_`): the scatter reads each
// element it adds to in the op that writes it, and nothing else reads the
// argument: tied. Not tied where the argument is also read elsewhere
// (returned as it was).
// CHECK-LABEL: func.func @index_put_accumulating(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[4,3],f32> {iree.abi.output = 0 : index}, %{{.*}}: !torch.vtensor<[1,3],f32>, %{{.*}}: !torch.vtensor<[1],si64>, %{{.*}}: !torch.vtensor<[4,3],f32>, %{{.*}}: !torch.vtensor<[4,3],f32> {iree.abi.output = 3 : index}, %{{.*}}: !torch.vtensor<[1,3],si64>)
func.func @index_put_accumulating(%arg0: !torch.vtensor<[4,3],f32>, %arg1: !torch.vtensor<[1,3],f32>, %arg2: !torch.vtensor<[1],si64>, %arg3: !torch.vtensor<[4,3],f32>, %arg4: !torch.vtensor<[4,3],f32>, %arg5: !torch.vtensor<[1,3],si64>) -> (!torch.vtensor<[4,3],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32> {purity.written_input = 3 : i64}, !torch.vtensor<[4,3],f32> {purity.written_input = 4 : i64}) attributes {purity.result_element_types = ["f32", "f32", "f32", "f32"]} {
  %true = torch.constant.bool true
  %int0 = torch.constant.int 0
  %indices = torch.prim.ListConstruct %arg2 : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %0 = torch.aten.index_put %arg0, %indices, %arg1, %true : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,3],f32>, !torch.bool -> !torch.vtensor<[4,3],f32>
  %1 = torch.aten.index_put %arg3, %indices, %arg1, %true : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,3],f32>, !torch.bool -> !torch.vtensor<[4,3],f32>
  %2 = torch.aten.scatter_add %arg4, %int0, %arg5, %arg1 : !torch.vtensor<[4,3],f32>, !torch.int, !torch.vtensor<[1,3],si64>, !torch.vtensor<[1,3],f32> -> !torch.vtensor<[4,3],f32>
  return %0, %arg3, %1, %2 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32>
}

// -----

// An optimizer step (SGD with momentum): each argument is read only by
// pointwise ops of its shape that lead to its final value, so both are tied;
// the updated buffer is read afterwards (by the parameter's update and by the
// sum), which comes after its write.
// CHECK-LABEL: func.func @pointwise_updates(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[4],f32> {iree.abi.output = 1 : index}, %{{.*}}: !torch.vtensor<[4],f32>, %{{.*}}: !torch.vtensor<[4],f32> {iree.abi.output = 2 : index})
func.func @pointwise_updates(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>, %arg2: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[4],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[4],f32> {purity.written_input = 2 : i64}) attributes {purity.result_element_types = ["f32", "f32", "f32"]} {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %float9.000000e-01 = torch.constant.float 9.000000e-01
  %float-1.000000e-02 = torch.constant.float -1.000000e-02
  %0 = torch.aten.mul.Scalar %arg2, %float9.000000e-01 : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %1 = torch.aten.add.Tensor %0, %arg1, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %2 = torch.aten.add.Tensor %arg0, %1, %float-1.000000e-02 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %3 = torch.aten.sum %2, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %3, %2, %1 : !torch.vtensor<[],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// A foreach `lerp_` as traced: `addcmul(x, full_like(g - x, w), g - x)`. The
// `full_like` reads only the sizes of a value computed from x, so the update
// is pointwise and x is tied.
// CHECK-LABEL: func.func @lerp_through_full_like(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[4],f32>, %{{.*}}: !torch.vtensor<[4],f32> {iree.abi.output = 0 : index})
func.func @lerp_through_full_like(%grad: !torch.vtensor<[4],f32>, %exp_avg: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32> {purity.written_input = 1 : i64}) attributes {purity.result_element_types = ["f32"]} {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %weight = torch.constant.float 1.000000e-01
  %0 = torch.aten.sub.Tensor %grad, %exp_avg, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %1 = torch.aten.full_like %0, %weight, %none, %none, %none, %false, %none : !torch.vtensor<[4],f32>, !torch.float, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
  %2 = torch.aten.addcmul %exp_avg, %1, %0, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %2 : !torch.vtensor<[4],f32>
}

// -----

// Reads of the original value that the final value does not wait for: a
// pointwise read kept as an output, a reduction feeding the update, a
// broadcast (the argument's shape differs from the op's). None is tied.
// CHECK-LABEL: func.func @reads_not_ordered_before_the_write(
// CHECK-NOT: iree.abi.output
func.func @reads_not_ordered_before_the_write(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>, %arg2: !torch.vtensor<[4],f32>, %arg3: !torch.vtensor<[3,4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[3,4],f32>, !torch.vtensor<[4],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[4],f32> {purity.written_input = 1 : i64}, !torch.vtensor<[4],f32> {purity.written_input = 2 : i64}) attributes {purity.result_element_types = ["f32", "f32", "f32", "f32", "f32"]} {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %float2.000000e00 = torch.constant.float 2.000000e+00
  %0 = torch.aten.mul.Scalar %arg0, %float2.000000e00 : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %1 = torch.aten.add.Scalar %arg0, %int1, %int1 : !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %2 = torch.aten.sum %arg1, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
  %3 = torch.aten.add.Tensor %arg1, %2, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %4 = torch.aten.add.Tensor %arg3, %arg2, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[3,4],f32>
  %5 = torch.aten.mul.Scalar %arg2, %float2.000000e00 : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  return %0, %4, %1, %3, %5 : !torch.vtensor<[4],f32>, !torch.vtensor<[3,4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// One value written into two arguments: neither is tied (one value cannot
// live in two tied buffers).
// CHECK-LABEL: func.func @one_value_two_targets(
// CHECK-NOT: iree.abi.output
func.func @one_value_two_targets(%arg0: !torch.vtensor<[2],f32>, %arg1: !torch.vtensor<[2],f32>, %arg2: !torch.vtensor<[2],f32>) -> (!torch.vtensor<[2],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[2],f32> {purity.written_input = 1 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %float2.000000e00 = torch.constant.float 2.000000e+00
  %0 = torch.aten.mul.Scalar %arg2, %float2.000000e00 : !torch.vtensor<[2],f32>, !torch.float -> !torch.vtensor<[2],f32>
  return %0, %0 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>
}

// -----

// A rank-0 counter updated pointwise (an optimizer's step): not tied, since
// IREE stores a tied 0-d result with a transfer the caller's imported memory
// refuses (IREE-WORKAROUND(scalar-tie-transfer)); the vector beside it is.
// CHECK-LABEL: func.func @scalar_counter(
// CHECK-SAME: %{{[^:]*}}: !torch.vtensor<[],f32>, %{{[^:]*}}: !torch.vtensor<[4],f32> {iree.abi.output = 1 : index})
func.func @scalar_counter(%step: !torch.vtensor<[],f32>, %p: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[4],f32> {purity.written_input = 1 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Scalar %step, %int1, %int1 : !torch.vtensor<[],f32>, !torch.int, !torch.int -> !torch.vtensor<[],f32>
  %1 = torch.aten.sub.Scalar %p, %int1, %int1 : !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  return %0, %1 : !torch.vtensor<[],f32>, !torch.vtensor<[4],f32>
}

// -----

// A region read, updated pointwise and written back into the same region
// (`x[1:3].add_(1)`, `x[i].mul_(y)` at an int position): tied. The slice's
// bounds are the same constants, the row's position the same value.
// CHECK-LABEL: func.func @region_updated_pointwise(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[4,3],f32> {iree.abi.output = 0 : index}, %{{.*}}: !torch.vtensor<[4,3],f32> {iree.abi.output = 1 : index}
func.func @region_updated_pointwise(%arg0: !torch.vtensor<[4,3],f32>, %arg1: !torch.vtensor<[4,3],f32>, %arg2: !torch.vtensor<[3],f32>, %arg3: !torch.int) -> (!torch.vtensor<[4,3],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[4,3],f32> {purity.written_input = 1 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int1_0 = torch.constant.int 1
  %0 = torch.aten.slice.Tensor %arg0, %int0, %int1, %int3, %int1 : !torch.vtensor<[4,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %1 = torch.aten.add.Scalar %0, %int1, %int1 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %2 = torch.aten.slice_scatter %arg0, %1, %int0, %int1_0, %int3, %int1 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[2,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  %3 = torch.aten.select.int %arg1, %int0, %arg3 : !torch.vtensor<[4,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
  %4 = torch.aten.mul.Tensor %3, %arg2 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %5 = torch.aten.select_scatter %arg1, %4, %int0, %arg3 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  return %2, %5 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32>
}

// -----

// Not tied: a region read that is written into another region (overlapping
// in place, a dispatch could read what it has written); a region read
// through an op that is not pointwise (a flip); the read region also kept
// as an output (read after the write).
// CHECK-LABEL: func.func @region_reads_not_ordered_before_the_write(
// CHECK-NOT: iree.abi.output
// CHECK: return
func.func @region_reads_not_ordered_before_the_write(%arg0: !torch.vtensor<[4,3],f32>, %arg1: !torch.vtensor<[4,3],f32>, %arg2: !torch.vtensor<[4,3],f32>) -> (!torch.vtensor<[2,3],f32>, !torch.vtensor<[4,3],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[4,3],f32> {purity.written_input = 1 : i64}, !torch.vtensor<[4,3],f32> {purity.written_input = 2 : i64}) attributes {purity.result_element_types = ["f32", "f32", "f32", "f32"]} {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %0 = torch.aten.slice.Tensor %arg0, %int0, %int0, %int2, %int1 : !torch.vtensor<[4,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %1 = torch.aten.add.Scalar %0, %int1, %int1 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %2 = torch.aten.slice_scatter %arg0, %1, %int0, %int1, %int3, %int1 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[2,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  %list = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.slice.Tensor %arg1, %int0, %int0, %int2, %int1 : !torch.vtensor<[4,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %4 = torch.aten.flip %3, %list : !torch.vtensor<[2,3],f32>, !torch.list<int> -> !torch.vtensor<[2,3],f32>
  %5 = torch.aten.slice_scatter %arg1, %4, %int0, %int0, %int2, %int1 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[2,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  %6 = torch.aten.slice.Tensor %arg2, %int0, %int0, %int2, %int1 : !torch.vtensor<[4,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %7 = torch.aten.add.Scalar %6, %int1, %int1 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %8 = torch.aten.slice_scatter %arg2, %7, %int0, %int0, %int2, %int1 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[2,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  return %6, %2, %5, %8 : !torch.vtensor<[2,3],f32>, !torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32>
}

// -----

// Tied: an element written into a row that is written back (`x[3, 2] = v`:
// the row's other elements pass through the element write); a masked fill
// (pointwise); an argument whose elements are never read (`x.copy_(y)`).
// CHECK-LABEL: func.func @region_written_through_and_never_read(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[8,4],f32> {iree.abi.output = 0 : index}, %{{.*}}: !torch.vtensor<[],f32>, %{{.*}}: !torch.vtensor<[8,4],f32> {iree.abi.output = 1 : index}, %{{.*}}: !torch.vtensor<[4],i1>, %{{.*}}: !torch.vtensor<[8,4],f32> {iree.abi.output = 2 : index}, %{{.*}}: !torch.vtensor<[8,4],f32>)
func.func @region_written_through_and_never_read(%arg0: !torch.vtensor<[8,4],f32>, %arg1: !torch.vtensor<[],f32>, %arg2: !torch.vtensor<[8,4],f32>, %arg3: !torch.vtensor<[4],i1>, %arg4: !torch.vtensor<[8,4],f32>, %arg5: !torch.vtensor<[8,4],f32>) -> (!torch.vtensor<[8,4],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[8,4],f32> {purity.written_input = 2 : i64}, !torch.vtensor<[8,4],f32> {purity.written_input = 4 : i64}) attributes {purity.result_element_types = ["f32", "f32", "f32"]} {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %float0 = torch.constant.float 0.000000e+00
  %0 = torch.aten.select.int %arg0, %int0, %int3 : !torch.vtensor<[8,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %1 = torch.aten.select_scatter %0, %arg1, %int0, %int2 : !torch.vtensor<[4],f32>, !torch.vtensor<[],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %2 = torch.aten.select_scatter %arg0, %1, %int0, %int3 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  %3 = torch.aten.masked_fill.Scalar %arg2, %arg3, %float0 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4],i1>, !torch.float -> !torch.vtensor<[8,4],f32>
  return %2, %3, %arg5 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[8,4],f32>, !torch.vtensor<[8,4],f32>
}

// -----

// Not tied: a row written from another row of the same argument (`x[3] =
// x[5]`); an element written from another element of its row (`x[3, 2] =
// x[3, 0]`: the row is read for the source too, not only passed through).
// CHECK-LABEL: func.func @row_written_from_another_row(
// CHECK-NOT: iree.abi.output
// CHECK: return
func.func @row_written_from_another_row(%arg0: !torch.vtensor<[8,4],f32>, %arg1: !torch.vtensor<[8,4],f32>) -> (!torch.vtensor<[8,4],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[8,4],f32> {purity.written_input = 1 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int5 = torch.constant.int 5
  %0 = torch.aten.select.int %arg0, %int0, %int5 : !torch.vtensor<[8,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %1 = torch.aten.select_scatter %arg0, %0, %int0, %int3 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  %2 = torch.aten.select.int %arg1, %int0, %int3 : !torch.vtensor<[8,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %3 = torch.aten.select.int %2, %int0, %int0 : !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[],f32>
  %4 = torch.aten.select_scatter %2, %3, %int0, %int2 : !torch.vtensor<[4],f32>, !torch.vtensor<[],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %5 = torch.aten.select_scatter %arg1, %4, %int0, %int3 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  return %1, %5 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[8,4],f32>
}

// -----

// Reshapes of the argument are the argument: a region of its flat view
// read, scaled and written back (`x.view(-1)[5:10].mul_(2)`, two view ops
// of the same shape) is tied. Not tied: the flat view's region written
// from another region of it (overlapping).
// CHECK-LABEL: func.func @regions_of_reshapes(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[8,4],f32> {iree.abi.output = 0 : index}, %{{.*}}: !torch.vtensor<[8,4],f32>)
func.func @regions_of_reshapes(%arg0: !torch.vtensor<[8,4],f32>, %arg1: !torch.vtensor<[8,4],f32>) -> (!torch.vtensor<[8,4],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[8,4],f32> {purity.written_input = 1 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int5 = torch.constant.int 5
  %int8 = torch.constant.int 8
  %int10 = torch.constant.int 10
  %float2 = torch.constant.float 2.000000e+00
  %flat = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %shape = torch.prim.ListConstruct %int8, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %arg0, %flat : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
  %1 = torch.aten.slice.Tensor %0, %int0, %int5, %int10, %int1 : !torch.vtensor<[32],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[5],f32>
  %2 = torch.aten.mul.Scalar %1, %float2 : !torch.vtensor<[5],f32>, !torch.float -> !torch.vtensor<[5],f32>
  %3 = torch.aten.view %arg0, %flat : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
  %4 = torch.aten.slice_scatter %3, %2, %int0, %int5, %int10, %int1 : !torch.vtensor<[32],f32>, !torch.vtensor<[5],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[32],f32>
  %5 = torch.aten.view %4, %shape : !torch.vtensor<[32],f32>, !torch.list<int> -> !torch.vtensor<[8,4],f32>
  %6 = torch.aten.view %arg1, %flat : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
  %7 = torch.aten.slice.Tensor %6, %int0, %int0, %int5, %int1 : !torch.vtensor<[32],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[5],f32>
  %8 = torch.aten.mul.Scalar %7, %float2 : !torch.vtensor<[5],f32>, !torch.float -> !torch.vtensor<[5],f32>
  %9 = torch.aten.slice_scatter %6, %8, %int0, %int1, %int5, %int1 : !torch.vtensor<[32],f32>, !torch.vtensor<[5],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[32],f32>
  %10 = torch.aten.view %9, %shape : !torch.vtensor<[32],f32>, !torch.list<int> -> !torch.vtensor<[8,4],f32>
  return %5, %10 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[8,4],f32>
}

// -----

// Not tied: a scatter out of place on the original value (`y =
// x.slice_scatter(v, 0, 0, 1)`, a read of all of x) beside the write of a
// row (`x[5] = 7`): two scatters on the original, only one of them the write.
// CHECK-LABEL: func.func @out_of_place_scatter_beside_the_write(
// CHECK-NOT: iree.abi.output
// CHECK: return
func.func @out_of_place_scatter_beside_the_write(%arg0: !torch.vtensor<[8,4],f32>, %arg1: !torch.vtensor<[1,4],f32>, %arg2: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[8,4],f32>, !torch.vtensor<[8,4],f32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int5 = torch.constant.int 5
  %0 = torch.aten.slice_scatter %arg0, %arg1, %int0, %int0, %int1, %int1 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[1,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  %1 = torch.aten.select_scatter %arg0, %arg2, %int0, %int5 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  return %0, %1 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[8,4],f32>
}

// -----

// A masked write (`x[mask] = 0`) is traced as `where` over the flattened
// input, through an identity permute: pointwise at every position, tied.
// Not tied: the same through a transpose (`x.t()`: another element's
// position), and an update whose input is also read through a reshape by
// an op the final value does not wait for (a cumsum returned).
// CHECK-LABEL: func.func @pointwise_through_reshapes(
// CHECK-SAME: %{{.*}}: !torch.vtensor<[8,4],f32> {iree.abi.output = 0 : index}, %{{.*}}: !torch.vtensor<[32],i1>, %{{.*}}: !torch.vtensor<[4,4],f32>, %{{.*}}: !torch.vtensor<[8,4],f32>)
func.func @pointwise_through_reshapes(%arg0: !torch.vtensor<[8,4],f32>, %arg1: !torch.vtensor<[32],i1>, %arg2: !torch.vtensor<[4,4],f32>, %arg3: !torch.vtensor<[8,4],f32>) -> (!torch.vtensor<[8,4],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[4,4],f32> {purity.written_input = 2 : i64}, !torch.vtensor<[32],f32>, !torch.vtensor<[8,4],f32> {purity.written_input = 3 : i64}) attributes {purity.result_element_types = ["f32", "f32", "f32", "f32"]} {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %none = torch.constant.none
  %float0 = torch.constant.float 0.000000e+00
  %identity = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %swap = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %flat = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %shape = torch.prim.ListConstruct %int8, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.permute %arg0, %identity : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[8,4],f32>
  %1 = torch.aten.view %0, %flat : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
  %2 = torch.aten.masked_fill.Scalar %1, %arg1, %float0 : !torch.vtensor<[32],f32>, !torch.vtensor<[32],i1>, !torch.float -> !torch.vtensor<[32],f32>
  %3 = torch.aten.view %2, %shape : !torch.vtensor<[32],f32>, !torch.list<int> -> !torch.vtensor<[8,4],f32>
  %4 = torch.aten.permute %3, %identity : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[8,4],f32>
  %5 = torch.aten.permute %arg2, %swap : !torch.vtensor<[4,4],f32>, !torch.list<int> -> !torch.vtensor<[4,4],f32>
  %6 = torch.aten.add.Tensor %5, %arg2, %int1 : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32>, !torch.int -> !torch.vtensor<[4,4],f32>
  %7 = torch.aten.view %arg3, %flat : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
  %8 = torch.aten.cumsum %7, %int0, %none : !torch.vtensor<[32],f32>, !torch.int, !torch.none -> !torch.vtensor<[32],f32>
  %9 = torch.aten.add.Scalar %arg3, %int1, %int1 : !torch.vtensor<[8,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  return %4, %6, %8, %9 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4,4],f32>, !torch.vtensor<[32],f32>, !torch.vtensor<[8,4],f32>
}
