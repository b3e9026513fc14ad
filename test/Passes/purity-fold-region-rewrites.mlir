// RUN: purity-opt %s --purity-fold-region-rewrites --split-input-file | filecheck %s

// `cache[pos].mul_(a).sub_(b)` functionalized: the row read back after the
// first write is the value written, and the second write replaces the
// first, which goes.
// CHECK-LABEL: func.func @row_updated_twice(
// CHECK-SAME: %[[CACHE:[^:]*]]: !torch.vtensor<[4,3],f32>, %[[A:[^:]*]]: !torch.vtensor<[3],f32>, %[[POS:[^:]*]]: !torch.int)
// CHECK: %[[ROW:.*]] = torch.aten.select.int %[[CACHE]], %{{.*}}, %[[POS]]
// CHECK: %[[SCALED:.*]] = torch.aten.mul.Tensor %[[ROW]], %[[A]]
// CHECK: %[[SHIFTED:.*]] = torch.aten.sub.Tensor %[[SCALED]], %[[A]]
// CHECK-NOT: torch.aten.select.int
// CHECK: %[[WRITTEN:.*]] = torch.aten.select_scatter %[[CACHE]], %[[SHIFTED]], %{{.*}}, %[[POS]]
// CHECK-NOT: torch.aten.select_scatter
// CHECK: return %[[SHIFTED]], %[[WRITTEN]]
func.func @row_updated_twice(%cache: !torch.vtensor<[4,3],f32>, %a: !torch.vtensor<[3],f32>, %pos: !torch.int) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[4,3],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %row = torch.aten.select.int %cache, %int0, %pos : !torch.vtensor<[4,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
  %scaled = torch.aten.mul.Tensor %row, %a : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %w1 = torch.aten.select_scatter %cache, %scaled, %int0, %pos : !torch.vtensor<[4,3],f32>, !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  %again = torch.aten.select.int %w1, %int0, %pos : !torch.vtensor<[4,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
  %shifted = torch.aten.sub.Tensor %again, %a, %int1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.int -> !torch.vtensor<[3],f32>
  %w2 = torch.aten.select_scatter %w1, %shifted, %int0, %pos : !torch.vtensor<[4,3],f32>, !torch.vtensor<[3],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  %last = torch.aten.select.int %w2, %int0, %pos : !torch.vtensor<[4,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
  return %last, %w2 : !torch.vtensor<[3],f32>, !torch.vtensor<[4,3],f32>
}

// -----

// Slices with equal constant bounds (distinct constant ops) fold; the first
// write stays while something else reads it.
// CHECK-LABEL: func.func @slice_with_equal_constants(
// CHECK-SAME: %[[X:[^:]*]]: !torch.vtensor<[6,3],f32>, %[[S:[^:]*]]: !torch.vtensor<[2,3],f32>, %[[T:[^:]*]]: !torch.vtensor<[2,3],f32>)
// CHECK: %[[FIRST:.*]] = torch.aten.slice_scatter %[[X]], %[[S]]
// CHECK: %[[SECOND:.*]] = torch.aten.slice_scatter %[[X]], %[[T]]
// CHECK: return %[[S]], %[[FIRST]], %[[SECOND]]
func.func @slice_with_equal_constants(%x: !torch.vtensor<[6,3],f32>, %s: !torch.vtensor<[2,3],f32>, %t: !torch.vtensor<[2,3],f32>) -> (!torch.vtensor<[2,3],f32>, !torch.vtensor<[6,3],f32>, !torch.vtensor<[6,3],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int1_0 = torch.constant.int 1
  %int3_0 = torch.constant.int 3
  %first = torch.aten.slice_scatter %x, %s, %int0, %int1, %int3, %int1 : !torch.vtensor<[6,3],f32>, !torch.vtensor<[2,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[6,3],f32>
  %read = torch.aten.slice.Tensor %first, %int0, %int1_0, %int3_0, %int1 : !torch.vtensor<[6,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %second = torch.aten.slice_scatter %first, %t, %int0, %int1_0, %int3_0, %int1_0 : !torch.vtensor<[6,3],f32>, !torch.vtensor<[2,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[6,3],f32>
  return %read, %first, %second : !torch.vtensor<[2,3],f32>, !torch.vtensor<[6,3],f32>, !torch.vtensor<[6,3],f32>
}

// -----

// Left alone: another row (a different position value), another dim, and a
// slice read of a row write.
// CHECK-LABEL: func.func @other_regions(
// CHECK: torch.aten.select_scatter
// CHECK-COUNT-2: torch.aten.select.int
// CHECK-COUNT-1: torch.aten.slice.Tensor
// CHECK: return
func.func @other_regions(%x: !torch.vtensor<[4,4],f32>, %row: !torch.vtensor<[4],f32>, %p: !torch.int, %q: !torch.int) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[2,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %w = torch.aten.select_scatter %x, %row, %int0, %p : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,4],f32>
  %other_row = torch.aten.select.int %w, %int0, %q : !torch.vtensor<[4,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %column = torch.aten.select.int %w, %int1, %p : !torch.vtensor<[4,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  %rows = torch.aten.slice.Tensor %w, %int0, %int0, %int2, %int1 : !torch.vtensor<[4,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],f32>
  return %other_row, %column, %rows : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[2,4],f32>
}
