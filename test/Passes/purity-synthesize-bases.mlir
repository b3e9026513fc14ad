// RUN: purity-opt %s --purity-synthesize-bases --split-input-file | filecheck %s
// RUN: purity-opt %s --purity-synthesize-bases --purity-functionalize --split-input-file | filecheck %s --check-prefix=FUNC

// A tensor and its second row (storage group 0, overlapping), the row
// written: one synthetic base over the storage, both inputs regenerated as
// views of it (contiguous members: a slice of the base, reshaped).
// CHECK-LABEL: func.func @row_and_whole(
// CHECK-SAME: %[[ROW:[^:]*]]: !torch.tensor<[4],f32> {{{[^}]*}}purity.storage_offset = 4 : i64
// CHECK-SAME: %[[WHOLE:[^:]*]]: !torch.tensor<[2,4],f32> {{{[^}]*}}purity.storage_offset = 0 : i64
// CHECK-SAME: %[[BASE:[^:]*]]: !torch.tensor<[8],f32> {purity.input = "synthetic-base:0,1", purity.sizes = array<i64: 8>, purity.storage_offset = 0 : i64, purity.strides = array<i64: 1>, purity.synthetic_base_of = array<i64: 0, 1>}
// CHECK: %[[RS:.*]] = torch.aten.slice.Tensor %[[BASE]], %int0{{[_0-9]*}}, %int4{{[_0-9]*}}, %int8{{[_0-9]*}}, %int1{{[_0-9]*}} : !torch.tensor<[8],f32>, {{.*}} -> !torch.tensor<[4],f32>
// CHECK: %[[R:.*]] = torch.aten.view %[[RS]], %{{.*}} {purity.regenerates_input = 0 : i64} : {{.*}} -> !torch.tensor<[4],f32>
// CHECK: %[[WS:.*]] = torch.aten.slice.Tensor %[[BASE]], %int0{{[_0-9]*}}, %int0{{[_0-9]*}}, %int8{{[_0-9]*}}, %int1{{[_0-9]*}}
// CHECK: %[[W:.*]] = torch.aten.view %[[WS]], %{{.*}} {purity.regenerates_input = 1 : i64} : {{.*}} -> !torch.tensor<[2,4],f32>
// CHECK: torch.aten.add_.Scalar %[[R]]
// CHECK: torch.aten.sum %[[W]]
// A write through the row is seen through the whole tensor, and the base is
// overwritten once.
// FUNC-LABEL: func.func @row_and_whole(
// FUNC: %[[B0:.*]] = torch.copy.to_vtensor %arg2
// FUNC: %[[ROW:.*]] = torch.aten.slice.Tensor %[[B0]]
// FUNC: %[[NEWROW:.*]] = torch.aten.add.Scalar
// FUNC: %[[B1:.*]] = torch.aten.slice_scatter %[[B0]]
// FUNC: %[[WHOLE:.*]] = torch.aten.slice.Tensor %[[B1]]
// FUNC: torch.aten.sum
// FUNC: torch.overwrite.tensor.contents %[[B1]] overwrites %arg2
// FUNC-NOT: overwrites %arg0
// FUNC-NOT: overwrites %arg1
func.func @row_and_whole(
    %row: !torch.tensor<[4],f32> {purity.input = "input:0", purity.sizes = array<i64: 4>, purity.strides = array<i64: 1>, purity.storage_offset = 4 : i64, purity.storage_group = 0 : i64},
    %whole: !torch.tensor<[2,4],f32> {purity.input = "input:1", purity.sizes = array<i64: 2, 4>, purity.strides = array<i64: 4, 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64}) -> !torch.vtensor<[],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.add_.Scalar %row, %int1, %int1 : !torch.tensor<[4],f32>, !torch.int, !torch.int -> !torch.tensor<[4],f32>
  %1 = torch.aten.sum %whole, %none : !torch.tensor<[2,4],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %1 : !torch.vtensor<[],f32>
}

// -----

// Disjoint halves of one storage, both written: no synthetic base; each is
// overwritten on its own.
// FUNC-LABEL: func.func @disjoint_halves(
// FUNC: overwrites %arg0
// FUNC: overwrites %arg1
// CHECK-LABEL: func.func @disjoint_halves(
// CHECK-NOT: synthetic
// CHECK-NOT: torch.aten.as_strided
// CHECK: torch.aten.mul_.Scalar %arg0
// CHECK: torch.aten.mul_.Scalar %arg1
func.func @disjoint_halves(
    %a: !torch.tensor<[2],f32> {purity.sizes = array<i64: 2>, purity.strides = array<i64: 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64},
    %b: !torch.tensor<[2],f32> {purity.sizes = array<i64: 2>, purity.strides = array<i64: 1>, purity.storage_offset = 2 : i64, purity.storage_group = 0 : i64}) -> !torch.none {
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %none = torch.constant.none
  %0 = torch.aten.mul_.Scalar %a, %int3 : !torch.tensor<[2],f32>, !torch.int -> !torch.tensor<[2],f32>
  %1 = torch.aten.mul_.Scalar %b, %int2 : !torch.tensor<[2],f32>, !torch.int -> !torch.tensor<[2],f32>
  return %none : !torch.none
}

// -----

// Interleaved columns of a 2x4 storage: disjoint, no synthetic base.
// CHECK-LABEL: func.func @interleaved_columns(
// CHECK-NOT: synthetic
func.func @interleaved_columns(
    %even: !torch.tensor<[2,2],f32> {purity.sizes = array<i64: 2, 2>, purity.strides = array<i64: 4, 2>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64},
    %odd: !torch.tensor<[2,2],f32> {purity.sizes = array<i64: 2, 2>, purity.strides = array<i64: 4, 2>, purity.storage_offset = 1 : i64, purity.storage_group = 0 : i64}) -> !torch.none {
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %0 = torch.aten.mul_.Scalar %even, %int2 : !torch.tensor<[2,2],f32>, !torch.int -> !torch.tensor<[2,2],f32>
  return %none : !torch.none
}

// -----

// Overlapping but only read: no synthetic base.
// CHECK-LABEL: func.func @read_only_overlap(
// CHECK-NOT: synthetic
func.func @read_only_overlap(
    %a: !torch.tensor<[3],f32> {purity.sizes = array<i64: 3>, purity.strides = array<i64: 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64},
    %b: !torch.tensor<[3],f32> {purity.sizes = array<i64: 3>, purity.strides = array<i64: 1>, purity.storage_offset = 1 : i64, purity.storage_group = 0 : i64}) -> !torch.vtensor<[3],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.tensor<[3],f32>, !torch.tensor<[3],f32>, !torch.int -> !torch.vtensor<[3],f32>
  return %0 : !torch.vtensor<[3],f32>
}

// -----

// A tensor and its transpose, one written: the transposed member is a
// slice of the base, reshaped, then permuted back (no as_strided).
// CHECK-LABEL: func.func @tensor_and_transpose(
// CHECK: torch.aten.slice.Tensor %arg2, {{.*}} -> !torch.tensor<[4],f32>
// CHECK: torch.aten.view {{.*}} {purity.regenerates_input = 0 : i64}
// CHECK: %[[S:.*]] = torch.aten.slice.Tensor %arg2, {{.*}} -> !torch.tensor<[4],f32>
// CHECK: %[[B:.*]] = torch.aten.view %[[S]], {{.*}} -> !torch.tensor<[2,2],f32>
// CHECK: torch.aten.permute %[[B]], {{.*}} {purity.regenerates_input = 1 : i64} : !torch.tensor<[2,2],f32>, !torch.list<int> -> !torch.tensor<[2,2],f32>
// CHECK-NOT: torch.aten.as_strided


func.func @tensor_and_transpose(
    %a: !torch.tensor<[2,2],f32> {purity.sizes = array<i64: 2, 2>, purity.strides = array<i64: 2, 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64},
    %t: !torch.tensor<[2,2],f32> {purity.sizes = array<i64: 2, 2>, purity.strides = array<i64: 1, 2>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64}) -> !torch.vtensor<[2,2],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add_.Scalar %a, %int1, %int1 : !torch.tensor<[2,2],f32>, !torch.int, !torch.int -> !torch.tensor<[2,2],f32>
  %1 = torch.aten.mul.Scalar %t, %int1 : !torch.tensor<[2,2],f32>, !torch.int -> !torch.vtensor<[2,2],f32>
  return %1 : !torch.vtensor<[2,2],f32>
}

// -----

// Interleaved overlapping rows (stride 1 over 2 elements, offsets 0 and 1)
// are not a permutation of a contiguous block: as_strided.
// CHECK-LABEL: func.func @overlapping_windows(
// CHECK: torch.aten.as_strided %arg2, {{.*}} {purity.regenerates_input = 1 : i64}
func.func @overlapping_windows(
    %a: !torch.tensor<[2,2],f32> {purity.sizes = array<i64: 2, 2>, purity.strides = array<i64: 2, 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64},
    %w: !torch.tensor<[2,2],f32> {purity.sizes = array<i64: 2, 2>, purity.strides = array<i64: 1, 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64}) -> !torch.vtensor<[2,2],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add_.Scalar %a, %int1, %int1 : !torch.tensor<[2,2],f32>, !torch.int, !torch.int -> !torch.tensor<[2,2],f32>
  %1 = torch.aten.mul.Scalar %w, %int1 : !torch.tensor<[2,2],f32>, !torch.int -> !torch.vtensor<[2,2],f32>
  return %1 : !torch.vtensor<[2,2],f32>
}

// -----

// `b[:1]`, `b[1:]` and an as_strided view of `b[1:]` (storage offsets 0, 4
// and 4 of a 2x4 storage): the last two overlap and are written, so they get
// a base over elements [0, 8). `b[:1]` overlaps neither, but lies inside the
// base, which is written back whole: it joins the base, so its own write is
// seen through the base instead of being undone by the base's write-back.
// CHECK-LABEL: func.func @member_inside_base_span(
// CHECK-SAME: %[[BASE:[^:]*]]: !torch.tensor<[8],f32> {purity.input = "synthetic-base:0,1,2", {{.*}}purity.synthetic_base_of = array<i64: 0, 1, 2>}
// CHECK-DAG: torch.aten.permute {{.*}} {purity.regenerates_input = 0 : i64}
// CHECK-DAG: torch.aten.view {{.*}} {purity.regenerates_input = 1 : i64}
// CHECK-DAG: torch.aten.view {{.*}} {purity.regenerates_input = 2 : i64}
// FUNC-LABEL: func.func @member_inside_base_span(
// FUNC-NOT: overwrites %arg0
// FUNC-NOT: overwrites %arg1
// FUNC-NOT: overwrites %arg2
// FUNC: torch.overwrite.tensor.contents {{.*}} overwrites %arg3
// FUNC-NOT: overwrites
// FUNC: return
func.func @member_inside_base_span(
    %v: !torch.tensor<[2,2],f32> {purity.sizes = array<i64: 2, 2>, purity.strides = array<i64: 1, 2>, purity.storage_offset = 4 : i64, purity.storage_group = 0 : i64},
    %second: !torch.tensor<[1,4],f32> {purity.sizes = array<i64: 1, 4>, purity.strides = array<i64: 4, 1>, purity.storage_offset = 4 : i64, purity.storage_group = 0 : i64},
    %first: !torch.tensor<[1,4],f32> {purity.sizes = array<i64: 1, 4>, purity.strides = array<i64: 4, 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64}) -> !torch.vtensor<[2,2],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add_.Scalar %second, %int1, %int1 : !torch.tensor<[1,4],f32>, !torch.int, !torch.int -> !torch.tensor<[1,4],f32>
  %1 = torch.aten.add_.Scalar %first, %int1, %int1 : !torch.tensor<[1,4],f32>, !torch.int, !torch.int -> !torch.tensor<[1,4],f32>
  %2 = torch.aten.mul.Scalar %v, %int1 : !torch.tensor<[2,2],f32>, !torch.int -> !torch.vtensor<[2,2],f32>
  return %2 : !torch.vtensor<[2,2],f32>
}
