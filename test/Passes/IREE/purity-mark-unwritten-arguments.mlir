// RUN: purity-opt %s --purity-mark-unwritten-arguments --split-input-file --allow-unregistered-dialect | filecheck %s

// An input of a linalg op is only read; the op's init (outs) may be updated
// in place by IREE.
// CHECK-LABEL: func.func @ins_and_outs(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {purity.unwritten}, %{{.*}}: tensor<4xf32>)
#map = affine_map<(d0) -> (d0)>
func.func @ins_and_outs(%read: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %sum = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%read : tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %added = arith.addf %in, %out : f32
    linalg.yield %added : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// The destination of an insert is written (docs/architecture.md, IREE behaviours: IREE stored the result
// in its buffer); the inserted source is read.
// CHECK-LABEL: func.func @insert(
// CHECK-SAME: %{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<1x3xf32> {purity.unwritten})
func.func @insert(%dest: tensor<4x3xf32>, %row: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %written = tensor.insert_slice %row into %dest[1, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  return %written : tensor<4x3xf32>
}

// -----

// Through view-like ops: a slice that is only read keeps the argument
// unwritten; a reshape whose result becomes an insert destination does not.
// CHECK-LABEL: func.func @through_views(
// CHECK-SAME: %{{.*}}: tensor<4x3xf32> {purity.unwritten}, %{{.*}}: tensor<12xf32>, %{{.*}}: tensor<1x3xf32> {purity.unwritten})
func.func @through_views(%a: tensor<4x3xf32>, %b: tensor<12xf32>, %row: tensor<1x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %slice = tensor.extract_slice %a[2, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
  %c0 = arith.constant 0 : index
  %scalar = tensor.extract %slice[%c0] : tensor<3xf32>
  %empty = tensor.empty() : tensor<3xf32>
  %filled = linalg.fill ins(%scalar : f32) outs(%empty : tensor<3xf32>) -> tensor<3xf32>
  %shaped = tensor.expand_shape %b [[0, 1]] output_shape [4, 3] : tensor<12xf32> into tensor<4x3xf32>
  %written = tensor.insert_slice %row into %shaped[0, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
  return %filled, %written : tensor<3xf32>, tensor<4x3xf32>
}

// -----

// A returned argument and a scatter destination are not marked; the
// scatter's updates and indices are.
// CHECK-LABEL: func.func @returned_and_scattered(
// CHECK-SAME: %{{.*}}: tensor<2xf32>, %{{.*}}: tensor<2x2xf32>, %{{.*}}: tensor<1x2xf32> {purity.unwritten}, %{{.*}}: tensor<1x1xi64> {purity.unwritten})
func.func @returned_and_scattered(%returned: tensor<2xf32>, %dest: tensor<2x2xf32>, %updates: tensor<1x2xf32>, %indices: tensor<1x1xi64>) -> (tensor<2xf32>, tensor<2x2xf32>) {
  %scattered = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<1x2xf32>, tensor<1x1xi64>) outs(%dest : tensor<2x2xf32>) {
  ^bb0(%new: f32, %old: f32):
    tm_tensor.yield %new : f32
  } -> tensor<2x2xf32>
  return %returned, %scattered : tensor<2xf32>, tensor<2x2xf32>
}

// -----

// An argument tied to a result (iree.abi.output) is written through the tie,
// even when its uses only read it.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {iree.abi.output = 0 : index}, %{{.*}}: tensor<4xf32> {purity.unwritten})
#map = affine_map<(d0) -> (d0)>
func.func @tied(%param: tensor<4xf32> {iree.abi.output = 0 : index}, %grad: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %updated = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%param, %grad : tensor<4xf32>, tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %sum = arith.addf %p, %g : f32
    linalg.yield %sum : f32
  } -> tensor<4xf32>
  return %updated : tensor<4xf32>
}

// -----

// Through IREE's barrier (generic form), as the passes before this one put it
// in front of a copy: the argument is still only read.
// CHECK-LABEL: func.func @through_barrier(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {purity.unwritten}, %{{.*}}: tensor<4xf32>)
#map = affine_map<(d0) -> (d0)>
func.func @through_barrier(%read: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %apart = "util.optimization_barrier"(%read) : (tensor<4xf32>) -> tensor<4xf32>
  %copy = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%apart : tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4xf32>
  return %copy : tensor<4xf32>
}

// -----

// Named ops with one init and no operandSegmentSizes (a Linear's weight is
// read through linalg.transpose): their input is only read, their init may
// be updated in place.
// CHECK-LABEL: func.func @transpose_and_broadcast(
// CHECK-SAME: %{{.*}}: tensor<2x3xf32> {purity.unwritten}, %{{.*}}: tensor<3x2xf32>, %{{.*}}: tensor<3xf32> {purity.unwritten}, %{{.*}}: tensor<2x3xf32>)
func.func @transpose_and_broadcast(%weight: tensor<2x3xf32>, %init: tensor<3x2xf32>, %bias: tensor<3xf32>, %out: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %transposed = linalg.transpose ins(%weight : tensor<2x3xf32>) outs(%init : tensor<3x2xf32>) permutation = [1, 0]
  %broadcast = linalg.broadcast ins(%bias : tensor<3xf32>) outs(%out : tensor<2x3xf32>) dimensions = [0]
  return %transposed, %broadcast : tensor<3x2xf32>, tensor<2x3xf32>
}

// -----

// linalg.map: every operand but the last (its init) is an input.
// CHECK-LABEL: func.func @map(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {purity.unwritten}, %{{.*}}: tensor<4xf32> {purity.unwritten}, %{{.*}}: tensor<4xf32>)
func.func @map(%a: tensor<4xf32>, %b: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %sum = linalg.map { arith.addf } ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>)
  return %sum : tensor<4xf32>
}
