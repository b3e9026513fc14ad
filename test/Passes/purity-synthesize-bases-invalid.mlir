// RUN: purity-opt %s --purity-synthesize-bases --split-input-file --verify-diagnostics

// Overlapping inputs of one storage (a written f32 tensor and an i32 view of
// the same bytes) cannot be regenerated from one base of a single dtype.
// expected-error @+1 {{purity-synthesize-bases: inputs [0, 1] share storage with different dtypes (f32, si32)}}
func.func @shared_storage_different_dtypes(
    %a: !torch.tensor<[4],f32> {purity.sizes = array<i64: 4>, purity.strides = array<i64: 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64},
    %b: !torch.tensor<[4],si32> {purity.sizes = array<i64: 4>, purity.strides = array<i64: 1>, purity.storage_offset = 0 : i64, purity.storage_group = 0 : i64}) -> !torch.vtensor<[4],si32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add_.Scalar %a, %int1, %int1 : !torch.tensor<[4],f32>, !torch.int, !torch.int -> !torch.tensor<[4],f32>
  %1 = torch.aten.mul.Scalar %b, %int1 : !torch.tensor<[4],si32>, !torch.int -> !torch.vtensor<[4],si32>
  return %1 : !torch.vtensor<[4],si32>
}
