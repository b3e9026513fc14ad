// RUN: purity-opt %s --purity-merge-sibling-reductions --split-input-file | filecheck %s

// A variance's two sums, of the deviations and of their squares, read one
// tensor: one reduction with both inputs, both inits, both results; each
// body's ops yield in order, and the users read the merged results.
// CHECK-LABEL: func.func @sum_and_sum_of_squares(
// CHECK: %[[DEV:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0
// CHECK: %[[SQ:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[DEV]], %[[DEV]]
// CHECK: %[[BOTH:[0-9]+]]:2 = linalg.generic {indexing_maps = [#map, #map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%[[DEV]], %[[SQ]] : tensor<4x8xf64>, tensor<4x8xf64>) outs(%[[INIT:[0-9]+]], %[[INIT]] : tensor<4xf64>, tensor<4xf64>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %[[ACC_A:.*]]: f64, %[[ACC_B:.*]]: f64):
// CHECK-NEXT: %[[SUM_A:.*]] = arith.addf %[[A]], %[[ACC_A]] : f64
// CHECK-NEXT: %[[SUM_B:.*]] = arith.addf %[[B]], %[[ACC_B]] : f64
// CHECK-NEXT: linalg.yield %[[SUM_A]], %[[SUM_B]] : f64, f64
// CHECK-NOT: linalg.generic
// CHECK: return %[[BOTH]]#0, %[[BOTH]]#1 : tensor<4xf64>, tensor<4xf64>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum_and_sum_of_squares(%x: tensor<4x8xf64>, %shift: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x8xf64>
  %dev = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]} ins(%x, %shift : tensor<4x8xf64>, tensor<4xf64>) outs(%e : tensor<4x8xf64>) {
  ^bb0(%a: f64, %s: f64, %o: f64):
    %d = arith.subf %a, %s : f64
    linalg.yield %d : f64
  } -> tensor<4x8xf64>
  %e4 = tensor.empty() : tensor<4xf64>
  %init = linalg.fill ins(%zero : f64) outs(%e4 : tensor<4xf64>) -> tensor<4xf64>
  %sum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%dev : tensor<4x8xf64>) outs(%init : tensor<4xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %a, %acc : f64
    linalg.yield %s : f64
  } -> tensor<4xf64>
  %sq = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%dev, %dev : tensor<4x8xf64>, tensor<4x8xf64>) outs(%e : tensor<4x8xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    linalg.yield %m : f64
  } -> tensor<4x8xf64>
  %sumsq = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<4x8xf64>) outs(%init : tensor<4xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %a, %acc : f64
    linalg.yield %s : f64
  } -> tensor<4xf64>
  return %sum, %sumsq : tensor<4xf64>, tensor<4xf64>
}

// -----

// Three reductions of one input, one of them a max: one reduction of three
// results, in the order the ops had.
// CHECK-LABEL: func.func @three_over_one_tensor(
// CHECK: %[[ALL:[0-9]+]]:3 = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg0, %arg0, %arg0 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[ALL]]#0, %[[ALL]]#1, %[[ALL]]#2
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @three_over_one_tensor(%x: tensor<16xf32>, %init: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %sum = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %max = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %prod = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.mulf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %sum, %max, %prod : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// The two-pass variance: the second sum reads the first one's result (the
// mean), so they stay two reductions.
// CHECK-LABEL: func.func @second_reads_the_first(
// CHECK: %[[SUM:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["reduction"]}
// CHECK: %[[CENTRED:[0-9]+]] = linalg.generic {{.*}}ins(%arg0, %[[SUM]] :
// CHECK: %[[SQ:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[CENTRED]] :
// CHECK: return %[[SUM]], %[[SQ]]
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @second_reads_the_first(%x: tensor<16xf32>, %init: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %sum = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<16xf32>
  %centred = linalg.generic {indexing_maps = [#v, #s, #v], iterator_types = ["parallel"]} ins(%x, %sum : tensor<16xf32>, tensor<f32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %q = arith.mulf %d, %d : f32
    linalg.yield %q : f32
  } -> tensor<16xf32>
  %sq = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%centred : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %sum, %sq : tensor<f32>, tensor<f32>
}

// -----

// A user of the first sum sits between the two: it moves right after the
// merged op, which takes the second's place.
// CHECK-LABEL: func.func @first_used_in_between(
// CHECK: %[[BOTH:[0-9]+]]:2 = linalg.generic {{.*}}iterator_types = ["reduction"]}
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[TOTAL:.*]] = tensor.extract %[[BOTH]]#0[]
// CHECK-NEXT: return %[[TOTAL]], %[[BOTH]]#1
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @first_used_in_between(%x: tensor<16xf32>, %init: tensor<f32>) -> (f32, tensor<f32>) {
  %sum = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %total = tensor.extract %sum[] : tensor<f32>
  %max = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %total, %max : f32, tensor<f32>
}

// -----

// A user of the first sum that may have side effects (a call) sits between
// the two: it is not moved, and the reductions stay apart.
// CHECK-LABEL: func.func @called_in_between(
// CHECK: %[[SUM:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["reduction"]}
// CHECK: call @report(%[[SUM]])
// CHECK: %[[MAX:[0-9]+]] = linalg.generic {{.*}}iterator_types = ["reduction"]}
// CHECK-NOT: :2 = linalg.generic
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func private @report(tensor<f32>)
func.func @called_in_between(%x: tensor<16xf32>, %init: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %sum = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  call @report(%sum) : (tensor<f32>) -> ()
  %max = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %sum, %max : tensor<f32>, tensor<f32>
}

// -----

// Reductions of one size over unrelated tensors, and reductions of one
// tensor over different dims, stay apart.
// CHECK-LABEL: func.func @unrelated_or_other_dims(
// CHECK-COUNT-4: = linalg.generic
// CHECK-NOT: :2 = linalg.generic
#m = affine_map<(d0, d1) -> (d0, d1)>
#r0 = affine_map<(d0, d1) -> (d0)>
#r1 = affine_map<(d0, d1) -> (d1)>
func.func @unrelated_or_other_dims(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %sx = linalg.generic {indexing_maps = [#m, #r0], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %sy = linalg.generic {indexing_maps = [#m, #r0], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<4x4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %cx = linalg.generic {indexing_maps = [#m, #r1], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %cy = linalg.generic {indexing_maps = [#m, #r1], iterator_types = ["reduction", "parallel"]} ins(%y : tensor<4x4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %sx, %sy, %cx, %cy : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Dynamic sizes: the loop ranges are not known to be equal, nothing merges.
// CHECK-LABEL: func.func @dynamic_sizes(
// CHECK-COUNT-2: = linalg.generic
// CHECK-NOT: :2 = linalg.generic
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @dynamic_sizes(%x: tensor<?xf32>, %init: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %sum = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %max = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %sum, %max : tensor<f32>, tensor<f32>
}
