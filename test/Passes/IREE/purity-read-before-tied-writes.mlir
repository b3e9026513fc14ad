// RUN: purity-opt %s --purity-read-before-tied-writes --split-input-file --allow-unregistered-dialect | filecheck %s

// The row a write replaces, read before the write (purity-check-indices'
// guard read) and used after it: its value passes a barrier right where it
// is computed, so IREE cannot compute it after the write.
// CHECK-LABEL: func.func @row_read_before_its_write(
// CHECK-SAME: %[[CACHE:arg[0-9]+]]: tensor<4x3xf32> {iree.abi.output = 1 : index}
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[CACHE]][1, 0] [1, 3] [1, 1]
// CHECK-NEXT: %[[KEPT:.*]] = "util.optimization_barrier"(%[[OLD]]) : (tensor<1x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[WRITTEN:.*]] = tensor.insert_slice %{{.*}} into %[[CACHE]][1, 0]
// CHECK: %[[RESTORED:.*]] = tensor.insert_slice %[[KEPT]] into %[[WRITTEN]][1, 0]
// CHECK: return %[[DOUBLED:.*]], %[[RESTORED]]
func.func @row_read_before_its_write(%row: tensor<1x3xf32>, %cache: tensor<4x3xf32> {iree.abi.output = 1 : index}) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %old = tensor.extract_slice %cache[1, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
  %written = tensor.insert_slice %row into %cache[1, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  %doubled = arith.addf %written, %written : tensor<4x3xf32>
  %restored = tensor.insert_slice %old into %written[1, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  return %doubled, %restored : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A value computed from what was read (gather -> scale) crosses the write:
// the last value before the write carries the barrier; the gather stays
// fusable into it.
// CHECK-LABEL: func.func @computed_from_the_read(
// CHECK: %[[OLD:.*]] = tensor.extract_slice
// CHECK-NOT: util.optimization_barrier
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[OLD]] : tensor<1x3xf32>)
// CHECK: %[[KEPT:.*]] = "util.optimization_barrier"(%[[SCALED]])
// CHECK: tensor.insert_slice
// CHECK: arith.mulf %[[KEPT]], %[[KEPT]]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @computed_from_the_read(%row: tensor<1x3xf32>, %cache: tensor<4x3xf32> {iree.abi.output = 1 : index}) -> (tensor<1x3xf32>, tensor<4x3xf32>) {
  %old = tensor.extract_slice %cache[1, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
  %empty = tensor.empty() : tensor<1x3xf32>
  %scaled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%old : tensor<1x3xf32>) outs(%empty : tensor<1x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %twice = arith.addf %in, %in : f32
    linalg.yield %twice : f32
  } -> tensor<1x3xf32>
  %written = tensor.insert_slice %row into %cache[1, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  %squared = arith.mulf %scaled, %scaled : tensor<1x3xf32>
  return %squared, %written : tensor<1x3xf32>, tensor<4x3xf32>
}

// -----

// A read captured in a generic's body (a gather's `tensor.extract`) counts
// as a read of the argument; the scatter into the argument is the write.
// CHECK-LABEL: func.func @gathered_then_scattered(
// CHECK: %[[GATHERED:.*]] = linalg.generic
// CHECK: tensor.extract %arg1
// CHECK: %[[KEPT:.*]] = "util.optimization_barrier"(%[[GATHERED]])
// CHECK: tm_tensor.scatter
// CHECK: arith.negf %[[KEPT]]
#one = affine_map<(d0) -> (d0)>
func.func @gathered_then_scattered(%index: tensor<1xi64>, %cache: tensor<4xf32> {iree.abi.output = 1 : index}, %updates: tensor<1xf32>) -> (tensor<1xf32>, tensor<4xf32>) {
  %empty = tensor.empty() : tensor<1xf32>
  %gathered = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]} ins(%index : tensor<1xi64>) outs(%empty : tensor<1xf32>) {
  ^bb0(%i: i64, %out: f32):
    %at = arith.index_cast %i : i64 to index
    %element = tensor.extract %cache[%at] : tensor<4xf32>
    linalg.yield %element : f32
  } -> tensor<1xf32>
  %indices = tensor.expand_shape %index [[0, 1]] output_shape [1, 1] : tensor<1xi64> into tensor<1x1xi64>
  %scattered = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<1xf32>, tensor<1x1xi64>) outs(%cache : tensor<4xf32>) {
  ^bb0(%new: f32, %old: f32):
    tm_tensor.yield %new : f32
  } -> tensor<4xf32>
  %negated = arith.negf %gathered : tensor<1xf32>
  return %negated, %scattered : tensor<1xf32>, tensor<4xf32>
}

// -----

// Left alone: a value read before the write and used only by the write (it
// is computed in the write's dispatch, or before it), or after it only by
// the return (computed where its op is: a barrier there would make IREE
// store the result with a transfer, which DLPack memory refuses), an
// argument not tied to a result, and a value living in another tied
// argument's buffer (a barrier there would make IREE copy that argument).
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: util.optimization_barrier
// CHECK: return
func.func @left_alone(%row: tensor<1x3xf32>, %plain: tensor<4x3xf32>, %cache: tensor<4x3xf32> {iree.abi.output = 0 : index}, %other: tensor<4x3xf32> {iree.abi.output = 1 : index}) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1x3xf32>) {
  %old = tensor.extract_slice %cache[1, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
  %twice = arith.addf %old, %old : tensor<1x3xf32>
  %written = tensor.insert_slice %twice into %cache[1, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  %plain_row = tensor.extract_slice %plain[0, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
  %plain_written = tensor.insert_slice %plain_row into %plain[1, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  %first = tensor.extract_slice %written[0, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
  %other_written = tensor.insert_slice %first into %other[2, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  %last = tensor.insert_slice %row into %written[3, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  return %last, %other_written, %plain_written, %first : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1x3xf32>
}
