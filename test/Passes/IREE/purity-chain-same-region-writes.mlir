// RUN: purity-opt %s --purity-chain-same-region-writes --split-input-file --allow-unregistered-dialect | filecheck %s

// A row written at a runtime position, read, then written again at the same
// place (purity-check-indices' restore, folded onto the argument): the
// second write goes on top of the first, its offset through a barrier.
// CHECK-LABEL: func.func @restore_on_top_of_the_write(
// CHECK-SAME: %[[CACHE:arg[0-9]+]]: tensor<8x4xf32> {iree.abi.output = 1 : index}
// CHECK: %[[WRITTEN:.*]] = tensor.insert_slice %{{.*}} into %[[CACHE]][%[[AT:.*]], 0] [1, 4] [1, 1]
// CHECK: %[[READ:.*]] = arith.addf %[[WRITTEN]], %[[WRITTEN]]
// CHECK: %[[OPAQUE:.*]] = "util.optimization_barrier"(%[[AT]]) : (index) -> index
// CHECK: %[[RESTORED:.*]] = tensor.insert_slice %{{.*}} into %[[WRITTEN]][%[[OPAQUE]], 0] [1, 4] [1, 1]
// CHECK: return %[[READ]], %[[RESTORED]]
func.func @restore_on_top_of_the_write(%row: tensor<1x4xf32>, %cache: tensor<8x4xf32> {iree.abi.output = 1 : index}, %at: index, %old: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %written = tensor.insert_slice %row into %cache[%at, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %read = arith.addf %written, %written : tensor<8x4xf32>
  %restored = tensor.insert_slice %old into %cache[%at, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %read, %restored : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// At a constant position: the first offset becomes a value, through a barrier.
// CHECK-LABEL: func.func @constant_position(
// CHECK-SAME: %[[CACHE:arg[0-9]+]]: tensor<8x4xf32> {iree.abi.output = 1 : index}
// CHECK: %[[WRITTEN:.*]] = tensor.insert_slice %{{.*}} into %[[CACHE]][5, 0] [1, 4] [1, 1]
// CHECK: %[[FIVE:.*]] = arith.constant 5 : index
// CHECK: %[[OPAQUE:.*]] = "util.optimization_barrier"(%[[FIVE]]) : (index) -> index
// CHECK: %[[RESTORED:.*]] = tensor.insert_slice %{{.*}} into %[[WRITTEN]][%[[OPAQUE]], 0] [1, 4] [1, 1]
// CHECK: return %{{.*}}, %[[RESTORED]]
func.func @constant_position(%row: tensor<1x4xf32>, %cache: tensor<8x4xf32> {iree.abi.output = 1 : index}, %old: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %written = tensor.insert_slice %row into %cache[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %read = arith.addf %written, %written : tensor<8x4xf32>
  %restored = tensor.insert_slice %old into %cache[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %read, %restored : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// The first write's value is read after the second: writing in place on
// top of it would clobber what is still read. Left as it is.
// CHECK-LABEL: func.func @first_write_read_after_the_second(
// CHECK-NOT: util.optimization_barrier
// CHECK: tensor.insert_slice %{{.*}} into %[[CACHE:arg[0-9]+]][5, 0]
// CHECK: tensor.insert_slice %{{.*}} into %[[CACHE]][5, 0]
func.func @first_write_read_after_the_second(%row: tensor<1x4xf32>, %cache: tensor<8x4xf32> {iree.abi.output = 1 : index}, %old: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %written = tensor.insert_slice %row into %cache[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %restored = tensor.insert_slice %old into %cache[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %read = arith.addf %written, %written : tensor<8x4xf32>
  return %read, %restored : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Other regions, and an argument not tied to a result: left as they are.
// CHECK-LABEL: func.func @other_regions_and_untied(
// CHECK-NOT: util.optimization_barrier
// CHECK: tensor.insert_slice %{{.*}} into %[[CACHE:arg[0-9]+]][5, 0]
// CHECK: tensor.insert_slice %{{.*}} into %[[CACHE]][6, 0]
// CHECK: tensor.insert_slice %{{.*}} into %[[OTHER:arg[0-9]+]][5, 0]
// CHECK: tensor.insert_slice %{{.*}} into %[[OTHER]][5, 0]
func.func @other_regions_and_untied(%row: tensor<1x4xf32>, %cache: tensor<8x4xf32> {iree.abi.output = 1 : index}, %other: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %a = tensor.insert_slice %row into %cache[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %b = tensor.insert_slice %row into %cache[6, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %c = tensor.insert_slice %row into %other[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %d = tensor.insert_slice %row into %other[5, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %a, %b, %c, %d : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
