// RUN: purity-opt %s --purity-isolate-results --split-input-file --allow-unregistered-dialect | filecheck %s

// A value returned and also scattered into (index_put_ on a tensor that CSE
// merged with another output): the returned value goes through a barrier, the
// scatter keeps the original value as its destination.
// CHECK-LABEL: func.func @returned_and_scattered(
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: %[[SCATTERED:.*]] = tm_tensor.scatter {{.*}} outs(%[[SUM]] : tensor<2x2xf32>)
// CHECK: %[[KEPT:.*]] = "util.optimization_barrier"(%[[SUM]]) : (tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: return %[[SCATTERED]], %[[KEPT]] : tensor<2x2xf32>, tensor<2x2xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @returned_and_scattered(%x: tensor<2x2xf32>, %updates: tensor<1x1x2xf32>, %indices: tensor<1x1xi64>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %empty = tensor.empty() : tensor<2x2xf32>
  %sum = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%empty : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %doubled = arith.addf %in, %in : f32
    linalg.yield %doubled : f32
  } -> tensor<2x2xf32>
  %scattered = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<1x1x2xf32>, tensor<1x1xi64>) outs(%sum : tensor<2x2xf32>) {
  ^bb0(%new: f32, %old: f32):
    tm_tensor.yield %new : f32
  } -> tensor<2x2xf32>
  return %scattered, %sum : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// A row written into a returned value (tensor.insert_slice), the same value
// returned twice: one barrier serves both results.
// CHECK-LABEL: func.func @returned_twice_and_written(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32>, %[[ROW:.*]]: tensor<1x3xf32>)
// CHECK: %[[DOUBLED:.*]] = arith.addf %[[X]], %[[X]]
// CHECK: %[[WRITTEN:.*]] = tensor.insert_slice %[[ROW]] into %[[DOUBLED]]
// CHECK: %[[KEPT:.*]] = "util.optimization_barrier"(%[[DOUBLED]])
// CHECK-NOT: util.optimization_barrier
// CHECK: return %[[WRITTEN]], %[[KEPT]], %[[KEPT]]
func.func @returned_twice_and_written(%x: tensor<4x3xf32>, %row: tensor<1x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %doubled = arith.addf %x, %x : tensor<4x3xf32>
  %written = tensor.insert_slice %row into %doubled[0, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  return %written, %doubled, %doubled : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Nothing to do: a result used only by the return, an argument returned as
// it is, and a result tied to its argument's buffer (iree.abi.output) even
// though it is read again: a barrier there would cost a copy into the
// argument.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: util.optimization_barrier
// CHECK: return
func.func @left_alone(%cache: tensor<4x3xf32> {iree.abi.output = 2 : index}, %row: tensor<1x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %written = tensor.insert_slice %row into %cache[1, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  %doubled = arith.addf %written, %written : tensor<4x3xf32>
  return %doubled, %cache, %written : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Idempotent: a value already behind a barrier is not wrapped again.
// CHECK-LABEL: func.func @already_isolated(
// CHECK-COUNT-1: util.optimization_barrier
// CHECK-NOT: util.optimization_barrier
func.func @already_isolated(%x: tensor<3xf32>, %row: tensor<1xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %doubled = arith.addf %x, %x : tensor<3xf32>
  %written = tensor.insert_slice %row into %doubled[0] [1] [1] : tensor<1xf32> into tensor<3xf32>
  %kept = "util.optimization_barrier"(%doubled) : (tensor<3xf32>) -> tensor<3xf32>
  return %written, %kept : tensor<3xf32>, tensor<3xf32>
}

// -----

// A value read through a map that is not a projected permutation (unfold's
// windows with gaps: rows 0 and 2 of 3), which has other uses, is read there
// through a barrier (IREE fused its producer into that consumer and computed
// only the rows the consumer reads, for every use).
// CHECK-LABEL: func.func @read_in_windows_with_gaps(
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<3x2xf32>)
// CHECK: %[[WHOLE:.*]] = "util.optimization_barrier"(%[[SUM]]) : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], {{.*}} ins(%[[WHOLE]] : tensor<3x2xf32>)
// CHECK: return %{{.*}}, %[[SUM]]
#windows = affine_map<(d0, d1, d2) -> (d2 + d0 * 2, d1)>
#identity3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#identity2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @read_in_windows_with_gaps(%x: tensor<3x2xf32>, %out: tensor<3x2xf32> {iree.abi.output = 1 : index}) -> (tensor<2x2x1xf32>, tensor<3x2xf32>) {
  %empty = tensor.empty() : tensor<3x2xf32>
  %sum = linalg.generic {indexing_maps = [#identity2, #identity2, #identity2], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<3x2xf32>, tensor<3x2xf32>) outs(%empty : tensor<3x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x2xf32>
  %windows_empty = tensor.empty() : tensor<2x2x1xf32>
  %windows = linalg.generic {indexing_maps = [#windows, #identity3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : tensor<3x2xf32>) outs(%windows_empty : tensor<2x2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x2x1xf32>
  return %windows, %sum : tensor<2x2x1xf32>, tensor<3x2xf32>
}

// -----

// A value read through a projected permutation (a broadcast), or read only
// there, is left alone by that rule.
// CHECK-LABEL: func.func @broadcast_read_left_alone(
// CHECK-NOT: util.optimization_barrier
#row = affine_map<(d0, d1) -> (d1)>
#matrix = affine_map<(d0, d1) -> (d0, d1)>
func.func @broadcast_read_left_alone(%v: tensor<2xf32>, %m: tensor<3x2xf32> {iree.abi.output = 1 : index}) -> (tensor<3x2xf32>, tensor<2xf32>) {
  %empty = tensor.empty() : tensor<3x2xf32>
  %spread = linalg.generic {indexing_maps = [#row, #matrix], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<2xf32>) outs(%empty : tensor<3x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<3x2xf32>
  return %spread, %v : tensor<3x2xf32>, tensor<2xf32>
}

// -----

// Also when the value read in windows is a reshape of a computed value, and
// whatever its other uses; an argument read that way is left alone (it is
// whole already).
// CHECK-LABEL: func.func @reshaped_value_read_in_windows(
// CHECK: %[[FLAT:.*]] = linalg.generic
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[FLAT]]
// CHECK: %[[WHOLE:.*]] = "util.optimization_barrier"(%[[ROWS]])
// CHECK: linalg.generic {{.*}} ins(%[[WHOLE]] : tensor<3x2xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<3x2xf32>)
// CHECK-NOT: util.optimization_barrier
// CHECK: return
#windows_r = affine_map<(d0, d1, d2) -> (d2 + d0 * 2, d1)>
#identity3_r = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#identity1_r = affine_map<(d0) -> (d0)>
func.func @reshaped_value_read_in_windows(%x: tensor<3x2xf32>, %flat_in: tensor<6xf32>) -> (tensor<2x2x1xf32>, tensor<2x2x1xf32>) {
  %empty = tensor.empty() : tensor<6xf32>
  %flat = linalg.generic {indexing_maps = [#identity1_r, #identity1_r], iterator_types = ["parallel"]} ins(%flat_in : tensor<6xf32>) outs(%empty : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<6xf32>
  %rows = tensor.expand_shape %flat [[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
  %windows_empty = tensor.empty() : tensor<2x2x1xf32>
  %windows = linalg.generic {indexing_maps = [#windows_r, #identity3_r], iterator_types = ["parallel", "parallel", "parallel"]} ins(%rows : tensor<3x2xf32>) outs(%windows_empty : tensor<2x2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x2x1xf32>
  %argument_windows = linalg.generic {indexing_maps = [#windows_r, #identity3_r], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<3x2xf32>) outs(%windows_empty : tensor<2x2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x2x1xf32>
  return %windows, %argument_windows : tensor<2x2x1xf32>, tensor<2x2x1xf32>
}
