// RUN: purity-opt %s --purity-materialize-uniform-reduction-inputs --split-input-file | filecheck %s

// A sum of a fill with a runtime value reads it through a barrier; the other
// user of the fill still reads it directly.
// CHECK-LABEL: func.func @sum_of_a_runtime_fill(
// CHECK: %[[FILL:[0-9]+]] = linalg.fill
// CHECK: %[[KEPT:[0-9]+]] = "util.optimization_barrier"(%[[FILL]]) : (tensor<5xf32>) -> tensor<5xf32>
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[KEPT]] : tensor<5xf32>)
// CHECK: return %{{.*}}, %[[FILL]] :
#vector = affine_map<(d0) -> (d0)>
#to_scalar = affine_map<(d0) -> ()>
func.func @sum_of_a_runtime_fill(%a: tensor<f32>) -> (tensor<f32>, tensor<5xf32>) {
  %zero = arith.constant 0.0 : f32
  %v = tensor.extract %a[] : tensor<f32>
  %e = tensor.empty() : tensor<5xf32>
  %filled = linalg.fill ins(%v : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
  %e0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#vector, #to_scalar], iterator_types = ["reduction"]} ins(%filled : tensor<5xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum, %filled : tensor<f32>, tensor<5xf32>
}

// -----

// Elementwise ops on a generic yielding a constant, through a reshape, still
// make every element one value: the product reads a barrier.
// CHECK-LABEL: func.func @product_of_a_scaled_constant(
// CHECK: %[[CONSTANT:[0-9]+]] = linalg.generic
// CHECK: %[[SCALED:[0-9]+]] = linalg.generic {{.*}} ins(%[[CONSTANT]] : tensor<2x2xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[SCALED]]
// CHECK: %[[KEPT:[0-9]+]] = "util.optimization_barrier"(%[[FLAT]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[KEPT]] : tensor<4xf32>)
#matrix = affine_map<(d0, d1) -> (d0, d1)>
#vector = affine_map<(d0) -> (d0)>
#to_scalar = affine_map<(d0) -> ()>
func.func @product_of_a_scaled_constant(%x: tensor<2x2xf32>) -> tensor<f32> {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %constant = linalg.generic {indexing_maps = [#matrix, #matrix], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %two : f32
  } -> tensor<2x2xf32>
  %scaled = linalg.generic {indexing_maps = [#matrix, #matrix], iterator_types = ["parallel", "parallel"]} ins(%constant : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %three : f32
    linalg.yield %m : f32
  } -> tensor<2x2xf32>
  %flat = tensor.collapse_shape %scaled [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%one : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %product = linalg.generic {indexing_maps = [#vector, #to_scalar], iterator_types = ["reduction"]} ins(%flat : tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.mulf %in, %out : f32
    linalg.yield %p : f32
  } -> tensor<f32>
  return %product : tensor<f32>
}

// -----

// A sum of a row-wise broadcast of a splat constant, reducing the inner dim.
// CHECK-LABEL: func.func @row_sums_of_a_splat(
// CHECK: %[[KEPT:[0-9]+]] = "util.optimization_barrier"(%cst{{.*}}) : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[KEPT]] : tensor<3x5xf32>)
#matrix = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
func.func @row_sums_of_a_splat() -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %splat = arith.constant dense<3.0> : tensor<3x5xf32>
  %e0 = tensor.empty() : tensor<3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<3xf32>) -> tensor<3xf32>
  %sums = linalg.generic {indexing_maps = [#matrix, #rows], iterator_types = ["parallel", "reduction"]} ins(%splat : tensor<3x5xf32>) outs(%acc : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %sums : tensor<3xf32>
}

// -----

// Inputs that vary are left alone: a function argument, an elementwise op
// reading one, `linalg.index` (an arange), and a fill next to a varying
// input of the same reduction (its body reads the varying one).
// CHECK-LABEL: func.func @varying_inputs(
// CHECK-NOT: util.optimization_barrier
// CHECK: return
#vector = affine_map<(d0) -> (d0)>
#to_scalar = affine_map<(d0) -> ()>
func.func @varying_inputs(%x: tensor<4xf32>, %v: f32) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %of_x = linalg.generic {indexing_maps = [#vector, #to_scalar], iterator_types = ["reduction"]} ins(%x : tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %doubled = linalg.generic {indexing_maps = [#vector, #vector], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  %of_doubled = linalg.generic {indexing_maps = [#vector, #to_scalar], iterator_types = ["reduction"]} ins(%doubled : tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %arange = linalg.generic {indexing_maps = [#vector], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i64
    %f = arith.sitofp %n : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32>
  %of_arange = linalg.generic {indexing_maps = [#vector, #to_scalar], iterator_types = ["reduction"]} ins(%arange : tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %filled = linalg.fill ins(%v : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %dot = linalg.generic {indexing_maps = [#vector, #vector, #to_scalar], iterator_types = ["reduction"]} ins(%filled, %x : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %in_x: f32, %out: f32):
    %p = arith.mulf %in, %in_x : f32
    %s = arith.addf %p, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %of_x, %of_doubled, %of_arange, %dot : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
