// RUN: purity-opt %s --purity-decompose-strided --split-input-file | filecheck %s

// diagonal_scatter of a 2x3 base with offset 1: the diagonal covers flat
// elements 1 and 5; element 1 takes src[0], element 5 takes src[1].
// CHECK-LABEL: func.func @diagonal_scatter(
// CHECK-SAME: %[[BASE:.*]]: !torch.vtensor<[2,3],f32>, %[[SRC:.*]]: !torch.vtensor<[2],f32>)
// CHECK: %[[FLAT:.*]] = torch.aten.view %[[BASE]], %{{.*}} : !torch.vtensor<[2,3],f32>, !torch.list<int> -> !torch.vtensor<[6],f32>
// CHECK: %[[FSRC:.*]] = torch.aten.view %[[SRC]], %{{.*}} : !torch.vtensor<[2],f32>, !torch.list<int> -> !torch.vtensor<[2],f32>
// CHECK: %[[GATHER:.*]] = torch.vtensor.literal(dense<[0, 0, 0, 0, 0, 1]> : tensor<6xi64>) : !torch.vtensor<[6],si64>
// CHECK: %[[PICKED:.*]] = torch.aten.index_select %[[FSRC]], %{{.*}}, %[[GATHER]] : {{.*}} -> !torch.vtensor<[6],f32>
// CHECK: %[[MASK:.*]] = torch.vtensor.literal(dense<[false, true, false, false, false, true]> : tensor<6xi1>) : !torch.vtensor<[6],i1>
// CHECK: %[[MERGED:.*]] = torch.aten.where.self %[[MASK]], %[[PICKED]], %[[FLAT]]
// CHECK: %[[OUT:.*]] = torch.aten.view %[[MERGED]], %{{.*}} -> !torch.vtensor<[2,3],f32>
// CHECK-NOT: diagonal_scatter
// CHECK: return %[[OUT]]
func.func @diagonal_scatter(%base: !torch.vtensor<[2,3],f32>, %src: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2,3],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.diagonal_scatter %base, %src, %int1, %int0, %int1 : !torch.vtensor<[2,3],f32>, !torch.vtensor<[2],f32>, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}

// -----

// as_strided_scatter of size [2], stride [3], offset 1 into 6 elements:
// flat elements 1 and 4.
// CHECK-LABEL: func.func @as_strided_scatter(
// CHECK: torch.vtensor.literal(dense<[0, 0, 0, 0, 1, 0]> : tensor<6xi64>)
// CHECK: torch.vtensor.literal(dense<[false, true, false, false, true, false]> : tensor<6xi1>)
// CHECK-NOT: as_strided_scatter
func.func @as_strided_scatter(%base: !torch.vtensor<[6],f32>, %src: !torch.vtensor<[2],f32>) -> !torch.vtensor<[6],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int3 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.as_strided_scatter %base, %src, %size, %stride, %int1 : !torch.vtensor<[6],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[6],f32>
  return %0 : !torch.vtensor<[6],f32>
}

// -----

// A read through as_strided is a gather of flat elements 1 and 4.
// CHECK-LABEL: func.func @as_strided_read(
// CHECK: %[[FLAT:.*]] = torch.aten.view %{{.*}} -> !torch.vtensor<[6],f32>
// CHECK: %[[POS:.*]] = torch.vtensor.literal(dense<[1, 4]> : tensor<2xi64>) : !torch.vtensor<[2],si64>
// CHECK: %[[PICKED:.*]] = torch.aten.index_select %[[FLAT]], %{{.*}}, %[[POS]] : {{.*}} -> !torch.vtensor<[2],f32>
// CHECK: torch.aten.view %[[PICKED]], %{{.*}} -> !torch.vtensor<[2],f32>
// CHECK-NOT: torch.aten.as_strided
func.func @as_strided_read(%base: !torch.vtensor<[6],f32>) -> !torch.vtensor<[2],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int3 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.as_strided %base, %size, %stride, %int1 : !torch.vtensor<[6],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}
