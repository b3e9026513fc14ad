// RUN: purity-opt %s --purity-materialize-empty-results --split-input-file | filecheck %s

// A view of a tensor with no element (torch-mlir's view lowering divides by
// its sizes: SIGFPE) becomes aten.empty of the result's shape and dtype.
// CHECK-LABEL: func.func @view_of_an_empty_tensor(
// CHECK: %[[NONE:.*]] = torch.constant.none
// CHECK: %[[F32:.*]] = torch.constant.int 6
// CHECK: %[[TWO:.*]] = torch.constant.int 2
// CHECK: %[[ZERO:.*]] = torch.constant.int 0
// CHECK: %[[SHAPE:.*]] = torch.prim.ListConstruct %[[TWO]], %[[ZERO]] :
// CHECK: %[[EMPTY:.*]] = torch.aten.empty.memory_format %[[SHAPE]], %[[F32]], %[[NONE]], %[[NONE]], %[[NONE]], %[[NONE]] : {{.*}} -> !torch.vtensor<[2,0],f32>
// CHECK-NOT: torch.aten.view
// CHECK: return %[[EMPTY]] : !torch.vtensor<[2,0],f32>
func.func @view_of_an_empty_tensor(%x: !torch.vtensor<[0,2],f32>) -> !torch.vtensor<[2,0],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %shape = torch.prim.ListConstruct %int2, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten.view %x, %shape : !torch.vtensor<[0,2],f32>, !torch.list<int> -> !torch.vtensor<[2,0],f32>
  return %r : !torch.vtensor<[2,0],f32>
}

// -----

// The element type is kept (si64 is ScalarType 4); an op with elements is untouched.
// CHECK-LABEL: func.func @only_the_empty_result(
// CHECK: %[[SUM:.*]] = torch.aten.add.Tensor %{{.*}}, %{{.*}}, %{{.*}} : !torch.vtensor<[3],si64>
// CHECK: %[[I64:.*]] = torch.constant.int 4
// CHECK: %[[EMPTY:.*]] = torch.aten.empty.memory_format %{{.*}}, %[[I64]], {{.*}} -> !torch.vtensor<[3,0],si64>
// CHECK-NOT: torch.aten.mm
// CHECK: return %[[SUM]], %[[EMPTY]]
func.func @only_the_empty_result(%a: !torch.vtensor<[3],si64>, %b: !torch.vtensor<[3,4],si64>, %c: !torch.vtensor<[4,0],si64>) -> (!torch.vtensor<[3],si64>, !torch.vtensor<[3,0],si64>) {
  %int1 = torch.constant.int 1
  %sum = torch.aten.add.Tensor %a, %a, %int1 : !torch.vtensor<[3],si64>, !torch.vtensor<[3],si64>, !torch.int -> !torch.vtensor<[3],si64>
  %product = torch.aten.mm %b, %c : !torch.vtensor<[3,4],si64>, !torch.vtensor<[4,0],si64> -> !torch.vtensor<[3,0],si64>
  return %sum, %product : !torch.vtensor<[3],si64>, !torch.vtensor<[3,0],si64>
}

// -----

// A result of dynamic shape, a non-value tensor and several results are left alone.
// CHECK-LABEL: func.func @left_alone(
// CHECK: torch.aten.view %{{.*}} -> !torch.vtensor<[?,0],f32>
// CHECK: torch.aten.view %{{.*}} -> !torch.tensor<[0],f32>
// CHECK: torch.aten.var_mean.correction {{.*}} -> !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>
// CHECK-NOT: torch.aten.empty
func.func @left_alone(%x: !torch.vtensor<[?,0],f32>, %y: !torch.tensor<[0,1],f32>, %z: !torch.vtensor<[0,3],f32>) -> (!torch.vtensor<[?,0],f32>, !torch.tensor<[0],f32>, !torch.vtensor<[0],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %minus1 = torch.constant.int -1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %shape = torch.prim.ListConstruct %minus1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten.view %x, %shape : !torch.vtensor<[?,0],f32>, !torch.list<int> -> !torch.vtensor<[?,0],f32>
  %flat = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %s = torch.aten.view %y, %flat : !torch.tensor<[0,1],f32>, !torch.list<int> -> !torch.tensor<[0],f32>
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %var, %mean = torch.aten.var_mean.correction %z, %dims, %int1, %false : !torch.vtensor<[0,3],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>
  return %r, %s, %var : !torch.vtensor<[?,0],f32>, !torch.tensor<[0],f32>, !torch.vtensor<[0],f32>
}
