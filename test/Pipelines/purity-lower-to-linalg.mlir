// RUN: purity-opt %s --purity-lower-to-linalg | filecheck %s

// A one-row write into a cache argument: after the whole pipeline the write
// is a tensor.insert_slice into the argument, returned as a result tied to
// the argument's buffer (iree.abi.output), so IREE writes the row in place;
// the row passes through a generic that reads the destination row
// (purity-dispatch-argument-writes), so IREE writes it with a dispatch. The sum
// gets a storage argument (purity-store-results-in-arguments).
// CHECK-LABEL: func.func @write_row(
// CHECK-SAME: %[[CACHE:.*]]: tensor<8x4xf32> {iree.abi.output = 1 : index}, %[[ROW:.*]]: tensor<4xf32> {purity.unwritten},
// CHECK-SAME: %{{.*}}: tensor<f32> {iree.abi.output = 0 : index, purity.result_storage = 0 : i64})
// CHECK-SAME: -> (tensor<f32>, tensor<8x4xf32> {purity.written_input = 0 : i64})
// CHECK: %[[EXPANDED:.*]] = tensor.expand_shape %[[ROW]]
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[CACHE]][3, 0] [1, 4] [1, 1]
// CHECK: %[[KEPT:.*]] = linalg.generic {{.*}} ins(%[[EXPANDED]] : tensor<1x4xf32>) outs(%[[OLD]] : tensor<1x4xf32>)
// CHECK: %[[NEW:.*]] = tensor.insert_slice %[[KEPT]] into %[[CACHE]][3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
// CHECK-NOT: linalg.copy
// CHECK: return %{{.*}}, %[[NEW]] : tensor<f32>, tensor<8x4xf32>
func.func @write_row(%cache: !torch.tensor<[8,4],f32>, %row: !torch.vtensor<[4],f32>) -> !torch.vtensor<[],f32> {
  %int0 = torch.constant.int 0
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %none = torch.constant.none
  %slot = torch.aten.select.int %cache, %int0, %int3 : !torch.tensor<[8,4],f32>, !torch.int, !torch.int -> !torch.tensor<[4],f32>
  %rowt = torch.copy.to_tensor %row : !torch.tensor<[4],f32>
  %0 = torch.aten.copy_ %slot, %rowt, %false : !torch.tensor<[4],f32>, !torch.tensor<[4],f32>, !torch.bool -> !torch.tensor<[4],f32>
  %sum = torch.aten.sum %cache, %none : !torch.tensor<[8,4],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %sum : !torch.vtensor<[],f32>
}
