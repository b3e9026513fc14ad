// A non-value tensor at the torch backend contract.
// expected-error @+1 {{torch-backend contract: argument 0 is a non-value tensor}}
func.func @non_value(%x: !torch.tensor<[3],f32>) attributes {purity.result_element_types = []} {
  return
}
