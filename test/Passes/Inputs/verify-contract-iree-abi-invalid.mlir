// A result stored in no argument (IREE would allocate it; the runtime hands out no IREE buffers).
// expected-error @+1 {{iree-abi contract: result 0 is stored in 0 arguments, not one}}
func.func @not_stored(%x: tensor<3xf32>) -> tensor<3xf32> attributes {purity.result_element_types = ["f32"]} {
  return %x : tensor<3xf32>
}

// -----

// An argument both tied and marked as only read.
// expected-error @+1 {{argument 0 is tied to a result but marked purity.unwritten}}
func.func @tied_and_unwritten(%x: tensor<3xf32> {iree.abi.output = 0 : index, purity.unwritten}) -> (tensor<3xf32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32"]} {
  return %x : tensor<3xf32>
}

// -----

// Torch types left at the boundary.
// expected-error @+1 {{the boundary still has Torch type !torch.vtensor<[3],f32>}}
func.func @torch_boundary(%x: !torch.vtensor<[3],f32>) attributes {purity.result_element_types = []} {
  return
}

// -----

// One result stored in two arguments.
// expected-error @+1 {{result 0 is stored in 2 arguments, not one}}
func.func @stored_twice(%a: tensor<3xf32> {iree.abi.output = 0 : index, purity.result_storage = 0 : i64}, %b: tensor<3xf32> {iree.abi.output = 0 : index, purity.result_storage = 0 : i64}) -> tensor<3xf32> attributes {purity.result_element_types = ["f32"]} {
  %c = arith.constant dense<1.0> : tensor<3xf32>
  return %c : tensor<3xf32>
}
