// RUN: purity-opt %s --purity-functionalize --split-input-file | filecheck %s

// An in-place op on a fresh tensor becomes its value-semantic variant.
// CHECK-LABEL: func.func @in_place_on_fresh_tensor(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[4],f32>, %[[Y:.*]]: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
// CHECK: %[[Z:.*]] = torch.aten.mul.Scalar %[[X]], %{{.*}} : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
// CHECK: %[[SUM:.*]] = torch.aten.add.Tensor %[[Z]], %[[Y]], %{{.*}} -> !torch.vtensor<[4],f32>
// CHECK-NOT: overwrite
// CHECK: return %[[SUM]] : !torch.vtensor<[4],f32>
func.func @in_place_on_fresh_tensor(%x: !torch.vtensor<[4],f32>, %y: !torch.vtensor<[4],f32>) -> !torch.tensor<[4],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %z = torch.aten.mul.Scalar %x, %int2 : !torch.vtensor<[4],f32>, !torch.int -> !torch.tensor<[4],f32>
  %yt = torch.copy.to_tensor %y : !torch.tensor<[4],f32>
  %r = torch.aten.add_.Tensor %z, %yt, %int1 : !torch.tensor<[4],f32>, !torch.tensor<[4],f32>, !torch.int -> !torch.tensor<[4],f32>
  return %z : !torch.tensor<[4],f32>
}

// -----

// A mutated argument stays !torch.tensor and gets exactly one overwrite with
// its final value; an argument that is only read becomes !torch.vtensor.
// CHECK-LABEL: func.func @mutated_argument(
// CHECK-SAME: %[[A:.*]]: !torch.tensor<[3],f32>, %[[B:.*]]: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32>
// CHECK: %[[A0:.*]] = torch.copy.to_vtensor %[[A]] : !torch.vtensor<[3],f32>
// CHECK: %[[A1:.*]] = torch.aten.mul.Scalar %[[A0]], %{{.*}}
// CHECK: %[[A2:.*]] = torch.aten.add.Tensor %[[A1]], %[[B]], %{{.*}}
// CHECK: %[[OUT:.*]] = torch.aten.mul.Tensor %[[A2]], %[[B]]
// CHECK: torch.overwrite.tensor.contents %[[A2]] overwrites %[[A]] : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
// CHECK-NOT: torch.overwrite.tensor.contents
// CHECK: return %[[OUT]]
func.func @mutated_argument(%a: !torch.tensor<[3],f32>, %b: !torch.tensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %0 = torch.aten.mul_.Scalar %a, %int2 : !torch.tensor<[3],f32>, !torch.int -> !torch.tensor<[3],f32>
  %1 = torch.aten.add_.Tensor %a, %b, %int1 : !torch.tensor<[3],f32>, !torch.tensor<[3],f32>, !torch.int -> !torch.tensor<[3],f32>
  %2 = torch.aten.mul.Tensor %1, %b : !torch.tensor<[3],f32>, !torch.tensor<[3],f32> -> !torch.vtensor<[3],f32>
  return %2 : !torch.vtensor<[3],f32>
}

// -----

// A write through a chain of views of an argument is scattered back in
// reverse: the inner select, then the outer slice (with its step).
// fill_ computes its value without reading the row: full(sizes, value, dtype).
// CHECK-LABEL: func.func @select_of_strided_slice(
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor %[[X:.*]] : !torch.vtensor<[6,4],f32>
// CHECK: %[[NEWROW:.*]] = torch.aten.full %{{.*}}, %{{.*}}, %int6{{[_0-9]*}}, %{{.*}} -> !torch.vtensor<[4],f32>
// CHECK: %[[S2:.*]] = torch.aten.slice.Tensor %[[X0]], %[[INT0:.*]], %[[INT1:.*]], %[[INT6:.*]], %[[INT2:.*]] : {{.*}} -> !torch.vtensor<[3,4],f32>
// CHECK: %[[NEWS:.*]] = torch.aten.select_scatter %[[S2]], %[[NEWROW]], %[[INT0]], %[[INT1]] : {{.*}} -> !torch.vtensor<[3,4],f32>
// CHECK: %[[NEWX:.*]] = torch.aten.slice_scatter %[[X0]], %[[NEWS]], %[[INT0]], %[[INT1]], %[[INT6]], %[[INT2]] : {{.*}} -> !torch.vtensor<[6,4],f32>
// CHECK: torch.overwrite.tensor.contents %[[NEWX]] overwrites %[[X]]
func.func @select_of_strided_slice(%x: !torch.tensor<[6,4],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int6 = torch.constant.int 6
  %float = torch.constant.float 5.000000e+00
  %none = torch.constant.none
  %s = torch.aten.slice.Tensor %x, %int0, %int1, %int6, %int2 : !torch.tensor<[6,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.tensor<[3,4],f32>
  %row = torch.aten.select.int %s, %int0, %int1 : !torch.tensor<[3,4],f32>, !torch.int, !torch.int -> !torch.tensor<[4],f32>
  %0 = torch.aten.fill_.Scalar %row, %float : !torch.tensor<[4],f32>, !torch.float -> !torch.tensor<[4],f32>
  return %none : !torch.none
}

// -----

// diagonal -> diagonal_scatter.
// CHECK-LABEL: func.func @diagonal_write(
// CHECK: %[[D:.*]] = torch.aten.diagonal %[[X0:.*]], %[[OFF:.*]], %[[D0:.*]], %[[D1:.*]] :
// CHECK: %[[ND:.*]] = torch.aten.add.Scalar %[[D]]
// CHECK: %[[NX:.*]] = torch.aten.diagonal_scatter %[[X0]], %[[ND]], %[[OFF]], %[[D0]], %[[D1]] : {{.*}} -> !torch.vtensor<[3,3],f32>
// CHECK: torch.overwrite.tensor.contents %[[NX]]
func.func @diagonal_write(%x: !torch.tensor<[3,3],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %d = torch.aten.diagonal %x, %int0, %int0, %int1 : !torch.tensor<[3,3],f32>, !torch.int, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  %0 = torch.aten.add_.Scalar %d, %int1, %int1 : !torch.tensor<[3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  return %none : !torch.none
}

// -----

// as_strided -> as_strided_scatter.
// CHECK-LABEL: func.func @as_strided_write(
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor
// CHECK: %[[NV:.*]] = torch.aten.full %{{.*}}, %int0{{[_0-9]*}}, %int6{{[_0-9]*}}, {{.*}} -> !torch.vtensor<[2],f32>
// CHECK: torch.aten.as_strided_scatter %[[X0]], %[[NV]], %[[SIZE:.*]], %[[STRIDE:.*]], %[[OFFSET:.*]] : {{.*}} -> !torch.vtensor<[8],f32>
func.func @as_strided_write(%x: !torch.tensor<[8],f32>) -> !torch.none {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %none = torch.constant.none
  %v = torch.aten.as_strided %x, %size, %stride, %int1 : !torch.tensor<[8],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.tensor<[2],f32>
  %0 = torch.aten.zero_ %v : !torch.tensor<[2],f32> -> !torch.tensor<[2],f32>
  return %none : !torch.none
}

// -----

// view, unsqueeze: written back with a view to the base's sizes.
// permute: written back with the inverse permutation [1, 2, 0] of [2, 0, 1].
// CHECK-LABEL: func.func @reshape_and_permute_writes(
// CHECK: %[[V:.*]] = torch.aten.view %[[X0:.*]], %{{.*}} : {{.*}} -> !torch.vtensor<[6],f32>
// CHECK: %[[NV:.*]] = torch.aten.mul.Scalar %[[V]]
// CHECK: %[[X1:.*]] = torch.aten.view %[[NV]], %[[SHAPE:.*]] : !torch.vtensor<[6],f32>, !torch.list<int> -> !torch.vtensor<[2,3],f32>
// CHECK: %[[P:.*]] = torch.aten.permute %[[Y0:.*]], %{{.*}} : {{.*}} -> !torch.vtensor<[4,2,3],f32>
// CHECK: %[[NP:.*]] = torch.aten.neg %[[P]]
// CHECK: %[[INV:.*]] = torch.prim.ListConstruct %int1{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}} :
// CHECK: %[[Y1:.*]] = torch.aten.permute %[[NP]], %[[INV]] : {{.*}} -> !torch.vtensor<[2,3,4],f32>
// CHECK-DAG: torch.overwrite.tensor.contents %[[X1]] overwrites
// CHECK-DAG: torch.overwrite.tensor.contents %[[Y1]] overwrites
func.func @reshape_and_permute_writes(%x: !torch.tensor<[2,3],f32>, %y: !torch.tensor<[2,3,4],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int6 = torch.constant.int 6
  %none = torch.constant.none
  %shape = torch.prim.ListConstruct %int6 : (!torch.int) -> !torch.list<int>
  %v = torch.aten.view %x, %shape : !torch.tensor<[2,3],f32>, !torch.list<int> -> !torch.tensor<[6],f32>
  %0 = torch.aten.mul_.Scalar %v, %int3 : !torch.tensor<[6],f32>, !torch.int -> !torch.tensor<[6],f32>
  %dims = torch.prim.ListConstruct %int2, %int0, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %p = torch.aten.permute %y, %dims : !torch.tensor<[2,3,4],f32>, !torch.list<int> -> !torch.tensor<[4,2,3],f32>
  %1 = torch.aten.neg_ %p : !torch.tensor<[4,2,3],f32> -> !torch.tensor<[4,2,3],f32>
  return %none : !torch.none
}

// -----

// split: each element is a slice; a write into the second chunk is a
// slice_scatter over rows [2, 4). A view taken before the write sees it.
// CHECK-LABEL: func.func @split_write_seen_by_earlier_view(
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor
// CHECK: %[[NC:.*]] = torch.aten.full {{.*}} -> !torch.vtensor<[2,3],f32>
// CHECK: %[[NX:.*]] = torch.aten.slice_scatter %[[X0]], %[[NC]], %{{.*}}, %int2{{[_0-9]*}}, %int4{{[_0-9]*}}, %{{.*}} : {{.*}} -> !torch.vtensor<[4,3],f32>
// CHECK: %[[T:.*]] = torch.aten.t %[[NX]]
// CHECK: %[[R:.*]] = torch.aten.sum %[[T]]
// CHECK: return %[[R]]
func.func @split_write_seen_by_earlier_view(%x: !torch.tensor<[4,3],f32>) -> !torch.vtensor<[],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %t = torch.aten.t %x : !torch.tensor<[4,3],f32> -> !torch.tensor<[3,4],f32>
  %parts = torch.aten.split.Tensor %x, %int2, %int0 : !torch.tensor<[4,3],f32>, !torch.int, !torch.int -> !torch.list<tensor>
  %a, %b = torch.prim.ListUnpack %parts : !torch.list<tensor> -> !torch.tensor<[2,3],f32>, !torch.tensor<[2,3],f32>
  %0 = torch.aten.zero_ %b : !torch.tensor<[2,3],f32> -> !torch.tensor<[2,3],f32>
  %s = torch.aten.sum %t, %none : !torch.tensor<[3,4],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %s : !torch.vtensor<[],f32>
}

// -----

// A value computed before a mutation does not see it.
// CHECK-LABEL: func.func @snapshot_before_write(
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor %[[X:.*]] :
// CHECK: %[[NX:.*]] = torch.aten.add.Scalar %[[X0]]
// CHECK: return %[[X0]], %[[NX]]
func.func @snapshot_before_write(%x: !torch.tensor<[2],f32>) -> (!torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) {
  %int1 = torch.constant.int 1
  %before = torch.copy.to_vtensor %x : !torch.vtensor<[2],f32>
  %0 = torch.aten.add_.Scalar %x, %int1, %int1 : !torch.tensor<[2],f32>, !torch.int, !torch.int -> !torch.tensor<[2],f32>
  %after = torch.copy.to_vtensor %x : !torch.vtensor<[2],f32>
  return %before, %after : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>
}

// -----

// unbind elements are selects; copy_ writes its source converted to the
// destination's dtype and broadcast to its sizes, without reading the
// destination (so the written tensor is only the base of the scatter).
// CHECK-LABEL: func.func @unbind_copy(
// CHECK-SAME: %[[X:.*]]: !torch.tensor<[2,3],f32>, %[[SRC:.*]]: !torch.vtensor<[],si64>)
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor %[[X]]
// CHECK: %[[F:.*]] = torch.aten.to.dtype %[[SRC]], %int6{{.*}} : !torch.vtensor<[],si64>, {{.*}} -> !torch.vtensor<[],f32>
// CHECK: %[[NEW:.*]] = torch.aten.broadcast_to %[[F]], %{{.*}} : !torch.vtensor<[],f32>, !torch.list<int> -> !torch.vtensor<[3],f32>
// CHECK-NOT: torch.aten.select.int
// CHECK: torch.aten.select_scatter %[[X0]], %[[NEW]], %{{.*}}, %int1
func.func @unbind_copy(%x: !torch.tensor<[2,3],f32>, %src: !torch.vtensor<[],si64>) -> !torch.none {
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %none = torch.constant.none
  %rows = torch.aten.unbind.int %x, %int0 : !torch.tensor<[2,3],f32>, !torch.int -> !torch.list<tensor>
  %r0, %r1 = torch.prim.ListUnpack %rows : !torch.list<tensor> -> !torch.tensor<[3],f32>, !torch.tensor<[3],f32>
  %srct = torch.copy.to_tensor %src : !torch.tensor<[],si64>
  %0 = torch.aten.copy_ %r1, %srct, %false : !torch.tensor<[3],f32>, !torch.tensor<[],si64>, !torch.bool -> !torch.tensor<[3],f32>
  return %none : !torch.none
}

// -----

// A metadata mutation of an argument changes how it is seen, not its data:
// no overwrite, and its new sizes and strides are recorded for the runtime.
// A later write through the transposed tensor is scattered back through t.
// CHECK-LABEL: func.func @metadata_then_data_mutation(
// CHECK-SAME: %[[X:.*]]: !torch.tensor<[2,3],f32> {purity.new_sizes = array<i64: 3, 2>, purity.new_storage_offset = 0 : i64, purity.new_strides = array<i64: 1, 3>}
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor %[[X]]
// CHECK: %[[T:.*]] = torch.aten.t %[[X0]] : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[3,2],f32>
// CHECK: %[[ROW:.*]] = torch.aten.select.int %[[T]]
// CHECK: %[[NROW:.*]] = torch.aten.mul.Scalar %[[ROW]]
// CHECK: %[[NT:.*]] = torch.aten.select_scatter %{{.*}}, %[[NROW]]
// CHECK: %[[NX:.*]] = torch.aten.t %[[NT]] : !torch.vtensor<[3,2],f32> -> !torch.vtensor<[2,3],f32>
// CHECK: torch.overwrite.tensor.contents %[[NX]] overwrites %[[X]]
func.func @metadata_then_data_mutation(%x: !torch.tensor<[2,3],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %t = torch.operator "torch.aten.t_"(%x) : (!torch.tensor<[2,3],f32>) -> !torch.tensor<[3,2],f32>
  %row = torch.aten.select.int %t, %int0, %int0 : !torch.tensor<[3,2],f32>, !torch.int, !torch.int -> !torch.tensor<[2],f32>
  %0 = torch.aten.mul_.Scalar %row, %int2 : !torch.tensor<[2],f32>, !torch.int -> !torch.tensor<[2],f32>
  return %none : !torch.none
}

// -----

// An output that is a view of an argument is described so that a runtime can
// return a real view: which argument, and the view's sizes/strides/offset.
// CHECK-LABEL: func.func @output_aliases_input(
// CHECK-SAME: -> (!torch.vtensor<[3],f32> {purity.aliases_input = 0 : i64, purity.view_sizes = array<i64: 3>, purity.view_storage_offset = 3 : i64, purity.view_strides = array<i64: 1>})
// CHECK: %[[ROW:.*]] = torch.aten.select.int %[[X:.*]], %{{.*}}, %{{.*}} : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3],f32>
// CHECK: return %[[ROW]]
func.func @output_aliases_input(%x: !torch.tensor<[2,3],f32>) -> !torch.tensor<[3],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %row = torch.aten.select.int %x, %int0, %int1 : !torch.tensor<[2,3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  return %row : !torch.tensor<[3],f32>
}

// -----

// torch-mlir's own non-value forms: a literal, and an explicit overwrite.
// CHECK-LABEL: func.func @literal_and_overwrite(
// CHECK-SAME: %[[Y:.*]]: !torch.vtensor<[2],f32>)
// CHECK: %[[LIT:.*]] = torch.vtensor.literal(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
// CHECK: %[[SUM:.*]] = torch.aten.add.Tensor %[[Y]], %[[Y]], %{{.*}}
// CHECK: return %[[LIT]], %[[SUM]]
func.func @literal_and_overwrite(%y: !torch.vtensor<[2],f32>) -> (!torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) {
  %int1 = torch.constant.int 1
  %lit = torch.tensor.literal(dense<[1.0, 2.0]> : tensor<2xf32>) : !torch.tensor<[2],f32>
  %before = torch.copy.to_vtensor %lit : !torch.vtensor<[2],f32>
  torch.overwrite.tensor.contents %y overwrites %lit : !torch.vtensor<[2],f32>, !torch.tensor<[2],f32>
  %sum = torch.aten.add.Tensor %lit, %y, %int1 : !torch.tensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.int -> !torch.vtensor<[2],f32>
  return %before, %sum : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>
}

// -----

// Outputs that view one intermediate share an alias group, each with its
// chain and its geometry in the intermediate, which is returned last
// (purity.alias_base): the runtime hands the outputs out as views of it.
// CHECK-LABEL: func.func @outputs_alias_each_other(
// CHECK-SAME: -> (!torch.vtensor<[6],f32> {purity.alias_group = [[G:[0-9]+]] : i64, purity.view_sizes = array<i64: 6>, purity.view_storage_offset = 0 : i64, purity.view_strides = array<i64: 1>},
// CHECK-SAME: !torch.vtensor<[3,2],f32> {purity.alias_group = [[G]] : i64, purity.view_sizes = array<i64: 3, 2>, purity.view_storage_offset = 0 : i64, purity.view_strides = array<i64: 1, 3>},
// CHECK-SAME: !torch.vtensor<[2,3],f32> {purity.alias_base = [[G]] : i64})
// CHECK: %[[Y:.*]] = torch.aten.mul.Scalar
// CHECK: return %{{.*}}, %{{.*}}, %[[Y]]
func.func @outputs_alias_each_other(%x: !torch.vtensor<[2,3],f32>) -> (!torch.tensor<[6],f32>, !torch.tensor<[3,2],f32>) {
  %int2 = torch.constant.int 2
  %int6 = torch.constant.int 6
  %y = torch.aten.mul.Scalar %x, %int2 : !torch.vtensor<[2,3],f32>, !torch.int -> !torch.tensor<[2,3],f32>
  %shape = torch.prim.ListConstruct %int6 : (!torch.int) -> !torch.list<int>
  %flat = torch.aten.view %y, %shape : !torch.tensor<[2,3],f32>, !torch.list<int> -> !torch.tensor<[6],f32>
  %t = torch.aten.t %y : !torch.tensor<[2,3],f32> -> !torch.tensor<[3,2],f32>
  return %flat, %t : !torch.tensor<[6],f32>, !torch.tensor<[3,2],f32>
}

// -----

// as_strided addresses the storage: after a select it restarts at the root,
// and the write goes back with one as_strided_scatter on the root.
// CHECK-LABEL: func.func @as_strided_after_select(
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor
// CHECK: %[[V:.*]] = torch.aten.as_strided %[[X0]], {{.*}} : !torch.vtensor<[3,3],f32>, {{.*}} -> !torch.vtensor<[2],f32>
// CHECK: %[[NV:.*]] = torch.aten.add.Scalar %[[V]]
// CHECK: %[[NX:.*]] = torch.aten.as_strided_scatter %[[X0]], %[[NV]], {{.*}} -> !torch.vtensor<[3,3],f32>
// CHECK-NOT: select_scatter
// CHECK: torch.overwrite.tensor.contents %[[NX]]
func.func @as_strided_after_select(%x: !torch.tensor<[3,3],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %row = torch.aten.select.int %x, %int0, %int1 : !torch.tensor<[3,3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %v = torch.aten.as_strided %row, %size, %stride, %int1 : !torch.tensor<[3],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.tensor<[2],f32>
  %0 = torch.aten.add_.Scalar %v, %int1, %int1 : !torch.tensor<[2],f32>, !torch.int, !torch.int -> !torch.tensor<[2],f32>
  return %none : !torch.none
}

// -----

// dst.copy_(src) where src, an earlier argument, is never written: dst's
// final value is src's read, which is replaced by the argument itself (the
// overwrite used to be built from the erased read: a segfault).
// CHECK-LABEL: func.func @copy_from_an_earlier_unwritten_argument(
// CHECK-SAME: %[[SRC:.*]]: !torch.vtensor<[3,3],f32>, %[[DST:.*]]: !torch.tensor<[3,3],f32>)
// CHECK: %[[T:.*]] = torch.aten.t %[[SRC]]
// CHECK: torch.overwrite.tensor.contents %[[SRC]] overwrites %[[DST]]
func.func @copy_from_an_earlier_unwritten_argument(%src: !torch.tensor<[3,3],f32>, %dst: !torch.tensor<[3,3],f32>) -> !torch.vtensor<[],f32> {
  %false = torch.constant.bool false
  %0 = torch.aten.copy_ %dst, %src, %false : !torch.tensor<[3,3],f32>, !torch.tensor<[3,3],f32>, !torch.bool -> !torch.tensor<[3,3],f32>
  %1 = torch.aten.t %src : !torch.tensor<[3,3],f32> -> !torch.tensor<[3,3],f32>
  %none = torch.constant.none
  %2 = torch.aten.sum %1, %none : !torch.tensor<[3,3],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %2 : !torch.vtensor<[],f32>
}

// -----

// A view whose other operand is itself a view (expand_as of a transpose):
// that operand is read as a value when the view is met (it used to keep a
// handle to the erased transpose).
// CHECK-LABEL: func.func @expand_as_a_view(
// CHECK: %[[T:.*]] = torch.aten.transpose.int %arg1
// CHECK: %[[V:.*]] = torch.aten.expand_as %arg0, %[[T]] : !torch.vtensor<[1,2],f32>, !torch.vtensor<[2,2],f32>
// CHECK: return %[[V]]
func.func @expand_as_a_view(%a: !torch.tensor<[1,2],f32>, %b: !torch.tensor<[2,2],f32>) -> !torch.tensor<[2,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %t = torch.aten.transpose.int %b, %int0, %int1 : !torch.tensor<[2,2],f32>, !torch.int, !torch.int -> !torch.tensor<[2,2],f32>
  %v = torch.aten.expand_as %a, %t : !torch.tensor<[1,2],f32>, !torch.tensor<[2,2],f32> -> !torch.tensor<[2,2],f32>
  return %v : !torch.tensor<[2,2],f32>
}

// -----

// narrow -> slice_scatter from start to start + length (step 1).
// CHECK-LABEL: func.func @narrow_write(
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor %[[X:.*]] : !torch.vtensor<[5,3],f32>
// CHECK: %[[N:.*]] = torch.aten.narrow %[[X0]], %[[DIM:.*]], %[[START:.*]], %[[LEN:.*]] : {{.*}} -> !torch.vtensor<[3,3],f32>
// CHECK: %[[NN:.*]] = torch.aten.add.Scalar %[[N]]
// CHECK: %[[END:.*]] = torch.aten.add.int %[[START]], %[[LEN]] : !torch.int, !torch.int -> !torch.int
// CHECK: %[[NX:.*]] = torch.aten.slice_scatter %[[X0]], %[[NN]], %[[DIM]], %[[START]], %[[END]], %{{.*}} : {{.*}} -> !torch.vtensor<[5,3],f32>
// CHECK: torch.overwrite.tensor.contents %[[NX]] overwrites %[[X]]
func.func @narrow_write(%x: !torch.tensor<[5,3],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %none = torch.constant.none
  %n = torch.aten.narrow %x, %int0, %int1, %int3 : !torch.tensor<[5,3],f32>, !torch.int, !torch.int, !torch.int -> !torch.tensor<[3,3],f32>
  %0 = torch.aten.add_.Scalar %n, %int1, %int1 : !torch.tensor<[3,3],f32>, !torch.int, !torch.int -> !torch.tensor<[3,3],f32>
  return %none : !torch.none
}

// -----

// movedim(0 -> 2) is undone by movedim(2 -> 0): source and destination swapped.
// CHECK-LABEL: func.func @movedim_write(
// CHECK: %[[Y0:.*]] = torch.copy.to_vtensor %[[Y:.*]] : !torch.vtensor<[2,3,4],f32>
// CHECK: %[[M:.*]] = torch.aten.movedim.int %[[Y0]], %[[SRC:.*]], %[[DST:.*]] : {{.*}} -> !torch.vtensor<[3,4,2],f32>
// CHECK: %[[NM:.*]] = torch.aten.neg %[[M]]
// CHECK: %[[NY:.*]] = torch.aten.movedim.int %[[NM]], %[[DST]], %[[SRC]] : !torch.vtensor<[3,4,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,3,4],f32>
// CHECK: torch.overwrite.tensor.contents %[[NY]] overwrites %[[Y]]
func.func @movedim_write(%y: !torch.tensor<[2,3,4],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %m = torch.aten.movedim.int %y, %int0, %int2 : !torch.tensor<[2,3,4],f32>, !torch.int, !torch.int -> !torch.tensor<[3,4,2],f32>
  %0 = torch.aten.neg_ %m : !torch.tensor<[3,4,2],f32> -> !torch.tensor<[3,4,2],f32>
  return %none : !torch.none
}

// -----

// numpy_T reverses all dimensions: it is its own inverse.
// CHECK-LABEL: func.func @numpy_T_write(
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor %[[X:.*]] : !torch.vtensor<[2,3,4],f32>
// CHECK: %[[T:.*]] = torch.aten.numpy_T %[[X0]] : !torch.vtensor<[2,3,4],f32> -> !torch.vtensor<[4,3,2],f32>
// CHECK: %[[NT:.*]] = torch.aten.mul.Scalar %[[T]]
// CHECK: %[[NX:.*]] = torch.aten.numpy_T %[[NT]] : !torch.vtensor<[4,3,2],f32> -> !torch.vtensor<[2,3,4],f32>
// CHECK: torch.overwrite.tensor.contents %[[NX]] overwrites %[[X]]
func.func @numpy_T_write(%x: !torch.tensor<[2,3,4],f32>) -> !torch.none {
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %t = torch.aten.numpy_T %x : !torch.tensor<[2,3,4],f32> -> !torch.tensor<[4,3,2],f32>
  %0 = torch.aten.mul_.Scalar %t, %int2 : !torch.tensor<[4,3,2],f32>, !torch.int -> !torch.tensor<[4,3,2],f32>
  return %none : !torch.none
}

// -----

// tensor_split into 3 sections of 5 rows: rows [0, 2), [2, 4), [4, 5). Each
// piece is a slice; writes into the last two are slice_scatters over their rows.
// CHECK-LABEL: func.func @tensor_split_writes(
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor %[[X:.*]] : !torch.vtensor<[5,2],f32>
// CHECK: %[[NB:.*]] = torch.aten.full {{.*}} -> !torch.vtensor<[2,2],f32>
// CHECK: %[[X1:.*]] = torch.aten.slice_scatter %[[X0]], %[[NB]], %int0{{[_0-9]*}}, %int2{{[_0-9]*}}, %int4{{[_0-9]*}}, %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[5,2],f32>
// CHECK: %[[C:.*]] = torch.aten.slice.Tensor %[[X1]], %int0{{[_0-9]*}}, %int4{{[_0-9]*}}, %int5{{[_0-9]*}}, %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[1,2],f32>
// CHECK: %[[NC:.*]] = torch.aten.add.Scalar %[[C]]
// CHECK: %[[X2:.*]] = torch.aten.slice_scatter %[[X1]], %[[NC]], %int0{{[_0-9]*}}, %int4{{[_0-9]*}}, %int5{{[_0-9]*}}, %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[5,2],f32>
// CHECK: torch.overwrite.tensor.contents %[[X2]] overwrites %[[X]]
func.func @tensor_split_writes(%x: !torch.tensor<[5,2],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %none = torch.constant.none
  %parts = torch.aten.tensor_split.sections %x, %int3, %int0 : !torch.tensor<[5,2],f32>, !torch.int, !torch.int -> !torch.list<tensor>
  %a, %b, %c = torch.prim.ListUnpack %parts : !torch.list<tensor> -> !torch.tensor<[2,2],f32>, !torch.tensor<[2,2],f32>, !torch.tensor<[1,2],f32>
  %0 = torch.aten.zero_ %b : !torch.tensor<[2,2],f32> -> !torch.tensor<[2,2],f32>
  %1 = torch.aten.add_.Scalar %c, %int1, %int1 : !torch.tensor<[1,2],f32>, !torch.int, !torch.int -> !torch.tensor<[1,2],f32>
  return %none : !torch.none
}

// -----

// With record-mutations, each write and metadata mutation is listed for reports.
// RUN: purity-opt %s --purity-functionalize=record-mutations=true --split-input-file | filecheck %s --check-prefix=RECORD
// RECORD-LABEL: func.func @recorded(
// RECORD-SAME: purity.mutations = [{chain = "aten.t()", kind = "metadata", location = "{{[^"]*}}", op = "aten.t_", target = "argument 0"}, {chain = "aten.t() -> aten.select.int(0, 0)", kind = "write", location = "{{[^"]*}}", op = "aten.mul_.Scalar", target = "argument 0"}]
func.func @recorded(%x: !torch.tensor<[2,3],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %t = torch.operator "torch.aten.t_"(%x) : (!torch.tensor<[2,3],f32>) -> !torch.tensor<[3,2],f32>
  %row = torch.aten.select.int %t, %int0, %int0 : !torch.tensor<[3,2],f32>, !torch.int, !torch.int -> !torch.tensor<[2],f32>
  %0 = torch.aten.mul_.Scalar %row, %int2 : !torch.tensor<[2],f32>, !torch.int -> !torch.tensor<[2],f32>
  return %none : !torch.none
}

// -----

// An output viewing an input at a position known only at run time: its
// layout is unknown, so it is returned as a value of its own (no
// purity.aliases_input, which would promise the runtime a layout), marked
// with the argument it views.
// CHECK-LABEL: func.func @view_of_unknown_layout(
// CHECK-SAME: -> (!torch.vtensor<[2],f32> {purity.view_returned_as_copy = 0 : i64})
// CHECK-NOT: purity.aliases_input
// CHECK: torch.aten.narrow
func.func @view_of_unknown_layout(%x: !torch.tensor<[4],f32>, %start: !torch.int) -> !torch.tensor<[2],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %0 = torch.aten.narrow %x, %int0, %start, %int2 : !torch.tensor<[4],f32>, !torch.int, !torch.int, !torch.int -> !torch.tensor<[2],f32>
  return %0 : !torch.tensor<[2],f32>
}

// -----

// Dynamic dims and runtime ints (`?` sizes, `!torch.int` arguments): a row
// written at a runtime position of a cache of dynamic length is one
// select_scatter at that position, read back by the slice, and the cache's
// final value overwrites the argument once.
// CHECK-LABEL: func.func @row_write_at_runtime_position(
// CHECK-SAME: %[[CACHE:.*]]: !torch.tensor<[?,8],f32>, %[[ROW:.*]]: !torch.vtensor<[8],f32>, %[[POS:.*]]: !torch.int)
// CHECK: %[[C0:.*]] = torch.copy.to_vtensor %[[CACHE]] : !torch.vtensor<[?,8],f32>
// CHECK: %[[NEW:.*]] = torch.aten.select_scatter %[[C0]], %[[ROW]], %{{.*}}, %[[POS]] : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK: %[[END:.*]] = torch.aten.add.int %[[POS]]
// CHECK: %[[KEYS:.*]] = torch.aten.slice.Tensor %[[NEW]], %{{.*}}, %{{.*}}, %[[END]], %{{.*}} : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK: %[[SUM:.*]] = torch.aten.sum.dim_IntList %[[KEYS]]
// CHECK: torch.overwrite.tensor.contents %[[NEW]] overwrites %[[CACHE]] : !torch.vtensor<[?,8],f32>, !torch.tensor<[?,8],f32>
// CHECK-NOT: torch.overwrite.tensor.contents
// CHECK: return %[[SUM]]
func.func @row_write_at_runtime_position(%cache: !torch.tensor<[?,8],f32>, %row: !torch.vtensor<[8],f32>, %position: !torch.int) -> !torch.vtensor<[8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %none = torch.constant.none
  %dst = torch.aten.select.int %cache, %int0, %position : !torch.tensor<[?,8],f32>, !torch.int, !torch.int -> !torch.tensor<[8],f32>
  %rowt = torch.copy.to_tensor %row : !torch.tensor<[8],f32>
  %w = torch.aten.copy_ %dst, %rowt, %false : !torch.tensor<[8],f32>, !torch.tensor<[8],f32>, !torch.bool -> !torch.tensor<[8],f32>
  %end = torch.aten.add.int %position, %int1 : !torch.int, !torch.int -> !torch.int
  %keys = torch.aten.slice.Tensor %cache, %int0, %int0, %end, %int1 : !torch.tensor<[?,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.tensor<[?,8],f32>
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %sum = torch.aten.sum.dim_IntList %keys, %dims, %false, %none : !torch.tensor<[?,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
  return %sum : !torch.vtensor<[8],f32>
}

// -----

// A write through a slice whose start and extent are runtime ints is
// scattered back with the same (start, end): the sum reads the written value.
// CHECK-LABEL: func.func @in_place_through_slice_of_dynamic_extent(
// CHECK-SAME: %[[X:.*]]: !torch.tensor<[?,4],f32>, %[[START:.*]]: !torch.int, %[[LEN:.*]]: !torch.int)
// CHECK: %[[X0:.*]] = torch.copy.to_vtensor %[[X]] : !torch.vtensor<[?,4],f32>
// CHECK: %[[END:.*]] = torch.aten.add.int %[[START]], %[[LEN]]
// CHECK: %[[WIN:.*]] = torch.aten.slice.Tensor %[[X0]], %{{.*}}, %[[START]], %[[END]], %{{.*}} -> !torch.vtensor<[?,4],f32>
// CHECK: %[[SCALED:.*]] = torch.aten.mul.Scalar %[[WIN]]
// CHECK: %[[X1:.*]] = torch.aten.slice_scatter %[[X0]], %[[SCALED]], %{{.*}}, %[[START]], %[[END]], %{{.*}} -> !torch.vtensor<[?,4],f32>
// CHECK: torch.aten.sum.dim_IntList %[[X1]]
// CHECK: torch.overwrite.tensor.contents %[[X1]] overwrites %[[X]]
func.func @in_place_through_slice_of_dynamic_extent(%x: !torch.tensor<[?,4],f32>, %start: !torch.int, %length: !torch.int) -> !torch.vtensor<[4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %none = torch.constant.none
  %end = torch.aten.add.int %start, %length : !torch.int, !torch.int -> !torch.int
  %window = torch.aten.slice.Tensor %x, %int0, %start, %end, %int1 : !torch.tensor<[?,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.tensor<[?,4],f32>
  %scaled = torch.aten.mul_.Scalar %window, %int2 : !torch.tensor<[?,4],f32>, !torch.int -> !torch.tensor<[?,4],f32>
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %sum = torch.aten.sum.dim_IntList %x, %dims, %false, %none : !torch.tensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
  return %sum : !torch.vtensor<[4],f32>
}

// -----

// A returned view of an argument without a recorded layout (dynamic sizes)
// is returned as a value and marked with the argument it views: the runtime
// makes the view of the caller's tensor from the traced layout.
// CHECK-LABEL: func.func @returned_view_of_dynamic_argument(
// CHECK-SAME: -> (!torch.vtensor<[?,4],f32> {purity.view_returned_as_copy = 0 : i64})
// CHECK: %[[NEW:.*]] = torch.aten.add.Scalar
// CHECK: torch.overwrite.tensor.contents %[[NEW]] overwrites
// CHECK: return %[[NEW]]
func.func @returned_view_of_dynamic_argument(%x: !torch.tensor<[?,4],f32>) -> !torch.tensor<[?,4],f32> {
  %int1 = torch.constant.int 1
  %r = torch.aten.add_.Scalar %x, %int1, %int1 : !torch.tensor<[?,4],f32>, !torch.int, !torch.int -> !torch.tensor<[?,4],f32>
  return %x : !torch.tensor<[?,4],f32>
}

// -----

// torch.cond as imported: the operand is a value snapshot taken where the If
// runs (between the two writes of the argument); a branch writes a tensor it
// creates (clone, mul_), which becomes value ops inside the region; the
// argument's writes before and after the If stay outside it.
// CHECK-LABEL: func.func @cond_between_writes(
// CHECK-SAME: %[[X:.*]]: !torch.tensor<[3],f32>{{.*}}, %[[C:.*]]: !torch.bool)
// CHECK: %[[READ:.*]] = torch.copy.to_vtensor %[[X]]
// CHECK: %[[ADDED:.*]] = torch.aten.add.Scalar %[[READ]]
// CHECK: %[[IF:.*]] = torch.prim.If %[[C]] -> (!torch.vtensor<[3],f32>) {
// CHECK-NEXT: %[[CLONE:.*]] = torch.aten.clone %[[ADDED]]
// CHECK-NOT: mul_
// CHECK: %[[DOUBLED:.*]] = torch.aten.mul.Scalar %[[CLONE]]
// CHECK-NEXT: torch.prim.If.yield %[[DOUBLED]] : !torch.vtensor<[3],f32>
// CHECK: } else {
// CHECK-NEXT: torch.prim.If.yield %[[ADDED]] : !torch.vtensor<[3],f32>
// CHECK: %[[TRIPLED:.*]] = torch.aten.mul.Scalar %[[ADDED]]
// CHECK: torch.overwrite.tensor.contents %[[TRIPLED]] overwrites %[[X]]
// CHECK: return %[[IF]]
func.func @cond_between_writes(%x: !torch.tensor<[3],f32>, %c: !torch.bool) -> !torch.vtensor<[3],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %none = torch.constant.none
  %0 = torch.aten.add_.Scalar %x, %int1, %int1 : !torch.tensor<[3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  %snapshot = torch.copy.to_vtensor %x : !torch.vtensor<[3],f32>
  %1 = torch.prim.If %c -> (!torch.vtensor<[3],f32>) {
    %t = torch.aten.clone %snapshot, %none : !torch.vtensor<[3],f32>, !torch.none -> !torch.tensor<[3],f32>
    %2 = torch.aten.mul_.Scalar %t, %int2 : !torch.tensor<[3],f32>, !torch.int -> !torch.tensor<[3],f32>
    %3 = torch.copy.to_vtensor %t : !torch.vtensor<[3],f32>
    torch.prim.If.yield %3 : !torch.vtensor<[3],f32>
  } else {
    torch.prim.If.yield %snapshot : !torch.vtensor<[3],f32>
  }
  %4 = torch.aten.mul_.Scalar %x, %int3 : !torch.tensor<[3],f32>, !torch.int -> !torch.tensor<[3],f32>
  return %1 : !torch.vtensor<[3],f32>
}

// -----

// A while_loop body writing through a view of a tensor it creates: the
// write becomes a slice_scatter inside the loop body, the carried values
// stay value tensors.
// CHECK-LABEL: func.func @loop_body_writes_row(
// CHECK: torch.prim.Loop %{{.*}}, %{{.*}}, init(%{{.*}}) {
// CHECK-NEXT: ^bb0(%{{.*}}: !torch.int, %[[A:.*]]: !torch.vtensor<[4],f32>):
// CHECK: %[[CLONE:.*]] = torch.aten.clone %[[A]]
// CHECK: %[[ROW:.*]] = torch.aten.slice.Tensor %[[CLONE]]
// CHECK: %[[ADDED:.*]] = torch.aten.add.Scalar %[[ROW]]
// CHECK: %[[SCATTERED:.*]] = torch.aten.slice_scatter %[[CLONE]], %[[ADDED]]
// CHECK: torch.prim.Loop.condition %{{.*}}, iter(%[[SCATTERED]] : !torch.vtensor<[4],f32>)
// CHECK-NOT: !torch.tensor
func.func @loop_body_writes_row(%a: !torch.vtensor<[4],f32>, %go: !torch.bool) -> !torch.vtensor<[4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %max = torch.constant.int 9223372036854775807
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.prim.Loop %max, %go, init(%a) {
  ^bb0(%i: !torch.int, %carried: !torch.vtensor<[4],f32>):
    %t = torch.aten.clone %carried, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.tensor<[4],f32>
    %row = torch.aten.slice.Tensor %t, %int0, %int0, %int2, %int1 : !torch.tensor<[4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.tensor<[2],f32>
    %1 = torch.aten.add_.Scalar %row, %int1, %int1 : !torch.tensor<[2],f32>, !torch.int, !torch.int -> !torch.tensor<[2],f32>
    %next = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
    torch.prim.Loop.condition %false, iter(%next : !torch.vtensor<[4],f32>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// A view op typed as a value (`_unsafe_view`, whose schema claims no alias)
// over a view of an argument reads that view's value: it stays, on values.
// CHECK-LABEL: func.func @value_typed_view_of_a_view(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[6,5],f32>) -> !torch.vtensor<[5,1,5],f32>
// CHECK: %[[ROWS:.*]] = torch.aten.slice.Tensor %[[X]], {{.*}} : !torch.vtensor<[6,5],f32>, {{.*}} -> !torch.vtensor<[5,5],f32>
// CHECK: %[[R:.*]] = torch.aten._unsafe_view %[[ROWS]], %{{.*}} : !torch.vtensor<[5,5],f32>, !torch.list<int> -> !torch.vtensor<[5,1,5],f32>
// CHECK: return %[[R]]
func.func @value_typed_view_of_a_view(%x: !torch.tensor<[6,5],f32>) -> !torch.vtensor<[5,1,5],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int5 = torch.constant.int 5
  %end = torch.constant.int 9223372036854775807
  %rows = torch.aten.slice.Tensor %x, %int0, %int1, %end, %int1 : !torch.tensor<[6,5],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.tensor<[5,5],f32>
  %shape = torch.prim.ListConstruct %int5, %int1, %int5 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten._unsafe_view %rows, %shape : !torch.tensor<[5,5],f32>, !torch.list<int> -> !torch.vtensor<[5,1,5],f32>
  return %r : !torch.vtensor<[5,1,5],f32>
}
