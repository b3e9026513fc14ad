// RUN: purity-opt %s --purity-partition-joint --split-input-file --verify-diagnostics

// A result that is not a gradient but reads a tangent: no forward can
// compute it before the backward runs.
func.func @output_reads_tangent(%x: !torch.vtensor<[3],f32>, %g: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.gradient_of = 0 : i64}) {
  %y = torch.aten.mul.Tensor %x, %g : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  // expected-error @+1 {{purity-partition-joint: result 0 is not a gradient but depends on a tangent}}
  return %y, %g : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}

// -----

// Two joint functions in one module: only one @forward/@backward pair can exist.
func.func @first(%x: !torch.vtensor<[3],f32>, %g: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.gradient_of = 0 : i64}) {
  return %x, %g : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}
// expected-error @+1 {{purity-partition-joint: a module holds one joint function (the first is partitioned)}}
func.func @second(%x: !torch.vtensor<[3],f32>, %g: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.gradient_of = 0 : i64}) {
  return %x, %g : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}
