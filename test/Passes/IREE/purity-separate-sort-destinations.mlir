// RUN: purity-opt %s --purity-separate-sort-destinations --split-input-file | filecheck %s

// Two sorts start from one iota (CSE merged theirs): each gets a copy of
// its own, tagged 0 and 1 (IREE merges neither), that yields the iota's
// elements exactly (`select(never, tag, element)`). The values they sort
// (arguments only these sorts use) are left alone.
// CHECK-LABEL: func.func @two_sorts_one_iota(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32>, %[[Y:[a-z0-9]+]]: tensor<4xf32>
// CHECK: %[[IOTA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi64>)
// CHECK: linalg.index 0
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}} ins(%[[IOTA]] : tensor<4xi64>)
// CHECK: ^bb0(%[[E:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[F:.*]] = arith.sitofp %[[E]] : i64 to f32
// CHECK: %[[UNO:.*]] = arith.cmpf uno, %[[F]], %[[F]]
// CHECK: %[[ORD:.*]] = arith.cmpf ord, %[[F]], %[[F]]
// CHECK: %[[NEVER:.*]] = arith.andi %[[UNO]], %[[ORD]]
// CHECK: %[[TAG0:.*]] = arith.constant 0 : i64
// CHECK: arith.select %[[NEVER]], %[[TAG0]], %[[E]] : i64
// CHECK: tm_tensor.sort dimension(0) outs(%[[X]], %[[FIRST]] : tensor<4xf32>, tensor<4xi64>)
// CHECK: %[[SECOND:.*]] = linalg.generic {{.*}} ins(%[[IOTA]] : tensor<4xi64>)
// CHECK: arith.constant 1 : i64
// CHECK: tm_tensor.sort dimension(0) outs(%[[Y]], %[[SECOND]] : tensor<4xf32>, tensor<4xi64>)
func.func @two_sorts_one_iota(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xi64>) {
  %empty = tensor.empty() : tensor<4xi64>
  %iota = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%empty : tensor<4xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<4xi64>
  %s:2 = tm_tensor.sort dimension(0) outs(%x, %iota : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %le = arith.cmpf ole, %a, %b : f32
    tm_tensor.yield %le : i1
  } -> tensor<4xf32>, tensor<4xi64>
  %t:2 = tm_tensor.sort dimension(0) outs(%y, %iota : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %le = arith.cmpf ole, %a, %b : f32
    tm_tensor.yield %le : i1
  } -> tensor<4xf32>, tensor<4xi64>
  return %s#1, %t#1 : tensor<4xi64>, tensor<4xi64>
}

// -----

// One tensor sorted twice (ascending, descending) and read again: its
// values are copied for each sort (float elements need no conversion), and
// the add reads the original.
// CHECK-LABEL: func.func @one_tensor_sorted_twice(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<3xf32>
// CHECK: %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<3xf32>)
// CHECK-NOT: sitofp
// CHECK: arith.cmpf uno
// CHECK: tm_tensor.sort dimension(0) outs(%[[COPY]], %{{.*}} : tensor<3xf32>, tensor<3xi64>)
// CHECK: %[[COPY2:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<3xf32>)
// CHECK: tm_tensor.sort dimension(0) outs(%[[COPY2]], %{{.*}} : tensor<3xf32>, tensor<3xi64>)
// CHECK: arith.addf
// CHECK: return
func.func @one_tensor_sorted_twice(%x: tensor<3xf32>, %i: tensor<3xi64>, %j: tensor<3xi64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %s:2 = tm_tensor.sort dimension(0) outs(%x, %i : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %le = arith.cmpf ole, %a, %b : f32
    tm_tensor.yield %le : i1
  } -> tensor<3xf32>, tensor<3xi64>
  %t:2 = tm_tensor.sort dimension(0) outs(%x, %j : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %ge = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %ge : i1
  } -> tensor<3xf32>, tensor<3xi64>
  %sum = arith.addf %x, %x : tensor<3xf32>
  return %s#0, %t#0, %sum : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A computed value only its sort uses, and indices from an argument only
// this sort uses: nothing to separate.
// CHECK-LABEL: func.func @sole_uses(
// CHECK-NOT: arith.cmpf uno
// CHECK: tm_tensor.sort dimension(0) outs(%{{.*}}, %arg1 : tensor<3xf32>, tensor<3xi64>)
func.func @sole_uses(%x: tensor<3xf32>, %i: tensor<3xi64>) -> tensor<3xi64> {
  %doubled = arith.addf %x, %x : tensor<3xf32>
  %s:2 = tm_tensor.sort dimension(0) outs(%doubled, %i : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %le = arith.cmpf ole, %a, %b : f32
    tm_tensor.yield %le : i1
  } -> tensor<3xf32>, tensor<3xi64>
  return %s#1 : tensor<3xi64>
}
