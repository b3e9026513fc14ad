// Torch types left at the linalg boundary.
// expected-error @+1 {{linalg contract: the boundary still has Torch type !torch.vtensor<[3],f32>}}
func.func @torch_types(%x: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> attributes {purity.result_element_types = ["f32"]} {
  return %x : !torch.vtensor<[3],f32>
}

// -----

// The element types lost on the way (torch-backend keeps function attributes).
// expected-error @+1 {{purity.result_element_types must name one element type per result (1)}}
func.func @types_lost(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
