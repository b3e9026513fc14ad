// RUN: purity-opt %s --purity-elide-input-view-results --split-input-file --allow-unregistered-dialect | filecheck %s

// A KV cache written at a position and returned (`cache.index_copy_(0, pos,
// row); return cache`): the returned view gets an empty tensor, and the
// scatter that only it used is erased; the tied result keeps its own.
// CHECK-LABEL: func.func @returned_cache(
// CHECK-SAME: -> (tensor<0xf32> {purity.aliases_input = 0 : i64{{.*}}}, tensor<8x4xf32> {purity.written_input = 0 : i64})
// CHECK-COUNT-1: tm_tensor.scatter
// CHECK-NOT: tm_tensor.scatter
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<0xf32>
// CHECK: return %[[EMPTY]], %{{.*}} : tensor<0xf32>, tensor<8x4xf32>
func.func @returned_cache(%cache: tensor<8x4xf32> {iree.abi.output = 1 : index}, %row: tensor<1x1x4xf32>, %pos: tensor<1x1xi64>) -> (tensor<8x4xf32> {purity.aliases_input = 0 : i64, purity.view_sizes = array<i64: 8, 4>}, tensor<8x4xf32> {purity.written_input = 0 : i64}) {
  %unguarded = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%row, %pos : tensor<1x1x4xf32>, tensor<1x1xi64>) outs(%cache : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    tm_tensor.yield %new : f32
  } -> tensor<8x4xf32>
  %guarded = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%row, %pos : tensor<1x1x4xf32>, tensor<1x1xi64>) outs(%cache : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    tm_tensor.yield %new : f32
  } -> tensor<8x4xf32>
  return %unguarded, %guarded : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A pointwise in-place update returned (`x.mul_(2); return x`): the value is
// also the tied result, so it stays; only the view result changes. The
// element type is kept (i1 here).
// CHECK-LABEL: func.func @returned_update(
// CHECK: %[[NEW:.*]] = arith.xori
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<0xi1>
// CHECK: return %[[EMPTY]], %[[NEW]] : tensor<0xi1>, tensor<4xi1>
func.func @returned_update(%x: tensor<4xi1> {iree.abi.output = 1 : index}, %y: tensor<4xi1>) -> (tensor<4xi1> {purity.aliases_input = 0 : i64, purity.view_sizes = array<i64: 4>}, tensor<4xi1> {purity.written_input = 0 : i64}) {
  %new = arith.xori %x, %y : tensor<4xi1>
  return %new, %new : tensor<4xi1>, tensor<4xi1>
}

// -----

// A view of an input that is only read (`return x[1:]`), next to another
// output: the slice goes, the other output is left as it is.
// CHECK-LABEL: func.func @read_view(
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<0xf32>
// CHECK: return %[[EMPTY]], %{{.*}} : tensor<0xf32>, tensor<4xf32>
func.func @read_view(%x: tensor<4xf32>) -> (tensor<3xf32> {purity.aliases_input = 0 : i64, purity.view_sizes = array<i64: 3>}, tensor<4xf32>) {
  %tail = tensor.extract_slice %x[1] [3] [1] : tensor<4xf32> to tensor<3xf32>
  %doubled = arith.addf %x, %x : tensor<4xf32>
  return %tail, %doubled : tensor<3xf32>, tensor<4xf32>
}

// -----

// Nothing to do without a view result; a call whose result goes unused is
// never erased.
// CHECK-LABEL: func.func @no_view(
// CHECK: return %{{.*}} : tensor<4xf32>
func.func @no_view(%x: tensor<4xf32>) -> tensor<4xf32> {
  %doubled = arith.addf %x, %x : tensor<4xf32>
  return %doubled : tensor<4xf32>
}

// CHECK-LABEL: func.func @kept_call(
// CHECK: call @no_view
// CHECK: return %{{.*}} : tensor<0xf32>
func.func @kept_call(%x: tensor<4xf32>) -> (tensor<4xf32> {purity.aliases_input = 0 : i64, purity.view_sizes = array<i64: 4>}) {
  %called = func.call @no_view(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %called : tensor<4xf32>
}

// -----

// Two view results where one's producer feeds the other's, each used twice
// (`y = x.add_(1); z = y.t().add_(1); return z, y` on inputs sharing a
// storage): both chains are erased once, and none is left marked.
// CHECK-LABEL: func.func @views_sharing_producers(
// CHECK-NOT: arith.addf
// CHECK-NOT: purity.elide_if_unused
// CHECK: %[[EMPTY0:.*]] = tensor.empty() : tensor<0xf32>
// CHECK: %[[EMPTY1:.*]] = tensor.empty() : tensor<0xf32>
// CHECK: return %[[EMPTY0]], %[[EMPTY1]], %[[KEPT:.*]] : tensor<0xf32>, tensor<0xf32>, tensor<4xf32>
func.func @views_sharing_producers(%x: tensor<4xf32>, %k: tensor<4xf32>) -> (tensor<4xf32> {purity.aliases_input = 0 : i64, purity.view_sizes = array<i64: 4>}, tensor<4xf32> {purity.aliases_input = 1 : i64, purity.view_sizes = array<i64: 4>}, tensor<4xf32>) {
  %first = arith.addf %x, %x : tensor<4xf32>
  %second = arith.addf %first, %first : tensor<4xf32>
  %kept = arith.mulf %k, %k : tensor<4xf32>
  return %second, %first, %kept : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
