// RUN: purity-opt %s --purity-split-scalar-dispatches=max-run=2 --split-input-file | filecheck %s

// Every second rank-0 generic's result goes through a barrier, and its uses
// read the barrier's result; tensors of rank 1 or more are left alone.
// CHECK-LABEL: func.func @scalar_runs(
// CHECK: %[[A:[0-9]+]] = linalg.generic
// CHECK-NOT: util.optimization_barrier
// CHECK: %[[B:[0-9]+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<f32>)
// CHECK: } -> tensor<f32>
// CHECK-NEXT: %[[KEPT:[0-9]+]] = "util.optimization_barrier"(%[[B]]) : (tensor<f32>) -> tensor<f32>
// CHECK: %[[C:[0-9]+]] = linalg.generic {{.*}} ins(%[[KEPT]] : tensor<f32>)
// CHECK-NOT: util.optimization_barrier
// CHECK: return %[[KEPT]], %[[C]], %{{.*}} : tensor<f32>, tensor<f32>, tensor<4xf32>
#scalar = affine_map<() -> ()>
#vector = affine_map<(d0) -> (d0)>
func.func @scalar_runs(%step: tensor<f32>, %p: tensor<4xf32>) -> (tensor<f32>, tensor<f32>, tensor<4xf32>) {
  %empty = tensor.empty() : tensor<f32>
  %a = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%step : tensor<f32>) outs(%empty : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %sum = arith.addf %in, %one : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  %b = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%a : tensor<f32>) outs(%empty : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %twice = arith.mulf %in, %in : f32
    linalg.yield %twice : f32
  } -> tensor<f32>
  %c = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%b : tensor<f32>) outs(%empty : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %negated = arith.negf %in : f32
    linalg.yield %negated : f32
  } -> tensor<f32>
  %empty4 = tensor.empty() : tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#vector, #vector], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%empty4 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %doubled = arith.addf %in, %in : f32
    linalg.yield %doubled : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#vector, #vector], iterator_types = ["parallel"]} ins(%d : tensor<4xf32>) outs(%empty4 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %doubled = arith.addf %in, %in : f32
    linalg.yield %doubled : f32
  } -> tensor<4xf32>
  return %b, %c, %e : tensor<f32>, tensor<f32>, tensor<4xf32>
}
