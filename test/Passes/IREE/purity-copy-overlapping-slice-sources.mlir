// RUN: purity-opt %s --purity-copy-overlapping-slice-sources --split-input-file | filecheck %s

// `x[1:] = x[:-1]`: the slice read from %x is copied into a fresh, zero-filled
// tensor by a generic before it is inserted into %x.
// CHECK-LABEL: func.func @shift_rows(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x4xf32>
// CHECK: %[[READ:.*]] = tensor.extract_slice %[[X]][0, 0] [7, 4] [1, 1]
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<7x4xf32>)
// CHECK: %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[READ]] : tensor<7x4xf32>) outs(%[[ZEROS]] : tensor<7x4xf32>)
// CHECK: arith.select
// CHECK: %[[SHIFTED:.*]] = tensor.insert_slice %[[COPY]] into %[[X]][1, 0] [7, 4] [1, 1]
// CHECK: return %[[SHIFTED]]
func.func @shift_rows(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %read = tensor.extract_slice %x[0, 0] [7, 4] [1, 1] : tensor<8x4xf32> to tensor<7x4xf32>
  %shifted = tensor.insert_slice %read into %x[1, 0] [7, 4] [1, 1] : tensor<7x4xf32> into tensor<8x4xf32>
  return %shifted : tensor<8x4xf32>
}

// -----

// A slice of another tensor: nothing to separate.
// CHECK-LABEL: func.func @other_source(
// CHECK-NOT: linalg.generic
// CHECK: tensor.insert_slice
func.func @other_source(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %read = tensor.extract_slice %y[0, 0] [7, 4] [1, 1] : tensor<8x4xf32> to tensor<7x4xf32>
  %written = tensor.insert_slice %read into %x[1, 0] [7, 4] [1, 1] : tensor<7x4xf32> into tensor<8x4xf32>
  return %written : tensor<8x4xf32>
}

// -----

// The destination is an earlier insertion into %x and the source a reshaped
// slice of %x: the second insertion copies its source; the first, whose
// source is another tensor, is left alone. Integers need no bitcast.
// CHECK-LABEL: func.func @through_insertions_and_reshapes(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x4xi32>
// CHECK: %[[FIRST:.*]] = tensor.insert_slice %{{.*}} into %[[X]][0, 0] [1, 4] [1, 1]
// CHECK: %[[ROW:.*]] = tensor.expand_shape
// CHECK-NOT: arith.bitcast
// CHECK: %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[ROW]] : tensor<1x4xi32>)
// CHECK: tensor.insert_slice %[[COPY]] into %[[FIRST]][3, 0] [1, 4] [1, 1]
func.func @through_insertions_and_reshapes(%x: tensor<4x4xi32>, %row: tensor<1x4xi32>) -> tensor<4x4xi32> {
  %first = tensor.insert_slice %row into %x[0, 0] [1, 4] [1, 1] : tensor<1x4xi32> into tensor<4x4xi32>
  %read = tensor.extract_slice %x[2, 0] [1, 4] [1, 1] : tensor<4x4xi32> to tensor<4xi32>
  %reshaped = tensor.expand_shape %read [[0, 1]] output_shape [1, 4] : tensor<4xi32> into tensor<1x4xi32>
  %second = tensor.insert_slice %reshaped into %first[3, 0] [1, 4] [1, 1] : tensor<1x4xi32> into tensor<4x4xi32>
  return %second : tensor<4x4xi32>
}
