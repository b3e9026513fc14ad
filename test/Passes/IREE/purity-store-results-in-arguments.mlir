// RUN: purity-opt %s --purity-store-results-in-arguments --split-input-file | filecheck %s

// A result computed by a generic used only by the return gets a storage
// argument and is left as it is: IREE computes it into that argument.
// CHECK-LABEL: func.func @computed_result(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8xf32>,
// CHECK-SAME: %[[STORAGE:[a-z0-9]+]]: tensor<8xf32> {iree.abi.output = 0 : index, purity.result_storage = 0 : i64})
// CHECK: %[[DOUBLED:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[DOUBLED]]
#map = affine_map<(d0) -> (d0)>
func.func @computed_result(%x: tensor<8xf32>) -> tensor<8xf32> {
  %empty = tensor.empty() : tensor<8xf32>
  %doubled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %in, %in : f32
    linalg.yield %sum : f32
  } -> tensor<8xf32>
  return %doubled : tensor<8xf32>
}

// -----

// A returned argument and a value returned twice: each result is copied into
// its own storage argument by a generic that reads that argument. The
// computed value passes through a barrier first (folding must not see it).
// CHECK-LABEL: func.func @returned_argument_and_twice(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8xf32>,
// CHECK-SAME: %[[S0:[a-z0-9]+]]: tensor<8xf32> {iree.abi.output = 0 : index, purity.result_storage = 0 : i64},
// CHECK-SAME: %[[S1:[a-z0-9]+]]: tensor<8xf32> {iree.abi.output = 1 : index, purity.result_storage = 1 : i64},
// CHECK-SAME: %[[S2:[a-z0-9]+]]: tensor<8xf32> {iree.abi.output = 2 : index, purity.result_storage = 2 : i64})
// CHECK: %[[DOUBLED:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>)
// CHECK: %[[R0:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%[[S0]] : tensor<8xf32>)
// CHECK: arith.select
// CHECK: %[[D1:.*]] = "util.optimization_barrier"(%[[DOUBLED]])
// CHECK: %[[R1:.*]] = linalg.generic {{.*}} ins(%[[D1]] : tensor<8xf32>) outs(%[[S1]] : tensor<8xf32>)
// CHECK: %[[D2:.*]] = "util.optimization_barrier"(%[[DOUBLED]])
// CHECK: %[[R2:.*]] = linalg.generic {{.*}} ins(%[[D2]] : tensor<8xf32>) outs(%[[S2]] : tensor<8xf32>)
// CHECK: return %[[R0]], %[[R1]], %[[R2]]
#map = affine_map<(d0) -> (d0)>
func.func @returned_argument_and_twice(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %empty = tensor.empty() : tensor<8xf32>
  %doubled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %in, %in : f32
    linalg.yield %sum : f32
  } -> tensor<8xf32>
  return %x, %doubled, %doubled : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A result tied to an input keeps its tie and gets no storage argument. Its
// value is also summed (IREE would compute it into a buffer of its own and
// copy it into the input), so it is copied into the input by a generic that
// reads the input. The sum's result is stored, and a fill and a splat
// constant are written from their one element (a 0-d tensor read at every
// position: the filled tensor is never made).
// CHECK-LABEL: func.func @tied_value_also_read(
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<8xf32> {iree.abi.output = 1 : index},
// CHECK-SAME: %[[S0:[a-z0-9]+]]: tensor<f32> {iree.abi.output = 0 : index, purity.result_storage = 0 : i64},
// CHECK-SAME: %[[S2:[a-z0-9]+]]: tensor<4xi64> {iree.abi.output = 2 : index, purity.result_storage = 2 : i64},
// CHECK-SAME: %[[S3:[a-z0-9]+]]: tensor<2x3xf32> {iree.abi.output = 3 : index, purity.result_storage = 3 : i64})
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<8xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[NEW]] : tensor<8xf32>)
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: %[[NEW_APART:.*]] = "util.optimization_barrier"(%[[NEW]])
// CHECK: %[[WRITTEN:.*]] = linalg.generic {{.*}} ins(%[[NEW_APART]] : tensor<8xf32>) outs(%[[P]] : tensor<8xf32>)
// CHECK: %[[SEVEN:.*]] = tensor.from_elements %{{.*}} : tensor<i64>
// CHECK: %[[SEVEN_APART:.*]] = "util.optimization_barrier"(%[[SEVEN]])
// CHECK: %[[FILLED:.*]] = linalg.generic {indexing_maps = [#[[BROADCAST:.*]], #{{.*}}], {{.*}} ins(%[[SEVEN_APART]] : tensor<i64>) outs(%[[S2]] : tensor<4xi64>)
// CHECK: arith.xori %{{.*}}, %{{.*}} : i64
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[ONE_APART:.*]] = "util.optimization_barrier"(%[[ONE]])
// CHECK: %[[ONES:.*]] = linalg.generic {{.*}} ins(%[[ONE_APART]] : tensor<f32>) outs(%[[S3]] : tensor<2x3xf32>)
// CHECK: return %[[SUM]], %[[WRITTEN]], %[[FILLED]], %[[ONES]]
#map = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @tied_value_also_read(%p: tensor<8xf32> {iree.abi.output = 1 : index}) -> (tensor<f32>, tensor<8xf32>, tensor<4xi64>, tensor<2x3xf32>) {
  %empty = tensor.empty() : tensor<8xf32>
  %new = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%p : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %in, %in : f32
    linalg.yield %sum : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %scalar = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%scalar : tensor<f32>) -> tensor<f32>
  %total = linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["reduction"]} ins(%new : tensor<8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  %c7 = arith.constant 7 : i64
  %ints = tensor.empty() : tensor<4xi64>
  %filled = linalg.fill ins(%c7 : i64) outs(%ints : tensor<4xi64>) -> tensor<4xi64>
  %ones = arith.constant dense<1.0> : tensor<2x3xf32>
  return %total, %new, %filled, %ones : tensor<f32>, tensor<8xf32>, tensor<4xi64>, tensor<2x3xf32>
}

// -----

// Row writes into the tied input are left to purity-dispatch-argument-writes:
// no copy of the whole cache is added.
// CHECK-LABEL: func.func @row_write_into_tied_input(
// CHECK-SAME: %[[CACHE:[a-z0-9]+]]: tensor<8x4xf32> {iree.abi.output = 0 : index}
// CHECK-NOT: linalg.generic
// CHECK: %[[WRITTEN:.*]] = tensor.insert_slice
// CHECK-NOT: linalg.generic
// CHECK: return %[[WRITTEN]]
func.func @row_write_into_tied_input(%cache: tensor<8x4xf32> {iree.abi.output = 0 : index}, %row: tensor<1x4xf32>) -> tensor<8x4xf32> {
  %written = tensor.insert_slice %row into %cache[2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %written : tensor<8x4xf32>
}

// -----

// An elementwise generic over the flattened tied input, reshaped back
// (`x[mask] = 0`): IREE folds the reshape into the dispatch storing it, so
// no copy is added. A generic's value also read elsewhere is still copied.
// CHECK-LABEL: func.func @reshaped_generic_into_tied_input(
// CHECK: %[[MASKED:.*]] = linalg.generic
// CHECK: %[[BACK:.*]] = tensor.expand_shape %[[MASKED]]
// CHECK: %[[DOUBLED:.*]] = linalg.generic
// CHECK: %[[AGAIN:.*]] = tensor.expand_shape %[[DOUBLED]]
// CHECK: %[[COPIED:.*]] = linalg.generic {{.*}} outs(%arg1 : tensor<2x4xf32>)
// CHECK: return %[[BACK]], %[[COPIED]], %{{.*}} :
#flat = affine_map<(d0) -> (d0)>
func.func @reshaped_generic_into_tied_input(%x: tensor<2x4xf32> {iree.abi.output = 0 : index}, %y: tensor<2x4xf32> {iree.abi.output = 1 : index}, %mask: tensor<8xi1>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %empty = tensor.empty() : tensor<8xf32>
  %masked = linalg.generic {indexing_maps = [#flat, #flat, #flat], iterator_types = ["parallel"]} ins(%flat, %mask : tensor<8xf32>, tensor<8xi1>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %m: i1, %out: f32):
    %v = arith.select %m, %zero, %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %back = tensor.expand_shape %masked [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %flat_y = tensor.collapse_shape %y [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %doubled = linalg.generic {indexing_maps = [#flat, #flat], iterator_types = ["parallel"]} ins(%flat_y : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %again = tensor.expand_shape %doubled [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %back, %again, %doubled : tensor<2x4xf32>, tensor<2x4xf32>, tensor<8xf32>
}

// -----

// A region written into a reshape of the tied input (`x.view(-1)[5:10] =
// ...`), reshaped back: written in place too, no copy of the whole input.
// A tied input only reshaped and returned is still copied by a dispatch.
// CHECK-LABEL: func.func @region_write_into_reshaped_tied_input(
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0
// CHECK-NOT: linalg.generic
// CHECK: %[[WRITTEN:.*]] = tensor.insert_slice %arg2 into %[[FLAT]]
// CHECK: %[[BACK:.*]] = tensor.expand_shape %[[WRITTEN]]
// CHECK: %[[RESHAPED:.*]] = tensor.expand_shape
// CHECK: %[[COPIED:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4xf32>) outs(%arg1 : tensor<2x4xf32>)
// CHECK: return %[[BACK]], %[[COPIED]]
func.func @region_write_into_reshaped_tied_input(%x: tensor<2x4xf32> {iree.abi.output = 0 : index}, %y: tensor<2x4xf32> {iree.abi.output = 1 : index}, %part: tensor<5xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %written = tensor.insert_slice %part into %flat[1] [5] [1] : tensor<5xf32> into tensor<8xf32>
  %back = tensor.expand_shape %written [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %flat_y = tensor.collapse_shape %y [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %reshaped = tensor.expand_shape %flat_y [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %back, %reshaped : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A scatter (index_put at a tensor position: a static KV cache's row) into
// the tied input is written by its own dispatch: no copy of the whole cache.
// CHECK-LABEL: func.func @scatter_into_tied_input(
// CHECK-NOT: linalg.generic
// CHECK: %[[WRITTEN:.*]] = tm_tensor.scatter
// CHECK-NOT: linalg.generic
// CHECK: return %[[WRITTEN]]
func.func @scatter_into_tied_input(%cache: tensor<8x4xf32> {iree.abi.output = 0 : index}, %row: tensor<1x1x4xf32>, %position: tensor<1x1xi64>) -> tensor<8x4xf32> {
  %written = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%row, %position : tensor<1x1x4xf32>, tensor<1x1xi64>) outs(%cache : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    tm_tensor.yield %new : f32
  } -> tensor<8x4xf32>
  return %written : tensor<8x4xf32>
}

// -----

// A scatter into anything else (here a value computed from the input) is
// copied into its destination by a dispatch reading it.
// CHECK-LABEL: func.func @scatter_into_computed_value(
// CHECK: %[[WRITTEN:.*]] = tm_tensor.scatter
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xf32>) outs(%arg3 : tensor<8x4xf32>)
func.func @scatter_into_computed_value(%x: tensor<8x4xf32>, %row: tensor<1x1x4xf32>, %position: tensor<1x1xi64>) -> tensor<8x4xf32> {
  %empty = tensor.empty() : tensor<8x4xf32>
  %doubled = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%empty : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %in, %in : f32
    linalg.yield %sum : f32
  } -> tensor<8x4xf32>
  %written = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%row, %position : tensor<1x1x4xf32>, tensor<1x1xi64>) outs(%doubled : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    tm_tensor.yield %new : f32
  } -> tensor<8x4xf32>
  return %written : tensor<8x4xf32>
}

// -----

// An output that is a view of an input (`purity.aliases_input`) is made by
// the runtime from the caller's tensor: no storage argument, no copy.
// CHECK-LABEL: func.func @output_view_of_input(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8xf32>,
// CHECK-SAME: %{{.*}}: tensor<f32> {iree.abi.output = 1 : index, purity.result_storage = 1 : i64})
// CHECK-NOT: tensor<8xf32> {iree.abi.output
// CHECK: return %[[X]], %{{.*}} : tensor<8xf32>, tensor<f32>
#map = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @output_view_of_input(%x: tensor<8xf32>) -> (tensor<8xf32> {purity.aliases_input = 0 : i64}, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %scalar = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%scalar : tensor<f32>) -> tensor<f32>
  %total = linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["reduction"]} ins(%x : tensor<8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  return %x, %total : tensor<8xf32>, tensor<f32>
}

// -----

// An optimizer step: the momentum buffer's new value is returned (tied) and
// read by the parameter's elementwise update. IREE fuses both into one
// dispatch that stores each straight into its argument: nothing is wrapped.
// CHECK-LABEL: func.func @momentum_read_by_elementwise_update(
// CHECK-NOT: util.optimization_barrier
// CHECK: %[[BUF:.*]] = linalg.generic
// CHECK: %[[PARAM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[BUF]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[PARAM]], %[[BUF]]
#map = affine_map<(d0) -> (d0)>
func.func @momentum_read_by_elementwise_update(%param: tensor<8xf32> {iree.abi.output = 0 : index}, %buf: tensor<8xf32> {iree.abi.output = 1 : index}, %grad: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %empty = tensor.empty() : tensor<8xf32>
  %new_buf = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%buf, %grad : tensor<8xf32>, tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%b: f32, %g: f32, %out: f32):
    %sum = arith.addf %b, %g : f32
    linalg.yield %sum : f32
  } -> tensor<8xf32>
  %new_param = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%param, %new_buf : tensor<8xf32>, tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%p: f32, %b: f32, %out: f32):
    %step = arith.subf %p, %b : f32
    linalg.yield %step : f32
  } -> tensor<8xf32>
  return %new_param, %new_buf : tensor<8xf32>, tensor<8xf32>
}

// -----

// A stepped parameter read by an elementwise conversion that feeds a
// reduction (`param.sum()` accumulated in float64): IREE fuses the
// conversion into the reduction, so the parameter is written into its
// argument by a copy reading it, as for a parameter read by the sum itself.
// CHECK-LABEL: func.func @parameter_converted_for_a_sum(
// CHECK: %[[PARAM:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%arg0 : tensor<8xf32>)
#map = affine_map<(d0) -> (d0)>
#reduced = affine_map<(d0) -> ()>
func.func @parameter_converted_for_a_sum(%param: tensor<8xf32> {iree.abi.output = 0 : index}, %grad: tensor<8xf32>) -> (tensor<8xf32>, tensor<f64>) {
  %empty = tensor.empty() : tensor<8xf32>
  %new_param = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%param, %grad : tensor<8xf32>, tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %step = arith.subf %p, %g : f32
    linalg.yield %step : f32
  } -> tensor<8xf32>
  %empty64 = tensor.empty() : tensor<8xf64>
  %wide = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%new_param : tensor<8xf32>) outs(%empty64 : tensor<8xf64>) {
  ^bb0(%p: f32, %out: f64):
    %w = arith.extf %p : f32 to f64
    linalg.yield %w : f64
  } -> tensor<8xf64>
  %zero = arith.constant 0.0 : f64
  %init = tensor.empty() : tensor<f64>
  %filled = linalg.fill ins(%zero : f64) outs(%init : tensor<f64>) -> tensor<f64>
  %total = linalg.generic {indexing_maps = [#map, #reduced], iterator_types = ["reduction"]} ins(%wide : tensor<8xf64>) outs(%filled : tensor<f64>) {
  ^bb0(%w: f64, %acc: f64):
    %s = arith.addf %w, %acc : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %new_param, %total : tensor<8xf32>, tensor<f64>
}
