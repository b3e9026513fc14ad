// RUN: purity-opt %s --purity-check-indices --split-input-file | filecheck %s

// An index read from data is clamped into range before the op reads with it;
// whether clamping changed nothing is its valid flag, one per index element,
// returned with the op, line and number of flags of the check.
// CHECK-LABEL: func.func @index_select(
// CHECK-SAME: -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[2],i1> {purity.index_checks = [{count = 2 : i64, location = "{{[^"]*}}", op = "aten.index_select"}]})
// CHECK: %[[HIGH:.*]] = torch.constant.int 7
// CHECK: %[[SAFE:.*]] = torch.aten.clamp %arg1, %{{.*}}, %[[HIGH]]
// CHECK: %[[SAME:.*]] = torch.aten.eq.Tensor %[[SAFE]], %arg1
// CHECK: %[[OUT:.*]] = torch.aten.index_select %arg0, %{{.*}}, %[[SAFE]]
// CHECK-NOT: torch.aten.all
// CHECK: return %[[OUT]], %[[SAME]]
func.func @index_select(%x: !torch.vtensor<[8,4],f32>, %i: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,4],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[8,4],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}

// -----

// Advanced indexing accepts -8..7 on a dimension of 8 and wraps negative
// indices; a boolean mask is not an index and is left alone.
// CHECK-LABEL: func.func @advanced_indexing(
// CHECK: %[[LOW:.*]] = torch.constant.int -8
// CHECK: %[[HIGH:.*]] = torch.constant.int 7
// CHECK: %[[CLAMPED:.*]] = torch.aten.clamp %arg1, %[[LOW]], %[[HIGH]]
// CHECK: %[[NEGATIVE:.*]] = torch.aten.lt.Scalar %[[CLAMPED]]
// CHECK: %[[SIZE:.*]] = torch.constant.int 8
// CHECK: %[[SHIFTED:.*]] = torch.aten.add.Scalar %[[CLAMPED]], %[[SIZE]]
// CHECK: %[[WRAPPED:.*]] = torch.aten.where.self %[[NEGATIVE]], %[[SHIFTED]], %[[CLAMPED]]
// CHECK: %[[LIST:.*]] = torch.prim.ListConstruct %[[WRAPPED]], %arg2
// CHECK: torch.aten.index.Tensor %arg0, %[[LIST]]
// CHECK-NOT: torch.aten.clamp %arg2
func.func @advanced_indexing(%x: !torch.vtensor<[8,4],f32>, %i: !torch.vtensor<[2],si64>, %m: !torch.vtensor<[4],i1>) -> !torch.vtensor<[2],f32> {
  %0 = torch.prim.ListConstruct %i, %m : (!torch.vtensor<[2],si64>, !torch.vtensor<[4],i1>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %0 : !torch.vtensor<[8,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2],f32>
  return %1 : !torch.vtensor<[2],f32>
}

// -----

// Constant indices known to be in range need no check (and no extra result).
// CHECK-LABEL: func.func @constant_in_range(
// CHECK-SAME: -> !torch.vtensor<[2,4],f32> {
// CHECK-NOT: clamp
// CHECK-NOT: purity.index_checks
func.func @constant_in_range(%x: !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32> {
  %int0 = torch.constant.int 0
  %i = torch.vtensor.literal(dense<[1, 7]> : tensor<2xsi64>) : !torch.vtensor<[2],si64>
  %0 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[8,4],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}

// -----

// Writes into arguments wait for every check: a row written into the
// original value writes back the row it replaces when a check fails (that
// read is marked purity.guard_read), any other final value is selected whole.
// CHECK-LABEL: func.func @guarded_writes(
// CHECK: %[[CACHE:.*]] = torch.copy.to_vtensor %arg0
// CHECK: %[[P:.*]] = torch.copy.to_vtensor %arg1
// CHECK: %[[STEPPED:.*]] = torch.aten.add.Tensor %[[P]]
// CHECK: %[[FLAGS:.*]] = torch.aten.eq.Tensor
// CHECK: torch.aten.embedding %arg3, %[[SAFE:[^,]*]],
// CHECK: %[[OK:.*]] = torch.aten.all %[[FLAGS]]
// CHECK: %[[OLD:.*]] = torch.aten.select.int %[[CACHE]], %{{.*}}, %{{.*}} {purity.guard_read}
// CHECK: %[[ROW:.*]] = torch.aten.where.self %[[OK]], %arg2, %[[OLD]]
// CHECK: %[[WRITTEN:.*]] = torch.aten.select_scatter %[[CACHE]], %[[ROW]]
// CHECK: torch.overwrite.tensor.contents %[[WRITTEN]] overwrites %arg0
// CHECK: %[[KEPT:.*]] = torch.aten.where.self %[[OK]], %[[STEPPED]], %[[P]]
// CHECK: torch.overwrite.tensor.contents %[[KEPT]] overwrites %arg1
// CHECK: return %{{.*}}, %[[FLAGS]]
func.func @guarded_writes(%cache: !torch.tensor<[6,4],f32>, %p: !torch.tensor<[4],f32>, %row: !torch.vtensor<[4],f32>, %w: !torch.vtensor<[8,4],f32>, %ids: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %c = torch.copy.to_vtensor %cache : !torch.vtensor<[6,4],f32>
  %pv = torch.copy.to_vtensor %p : !torch.vtensor<[4],f32>
  %written = torch.aten.select_scatter %c, %row, %int0, %int2 : !torch.vtensor<[6,4],f32>, !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[6,4],f32>
  %stepped = torch.aten.add.Tensor %pv, %row, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %false = torch.constant.bool false
  %e = torch.aten.embedding %w, %ids, %int0, %false, %false : !torch.vtensor<[8,4],f32>, !torch.vtensor<[2],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[2,4],f32>
  torch.overwrite.tensor.contents %written overwrites %cache : !torch.vtensor<[6,4],f32>, !torch.tensor<[6,4],f32>
  torch.overwrite.tensor.contents %stepped overwrites %p : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
  return %e : !torch.vtensor<[2,4],f32>
}

// -----

// A write at a tensor position into an argument (index_put, accumulate
// false: `cache.index_copy_(0, position, row)`, a static KV cache) stays a
// write of those elements: when a check fails it writes back what they held
// (read at the clamped indices, purity.guard_read), so the argument can be
// written in place. An accumulating write (`index_add_`) adds what it
// would add when the checks pass, else the additive identity (-0.0: x +
// -0.0 is x for every float, -0.0 included; 0 for integers), so it stays a
// write of those elements too; booleans (an OR) are selected whole.
// CHECK-LABEL: func.func @guarded_index_put(
// CHECK: %[[CACHE:.*]] = torch.copy.to_vtensor %arg0
// CHECK: %[[SUMS:.*]] = torch.copy.to_vtensor %arg1
// CHECK: %[[FLAGS:.*]] = torch.copy.to_vtensor %arg4
// CHECK: %[[COUNTS:.*]] = torch.copy.to_vtensor %arg6
// CHECK: %[[CLAMPED:.*]] = torch.aten.clamp %arg3
// CHECK: %[[SAFE:.*]] = torch.prim.ListConstruct %{{.*}} : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
// CHECK: torch.aten.index_put %[[CACHE]], %[[SAFE]], %arg2, %false
// CHECK: torch.aten.index_put %[[SUMS]], %{{.*}}, %arg2, %true
// CHECK: %[[ORED:.*]] = torch.aten.index_put %[[FLAGS]], %{{.*}}, %arg7, %true
// CHECK: %[[OK:.*]] = torch.aten.all
// CHECK: %[[OLD:.*]] = torch.aten.index.Tensor %[[CACHE]], %[[SAFE]] {purity.guard_read} : !torch.vtensor<[6,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[1,4],f32>
// CHECK: %[[ROW:.*]] = torch.aten.where.self %[[OK]], %arg2, %[[OLD]] : !torch.vtensor<[],i1>, !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
// CHECK: %[[WRITTEN:.*]] = torch.aten.index_put %[[CACHE]], %[[SAFE]], %[[ROW]], %false
// CHECK: torch.overwrite.tensor.contents %[[WRITTEN]] overwrites %arg0
// CHECK: %[[NEGATIVE_ZERO:.*]] = torch.constant.float -0.000000e+00
// CHECK: %[[ADDEND:.*]] = torch.aten.where.ScalarOther %[[OK]], %arg2, %[[NEGATIVE_ZERO]] : !torch.vtensor<[],i1>, !torch.vtensor<[1,4],f32>, !torch.float -> !torch.vtensor<[1,4],f32>
// CHECK: %[[KEPT:.*]] = torch.aten.index_put %[[SUMS]], %{{.*}}, %[[ADDEND]], %true
// CHECK: torch.overwrite.tensor.contents %[[KEPT]] overwrites %arg1
// CHECK: %[[FLAGGED:.*]] = torch.aten.where.self %[[OK]], %[[ORED]], %[[FLAGS]] : !torch.vtensor<[],i1>, !torch.vtensor<[6,4],i1>
// CHECK: torch.overwrite.tensor.contents %[[FLAGGED]] overwrites %arg4
// CHECK: %[[ZERO:.*]] = torch.constant.int 0
// CHECK: %[[COUNT:.*]] = torch.aten.where.ScalarOther %[[OK]], %arg5, %[[ZERO]] : !torch.vtensor<[],i1>, !torch.vtensor<[1,4],si64>, !torch.int -> !torch.vtensor<[1,4],si64>
// CHECK: torch.aten.index_put %[[COUNTS]], %{{.*}}, %[[COUNT]], %true
// CHECK: torch.overwrite.tensor.contents %{{.*}} overwrites %arg6
func.func @guarded_index_put(%cache: !torch.tensor<[6,4],f32>, %sums: !torch.tensor<[6,4],f32>, %row: !torch.vtensor<[1,4],f32>, %position: !torch.vtensor<[1],si64>, %flags: !torch.tensor<[6,4],i1>, %count: !torch.vtensor<[1,4],si64>, %counts: !torch.tensor<[6,4],si64>, %flag: !torch.vtensor<[1,4],i1>) -> !torch.vtensor<[1,4],f32> {
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %c = torch.copy.to_vtensor %cache : !torch.vtensor<[6,4],f32>
  %s = torch.copy.to_vtensor %sums : !torch.vtensor<[6,4],f32>
  %f = torch.copy.to_vtensor %flags : !torch.vtensor<[6,4],i1>
  %n = torch.copy.to_vtensor %counts : !torch.vtensor<[6,4],si64>
  %indices = torch.prim.ListConstruct %position : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %written = torch.aten.index_put %c, %indices, %row, %false : !torch.vtensor<[6,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,4],f32>, !torch.bool -> !torch.vtensor<[6,4],f32>
  %added = torch.aten.index_put %s, %indices, %row, %true : !torch.vtensor<[6,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,4],f32>, !torch.bool -> !torch.vtensor<[6,4],f32>
  %ored = torch.aten.index_put %f, %indices, %flag, %true : !torch.vtensor<[6,4],i1>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,4],i1>, !torch.bool -> !torch.vtensor<[6,4],i1>
  %counted = torch.aten.index_put %n, %indices, %count, %true : !torch.vtensor<[6,4],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,4],si64>, !torch.bool -> !torch.vtensor<[6,4],si64>
  torch.overwrite.tensor.contents %written overwrites %cache : !torch.vtensor<[6,4],f32>, !torch.tensor<[6,4],f32>
  torch.overwrite.tensor.contents %added overwrites %sums : !torch.vtensor<[6,4],f32>, !torch.tensor<[6,4],f32>
  torch.overwrite.tensor.contents %ored overwrites %flags : !torch.vtensor<[6,4],i1>, !torch.tensor<[6,4],i1>
  torch.overwrite.tensor.contents %counted overwrites %counts : !torch.vtensor<[6,4],si64>, !torch.tensor<[6,4],si64>
  return %row : !torch.vtensor<[1,4],f32>
}

// -----

// A row written at a tensor position and then read by the program (a static
// cache's row, then attention over the cache): the row the write replaces
// is read just before it (purity.guard_read), the program reads the write
// unchanged, and after every check the row is written back over it, as
// what is there now when the checks pass, else what was there before. The
// cache's original value stays the base of one write (rebuilding the guarded
// write from it would make IREE copy the whole cache for one of the two).
// CHECK-LABEL: func.func @written_then_read(
// CHECK: %[[CACHE:.*]] = torch.copy.to_vtensor %arg0
// CHECK: torch.aten.clamp %arg2
// CHECK: %[[SAFE:.*]] = torch.prim.ListConstruct
// CHECK: %[[BEFORE:.*]] = torch.aten.index.Tensor %[[CACHE]], %[[SAFE]] {purity.guard_read}
// CHECK-NEXT: %[[WRITTEN:.*]] = torch.aten.index_put %[[CACHE]], %[[SAFE]], %arg1, %false
// CHECK: %[[SUM:.*]] = torch.aten.sum %[[WRITTEN]]
// CHECK: %[[OK:.*]] = torch.aten.all
// CHECK: %[[NOW:.*]] = torch.aten.index.Tensor %[[WRITTEN]], %[[SAFE]] {purity.guard_read}
// CHECK: %[[ROW:.*]] = torch.aten.where.self %[[OK]], %[[NOW]], %[[BEFORE]]
// CHECK: %[[GUARDED:.*]] = torch.aten.index_put %[[WRITTEN]], %[[SAFE]], %[[ROW]], %false
// CHECK: torch.overwrite.tensor.contents %[[GUARDED]] overwrites %arg0
// CHECK: return %[[SUM]], %[[GUARDED]], %{{.*}} :
func.func @written_then_read(%cache: !torch.tensor<[6,4],f32>, %row: !torch.vtensor<[1,4],f32>, %position: !torch.vtensor<[1],si64>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[6,4],f32>) {
  %false = torch.constant.bool false
  %none = torch.constant.none
  %c = torch.copy.to_vtensor %cache : !torch.vtensor<[6,4],f32>
  %indices = torch.prim.ListConstruct %position : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %written = torch.aten.index_put %c, %indices, %row, %false : !torch.vtensor<[6,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,4],f32>, !torch.bool -> !torch.vtensor<[6,4],f32>
  %sum = torch.aten.sum %written, %none : !torch.vtensor<[6,4],f32>, !torch.none -> !torch.vtensor<[],f32>
  torch.overwrite.tensor.contents %written overwrites %cache : !torch.vtensor<[6,4],f32>, !torch.tensor<[6,4],f32>
  return %sum, %written : !torch.vtensor<[],f32>, !torch.vtensor<[6,4],f32>
}

// -----

// Written and returned, not otherwise read: the guarded write is rebuilt
// from the original (one write of the row), and the output is the guarded
// value too (the same when every check passes; outputs are dropped when one
// fails), so the original stays the base of one write.
// CHECK-LABEL: func.func @written_and_returned(
// CHECK: %[[CACHE:.*]] = torch.copy.to_vtensor %arg0
// CHECK: %[[OK:.*]] = torch.aten.all
// CHECK: %[[OLD:.*]] = torch.aten.index.Tensor %[[CACHE]], %{{.*}} {purity.guard_read}
// CHECK: %[[ROW:.*]] = torch.aten.where.self %[[OK]], %arg1, %[[OLD]]
// CHECK: %[[GUARDED:.*]] = torch.aten.index_put %[[CACHE]], %{{.*}}, %[[ROW]], %false
// CHECK: torch.overwrite.tensor.contents %[[GUARDED]] overwrites %arg0
// CHECK: return %[[GUARDED]], %{{.*}} :
func.func @written_and_returned(%cache: !torch.tensor<[6,4],f32>, %row: !torch.vtensor<[1,4],f32>, %position: !torch.vtensor<[1],si64>) -> !torch.vtensor<[6,4],f32> {
  %false = torch.constant.bool false
  %c = torch.copy.to_vtensor %cache : !torch.vtensor<[6,4],f32>
  %indices = torch.prim.ListConstruct %position : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %written = torch.aten.index_put %c, %indices, %row, %false : !torch.vtensor<[6,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,4],f32>, !torch.bool -> !torch.vtensor<[6,4],f32>
  torch.overwrite.tensor.contents %written overwrites %cache : !torch.vtensor<[6,4],f32>, !torch.tensor<[6,4],f32>
  return %written : !torch.vtensor<[6,4],f32>
}

// -----

// Non-adjacent advanced indices lead the region's shape (PyTorch's rule):
// x[i, :, j] of a [5,3,7] tensor with i, j of shape [2] is [2,3].
// CHECK-LABEL: func.func @guarded_index_put_split_indices(
// CHECK: torch.aten.index.Tensor {{.*}} {purity.guard_read} : !torch.vtensor<[5,3,7],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,3],f32>
func.func @guarded_index_put_split_indices(%x: !torch.tensor<[5,3,7],f32>, %values: !torch.vtensor<[3],f32>, %i: !torch.vtensor<[2],si64>, %j: !torch.vtensor<[2],si64>) -> !torch.vtensor<[3],f32> {
  %false = torch.constant.bool false
  %none = torch.constant.none
  %v = torch.copy.to_vtensor %x : !torch.vtensor<[5,3,7],f32>
  %indices = torch.prim.ListConstruct %i, %none, %j : (!torch.vtensor<[2],si64>, !torch.none, !torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %written = torch.aten.index_put %v, %indices, %values, %false : !torch.vtensor<[5,3,7],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[3],f32>, !torch.bool -> !torch.vtensor<[5,3,7],f32>
  torch.overwrite.tensor.contents %written overwrites %x : !torch.vtensor<[5,3,7],f32>, !torch.tensor<[5,3,7],f32>
  return %values : !torch.vtensor<[3],f32>
}

// -----

// Two checks: a 2-d index's flags are flattened, and the flags of all checks
// are concatenated in program order.
// CHECK-LABEL: func.func @two_checks(
// CHECK-SAME: !torch.vtensor<[5],i1> {purity.index_checks = [{count = 4 : i64, location = "{{[^"]*}}", op = "aten.gather"}, {count = 1 : i64, location = "{{[^"]*}}", op = "aten.index_select"}]}
// CHECK: %[[GATHERED:.*]] = torch.aten.eq.Tensor {{.*}} -> !torch.vtensor<[2,2],i1>
// CHECK: %[[FLAT:.*]] = torch.aten.view %[[GATHERED]], {{.*}} -> !torch.vtensor<[4],i1>
// CHECK: %[[SELECTED:.*]] = torch.aten.eq.Tensor {{.*}} -> !torch.vtensor<[1],i1>
// CHECK: %[[LIST:.*]] = torch.prim.ListConstruct %[[FLAT]], %[[SELECTED]]
// CHECK: %[[FLAGS:.*]] = torch.aten.cat %[[LIST]]
// CHECK: return {{.*}}, %[[FLAGS]]
func.func @two_checks(%x: !torch.vtensor<[8,4],f32>, %g: !torch.vtensor<[2,2],si64>, %i: !torch.vtensor<[1],si64>) -> (!torch.vtensor<[2,2],f32>, !torch.vtensor<[1,4],f32>) {
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %0 = torch.aten.gather %x, %int0, %g, %false : !torch.vtensor<[8,4],f32>, !torch.int, !torch.vtensor<[2,2],si64>, !torch.bool -> !torch.vtensor<[2,2],f32>
  %1 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[8,4],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1,4],f32>
  return %0, %1 : !torch.vtensor<[2,2],f32>, !torch.vtensor<[1,4],f32>
}

// -----

// Index ops inside control flow: each branch clamps its own index and
// reduces its flags to one, which the If gains as an extra result (true from
// the branch without checks); that result is one flag of the program's.
// CHECK-LABEL: func.func @index_in_a_branch(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[8,4],f32>, %[[I:.*]]: !torch.vtensor<[2],si64>, %[[C:.*]]: !torch.bool)
// CHECK-SAME: -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[1],i1> {purity.index_checks = [{count = 1 : i64, location = "{{.*}}", op = "aten.index_select"}]})
// CHECK: %[[IF:.*]]:2 = torch.prim.If %[[C]] -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[],i1>) {
// CHECK: %[[CLAMPED:.*]] = torch.aten.clamp %[[I]]
// CHECK: %[[VALID:.*]] = torch.aten.eq.Tensor %[[CLAMPED]], %[[I]]
// CHECK: %[[PICKED:.*]] = torch.aten.index_select %[[X]], %{{.*}}, %[[CLAMPED]]
// CHECK: %[[ALL:.*]] = torch.aten.all %[[VALID]]
// CHECK: torch.prim.If.yield %[[PICKED]], %[[ALL]]
// CHECK: } else {
// CHECK: %[[TRUE:.*]] = torch.vtensor.literal(dense<true> : tensor<i1>)
// CHECK: torch.prim.If.yield %{{.*}}, %[[TRUE]]
// CHECK: %[[FLAG:.*]] = torch.aten.view %[[IF]]#1
// CHECK: return %[[IF]]#0, %[[FLAG]]
func.func @index_in_a_branch(%x: !torch.vtensor<[8,4],f32>, %i: !torch.vtensor<[2],si64>, %c: !torch.bool) -> !torch.vtensor<[2,4],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.prim.If %c -> (!torch.vtensor<[2,4],f32>) {
    %1 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[8,4],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,4],f32>
    torch.prim.If.yield %1 : !torch.vtensor<[2,4],f32>
  } else {
    %2 = torch.aten.slice.Tensor %x, %int0, %int0, %int0, %int0 : !torch.vtensor<[8,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],f32>
    torch.prim.If.yield %2 : !torch.vtensor<[2,4],f32>
  }
  return %0 : !torch.vtensor<[2,4],f32>
}

// -----

// In a loop body the flag is carried: true on entry, and-ed with each
// iteration's checks, so an out-of-range index in any iteration is reported.
// CHECK-LABEL: func.func @index_in_a_loop(
// CHECK: %[[TRUE:.*]] = torch.vtensor.literal(dense<true> : tensor<i1>)
// CHECK: %[[LOOP:.*]]:2 = torch.prim.Loop %{{.*}}, %{{.*}}, init(%{{.*}}, %[[TRUE]]) {
// CHECK-NEXT: ^bb0(%{{.*}}: !torch.int, %[[A:.*]]: !torch.vtensor<[2,4],f32>, %[[SO_FAR:.*]]: !torch.vtensor<[],i1>):
// CHECK: %[[CLAMPED:.*]] = torch.aten.clamp
// CHECK: torch.aten.index_select %{{.*}}, %{{.*}}, %[[CLAMPED]]
// CHECK: %[[ALL:.*]] = torch.aten.all
// CHECK: %[[BOTH:.*]] = torch.aten.logical_and %[[SO_FAR]], %[[ALL]]
// CHECK: torch.prim.Loop.condition %{{.*}}, iter(%{{.*}}, %[[BOTH]] : !torch.vtensor<[2,4],f32>, !torch.vtensor<[],i1>)
// CHECK: %[[FLAG:.*]] = torch.aten.view %[[LOOP]]#1
// CHECK: return %[[LOOP]]#0, %[[FLAG]]
func.func @index_in_a_loop(%x: !torch.vtensor<[8,4],f32>, %i: !torch.vtensor<[2],si64>, %a: !torch.vtensor<[2,4],f32>, %go: !torch.bool) -> !torch.vtensor<[2,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %max = torch.constant.int 9223372036854775807
  %0 = torch.prim.Loop %max, %go, init(%a) {
  ^bb0(%iv: !torch.int, %carried: !torch.vtensor<[2,4],f32>):
    %1 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[8,4],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,4],f32>
    %2 = torch.aten.add.Tensor %carried, %1, %int1 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32>, !torch.int -> !torch.vtensor<[2,4],f32>
    torch.prim.Loop.condition %go, iter(%2 : !torch.vtensor<[2,4],f32>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}

// -----

// scatter_add into an argument (`x.scatter_add_(0, index, src)`): checked
// like scatter (0..SIZE-1, clamped), and guarded as an accumulating write:
// the source, or -0.0 where a check failed, is added at the clamped indices.
// CHECK-LABEL: func.func @guarded_scatter_add(
// CHECK: %[[X:.*]] = torch.copy.to_vtensor %arg0
// CHECK: %[[CLAMPED:.*]] = torch.aten.clamp %arg1
// CHECK: %[[OK:.*]] = torch.aten.all
// CHECK: %[[NEGATIVE_ZERO:.*]] = torch.constant.float -0.000000e+00
// CHECK: %[[ADDEND:.*]] = torch.aten.where.ScalarOther %[[OK]], %arg2, %[[NEGATIVE_ZERO]] : !torch.vtensor<[],i1>, !torch.vtensor<[2,4],f32>, !torch.float -> !torch.vtensor<[2,4],f32>
// CHECK: %[[ADDED:.*]] = torch.aten.scatter_add %[[X]], %{{.*}}, %[[CLAMPED]], %[[ADDEND]]
// CHECK: torch.overwrite.tensor.contents %[[ADDED]] overwrites %arg0
func.func @guarded_scatter_add(%x: !torch.tensor<[6,4],f32>, %index: !torch.vtensor<[2,4],si64>, %src: !torch.vtensor<[2,4],f32>) {
  %int0 = torch.constant.int 0
  %0 = torch.copy.to_vtensor %x : !torch.vtensor<[6,4],f32>
  %1 = torch.aten.scatter_add %0, %int0, %index, %src : !torch.vtensor<[6,4],f32>, !torch.int, !torch.vtensor<[2,4],si64>, !torch.vtensor<[2,4],f32> -> !torch.vtensor<[6,4],f32>
  torch.overwrite.tensor.contents %1 overwrites %x : !torch.vtensor<[6,4],f32>, !torch.tensor<[6,4],f32>
  return
}
