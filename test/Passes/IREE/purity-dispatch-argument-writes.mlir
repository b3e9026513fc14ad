// RUN: purity-opt %s --purity-dispatch-argument-writes --split-input-file --allow-unregistered-dialect | filecheck %s

// A KV-cache row write into a tied argument: the row passes through a generic
// that reads the destination row (the bits compared, the row's value kept),
// and that generic's result is inserted. The row is an argument: no barrier.
// CHECK-LABEL: func.func @row_write(
// CHECK-SAME: %[[CACHE:[a-z0-9]+]]: tensor<64x32xf32> {iree.abi.output = 0 : index}
// CHECK-SAME: %[[ROW:[a-z0-9]+]]: tensor<1x32xf32>
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[CACHE]][3, 0] [1, 32] [1, 1] : tensor<64x32xf32> to tensor<1x32xf32>
// CHECK-NOT: util.optimization_barrier
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[ROW]] : tensor<1x32xf32>) outs(%[[OLD]] : tensor<1x32xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK: %[[IN_BITS:.*]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK: %[[OUT_BITS:.*]] = arith.bitcast %[[OUT]] : f32 to i32
// CHECK: %[[DIFF:.*]] = arith.xori %[[IN_BITS]], %[[OUT_BITS]] : i32
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[DIFF]], %{{.*}} : i32
// CHECK: %[[KEPT:.*]] = arith.select %[[SAME]], %[[OUT]], %[[IN]] : f32
// CHECK: linalg.yield %[[KEPT]] : f32
// CHECK: %[[WRITTEN:.*]] = tensor.insert_slice %[[NEW]] into %[[CACHE]][3, 0] [1, 32] [1, 1]
// CHECK: return %[[WRITTEN]]
func.func @row_write(%cache: tensor<64x32xf32> {iree.abi.output = 0 : index}, %row: tensor<1x32xf32>) -> tensor<64x32xf32> {
  %written = tensor.insert_slice %row into %cache[3, 0] [1, 32] [1, 1] : tensor<1x32xf32> into tensor<64x32xf32>
  return %written : tensor<64x32xf32>
}

// -----

// Two writes in a chain, the second result tied (to the argument's result
// index 1): both writes read their destination. An integer element needs no
// bitcast.
// CHECK-LABEL: func.func @chain_of_writes(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x4xi64> {iree.abi.output = 1 : index}
// CHECK-NOT: arith.bitcast
// CHECK: %[[OLD0:.*]] = tensor.extract_slice %[[X]][0, 0] [1, 4] [1, 1] : tensor<8x4xi64> to tensor<4xi64>
// CHECK: %[[NEW0:.*]] = linalg.generic {{.*}} outs(%[[OLD0]] : tensor<4xi64>)
// CHECK: arith.xori %{{.*}}, %{{.*}} : i64
// CHECK: %[[FIRST:.*]] = tensor.insert_slice %[[NEW0]] into %[[X]][0, 0] [1, 4] [1, 1] : tensor<4xi64> into tensor<8x4xi64>
// CHECK: %[[OLD1:.*]] = tensor.extract_slice %[[FIRST]][5, 0] [1, 4] [1, 1] : tensor<8x4xi64> to tensor<4xi64>
// CHECK: %[[NEW1:.*]] = linalg.generic {{.*}} outs(%[[OLD1]] : tensor<4xi64>)
// CHECK: %[[SECOND:.*]] = tensor.insert_slice %[[NEW1]] into %[[FIRST]][5, 0] [1, 4] [1, 1] : tensor<4xi64> into tensor<8x4xi64>
// CHECK: return %{{.*}}, %[[SECOND]]
func.func @chain_of_writes(%x: tensor<8x4xi64> {iree.abi.output = 1 : index}, %a: tensor<4xi64>, %b: tensor<4xi64>) -> (tensor<i64>, tensor<8x4xi64>) {
  %first = tensor.insert_slice %a into %x[0, 0] [1, 4] [1, 1] : tensor<4xi64> into tensor<8x4xi64>
  %second = tensor.insert_slice %b into %first[5, 0] [1, 4] [1, 1] : tensor<4xi64> into tensor<8x4xi64>
  %c0 = arith.constant dense<0> : tensor<i64>
  return %c0, %second : tensor<i64>, tensor<8x4xi64>
}

// -----

// A write into an argument that is not tied (IREE may still write it in
// place into the argument's buffer, when the argument is not used again)
// reads its destination too; a write into a fresh tensor is left alone.
// CHECK-LABEL: func.func @untied_write(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x4xf32>
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[X]][2, 0] [1, 4] [1, 1]
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} outs(%[[OLD]] : tensor<1x4xf32>)
// CHECK: %[[WRITTEN:.*]] = tensor.insert_slice %[[NEW]] into %[[X]][2, 0] [1, 4] [1, 1]
// CHECK: %[[EMPTY:.*]] = tensor.empty
// CHECK-NOT: linalg.generic
// CHECK: tensor.insert_slice %{{.*}} into %[[EMPTY]]
func.func @untied_write(%x: tensor<8x4xf32>, %row: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %written = tensor.insert_slice %row into %x[2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %empty = tensor.empty() : tensor<8x4xf32>
  %fresh = tensor.insert_slice %row into %empty[2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %written, %fresh : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A slice filled with a constant (`x[1:3] = 0`), half precision, through a
// reshape of the argument: the fill's value is read as a 0-d tensor at every
// position (the filled slice is never made), behind a barrier so that the
// copy does not fold into a constant; the generic reads the destination.
// CHECK-LABEL: func.func @filled_slice(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4x4xf16> {iree.abi.output = 0 : index}
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f16
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[FLAT]][1, 0] [2, 4] [1, 1]
// CHECK: %[[SCALAR:.*]] = tensor.from_elements %[[ZERO]] : tensor<f16>
// CHECK: %[[SOURCE:.*]] = "util.optimization_barrier"(%[[SCALAR]])
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[SOURCE]] : tensor<f16>) outs(%[[OLD]] : tensor<2x4xf16>)
// CHECK: arith.bitcast %{{.*}} : f16 to i16
// CHECK: tensor.insert_slice %[[NEW]] into %[[FLAT]][1, 0] [2, 4] [1, 1]
func.func @filled_slice(%x: tensor<2x4x4xf16> {iree.abi.output = 0 : index}) -> tensor<2x4x4xf16> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x4xf16> into tensor<8x4xf16>
  %zero = arith.constant 0.0 : f16
  %empty = tensor.empty() : tensor<2x4xf16>
  %fill = linalg.fill ins(%zero : f16) outs(%empty : tensor<2x4xf16>) -> tensor<2x4xf16>
  %written = tensor.insert_slice %fill into %flat[1, 0] [2, 4] [1, 1] : tensor<2x4xf16> into tensor<8x4xf16>
  %shaped = tensor.expand_shape %written [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf16> into tensor<2x4x4xf16>
  return %shaped : tensor<2x4x4xf16>
}

// -----

// A pointwise update written in place by a dispatch that reads the argument
// needs nothing: no insert_slice, nothing added.
// CHECK-LABEL: func.func @pointwise_update(
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic
// CHECK-NOT: arith.xori
// CHECK: return
#map = affine_map<(d0) -> (d0)>
func.func @pointwise_update(%x: tensor<8xf32> {iree.abi.output = 0 : index}) -> tensor<8xf32> {
  %empty = tensor.empty() : tensor<8xf32>
  %doubled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %in, %in : f32
    linalg.yield %sum : f32
  } -> tensor<8xf32>
  return %doubled : tensor<8xf32>
}

// -----

// A row write into a loop's result: when the loop runs no iteration, that
// result is the loop's initial value, the argument's buffer, so the write
// reads its destination as a write into the argument does.
// CHECK-LABEL: func.func @row_write_into_loop_result(
// CHECK: %[[LOOP:.*]] = scf.while
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[LOOP]][0] [1] [1] : tensor<3xf32> to tensor<1xf32>
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} outs(%[[OLD]] : tensor<1xf32>)
// CHECK: tensor.insert_slice %[[NEW]] into %[[LOOP]][0] [1] [1]
func.func @row_write_into_loop_result(%x: tensor<3xf32>, %go: i1, %row: tensor<1xf32>) -> tensor<3xf32> {
  %0 = scf.while (%t = %x) : (tensor<3xf32>) -> tensor<3xf32> {
    scf.condition(%go) %t : tensor<3xf32>
  } do {
  ^bb0(%t: tensor<3xf32>):
    scf.yield %t : tensor<3xf32>
  }
  %written = tensor.insert_slice %row into %0[0] [1] [1] : tensor<1xf32> into tensor<3xf32>
  return %written : tensor<3xf32>
}
