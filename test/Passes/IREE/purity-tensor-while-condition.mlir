// RUN: purity-opt %s --purity-tensor-while-condition --split-input-file | filecheck %s

// torch-mlir's while-like loop (an i1 condition carried, tested in the
// before region, computed at the end of the body): the condition becomes a
// tensor<i8> that both regions carry, the before region forwards every
// operand, and the body's next test is combined with the one it entered
// under; the loop's tensor results replace the old ones.
// CHECK-LABEL: func.func @torch_mlir_while(
// CHECK-SAME: %[[FIRST:.*]]: i1, %[[X:.*]]: tensor<3xf32>, %[[LIMIT:.*]]: f32)
// CHECK: %[[WIDE:.*]] = arith.extui %[[FIRST]] : i1 to i8
// CHECK: %[[INITIAL:.*]] = tensor.from_elements %[[WIDE]] : tensor<i8>
// CHECK: %[[LOOP:.*]]:2 = scf.while (%[[C:.*]] = %[[INITIAL]], %[[T:.*]] = %[[X]]) : (tensor<i8>, tensor<3xf32>) -> (tensor<i8>, tensor<3xf32>) {
// CHECK: %[[E:.*]] = tensor.extract %[[C]][] : tensor<i8>
// CHECK: %[[HOLDS:.*]] = arith.cmpi ne, %[[E]], %{{.*}} : i8
// CHECK: scf.condition(%[[HOLDS]]) %[[C]], %[[T]] : tensor<i8>, tensor<3xf32>
// CHECK: } do {
// CHECK: ^bb0(%[[C2:.*]]: tensor<i8>, %[[T2:.*]]: tensor<3xf32>):
// CHECK: %[[NEXT:.*]] = arith.addf
// CHECK: %[[TEST:.*]] = arith.cmpf olt
// CHECK: %[[TEST8:.*]] = arith.extui %[[TEST]] : i1 to i8
// CHECK: %[[ENTERED:.*]] = tensor.extract %[[C2]][] : tensor<i8>
// CHECK: %[[BOTH:.*]] = arith.andi %[[TEST8]], %[[ENTERED]] : i8
// CHECK: %[[NEXT_C:.*]] = tensor.from_elements %[[BOTH]] : tensor<i8>
// CHECK: scf.yield %[[NEXT_C]], %{{.*}} : tensor<i8>, tensor<3xf32>
// CHECK: return %[[LOOP]]#1 : tensor<3xf32>
func.func @torch_mlir_while(%first: i1, %x: tensor<3xf32>, %limit: f32) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %0 = scf.while (%c = %first, %t = %x) : (i1, tensor<3xf32>) -> tensor<3xf32> {
    scf.condition(%c) %t : tensor<3xf32>
  } do {
  ^bb0(%t: tensor<3xf32>):
    %e = tensor.extract %t[%c0] : tensor<3xf32>
    %n = arith.addf %e, %one : f32
    %next = tensor.insert %n into %t[%c0] : tensor<3xf32>
    %test = arith.cmpf olt, %n, %limit : f32
    scf.yield %test, %next : i1, tensor<3xf32>
  }
  return %0 : tensor<3xf32>
}

// -----

// A loop whose before region computes its condition (the form IREE
// compiles already) is left alone.
// CHECK-LABEL: func.func @canonical_while(
// CHECK: scf.while (%{{.*}} = %{{.*}}) : (tensor<3xf32>) -> tensor<3xf32> {
// CHECK-NOT: tensor<i8>
// CHECK: return
func.func @canonical_while(%x: tensor<3xf32>, %limit: f32) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %0 = scf.while (%t = %x) : (tensor<3xf32>) -> tensor<3xf32> {
    %e = tensor.extract %t[%c0] : tensor<3xf32>
    %test = arith.cmpf olt, %e, %limit : f32
    scf.condition(%test) %t : tensor<3xf32>
  } do {
  ^bb0(%t: tensor<3xf32>):
    %e = tensor.extract %t[%c0] : tensor<3xf32>
    %n = arith.addf %e, %one : f32
    %next = tensor.insert %n into %t[%c0] : tensor<3xf32>
    scf.yield %next : tensor<3xf32>
  }
  return %0 : tensor<3xf32>
}
