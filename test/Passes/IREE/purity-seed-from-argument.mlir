// RUN: purity-opt %s --purity-seed-from-argument --split-input-file | filecheck %s

// torch-mlir's module-global seed: each random op loads it, advances it and
// stores it. The first load reads the new argument, the second reads what the
// first store wrote; the stores and the global go.
// CHECK-LABEL: func.func @two_random_ops(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>, %[[SEED:.*]]: tensor<i64> {purity.rng_seed})
// CHECK-NOT: ml_program
// CHECK: %[[FIRST:.*]] = tensor.extract %[[SEED]][]
// CHECK: %[[NEXT:.*]] = tensor.insert %{{.*}} into %[[SEED]][]
// CHECK: %[[SECOND:.*]] = tensor.extract %[[NEXT]][]
// CHECK: return %[[FIRST]], %[[SECOND]]
// CHECK-NOT: ml_program
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @two_random_ops(%x: tensor<4xf32>) -> (i64, i64) {
    %multiplier = arith.constant 6364136223846793005 : i64
    %seed = ml_program.global_load @global_seed : tensor<i64>
    %first = tensor.extract %seed[] : tensor<i64>
    %advanced = arith.muli %first, %multiplier : i64
    %stored = tensor.insert %advanced into %seed[] : tensor<i64>
    ml_program.global_store @global_seed = %stored : tensor<i64>
    %seed2 = ml_program.global_load @global_seed : tensor<i64>
    %second = tensor.extract %seed2[] : tensor<i64>
    return %first, %second : i64, i64
  }
}

// -----

// Without random ops there is no global: the function is left as it is.
// CHECK-LABEL: func.func @no_random_ops(
// CHECK-SAME: %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
func.func @no_random_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Another global of the module is not a seed: kept, and no argument added.
// CHECK-LABEL: func.func @other_global(
// CHECK-SAME: %{{.*}}: tensor<4xf32>) -> tensor<i64>
// CHECK: ml_program.global_load @counter
module {
  ml_program.global private mutable @counter(dense<0> : tensor<i64>) : tensor<i64>
  func.func @other_global(%x: tensor<4xf32>) -> tensor<i64> {
    %value = ml_program.global_load @counter : tensor<i64>
    return %value : tensor<i64>
  }
}
