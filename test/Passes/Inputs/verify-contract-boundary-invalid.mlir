// A non-value argument at the value boundary.
// expected-error @+1 {{value-boundary-torch contract: argument 0 is a non-value tensor}}
func.func @non_value_argument(%x: !torch.tensor<[3],f32>) attributes {purity.result_element_types = []} {
  return
}

// -----

// No element types recorded for the results.
// expected-error @+1 {{purity.result_element_types must name one element type per result (1)}}
func.func @no_element_types(%x: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  return %x : !torch.vtensor<[3],f32>
}

// -----

// A final value of an argument that does not exist.
// expected-error @+1 {{result 0 is the final value of argument 4, which does not exist}}
func.func @no_such_argument(%x: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[3],f32> {purity.written_input = 4 : i64}) attributes {purity.result_element_types = ["f32"]} {
  return %x : !torch.vtensor<[3],f32>
}

// -----

// Two final values of one argument.
// expected-error @+1 {{argument 0 has two final values (results 0 and 1)}}
func.func @two_final_values(%x: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[3],f32> {purity.written_input = 0 : i64}, !torch.vtensor<[3],f32> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f32", "f32"]} {
  return %x, %x : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}

// -----

// An argument tied to a result that is not its final value.
// expected-error @+1 {{argument 0 is tied to result 0, which is neither its final value nor stored in it}}
func.func @tied_to_other(%x: !torch.vtensor<[3],f32> {iree.abi.output = 0 : index}) -> !torch.vtensor<[3],f32> attributes {purity.result_element_types = ["f32"]} {
  return %x : !torch.vtensor<[3],f32>
}

// -----

// A tie to a result that does not exist.
// expected-error @+1 {{argument 0 is tied to result 3, which does not exist}}
func.func @tied_to_nothing(%x: !torch.vtensor<[3],f32> {iree.abi.output = 3 : index}) -> !torch.vtensor<[3],f32> attributes {purity.result_element_types = ["f32"]} {
  return %x : !torch.vtensor<[3],f32>
}

// -----

// A tied argument and its result differ in type.
// expected-error @+1 {{argument 0 and its tied result 0 differ in type}}
func.func @tie_of_another_type(%x: !torch.vtensor<[3],f32> {iree.abi.output = 0 : index}, %y: !torch.vtensor<[3],f64>) -> (!torch.vtensor<[3],f64> {purity.written_input = 0 : i64}) attributes {purity.result_element_types = ["f64"]} {
  return %y : !torch.vtensor<[3],f64>
}

// -----

// An edge overwrite left after the written argument was exposed.
// expected-error @+1 {{argument 1 is a non-value tensor}}
func.func @overwrite_left(%x: !torch.vtensor<[3],f32>, %t: !torch.tensor<[3],f32>) attributes {purity.result_element_types = []} {
  // expected-error @+1 {{'torch.overwrite.tensor.contents' is left after the edge was exposed}}
  torch.overwrite.tensor.contents %x overwrites %t : !torch.vtensor<[3],f32>, !torch.tensor<[3],f32>
  return
}
