// RUN: purity-opt %s --purity-check-indices --split-input-file --verify-diagnostics

// The size of the indexed dimension must be known to clamp into it.
func.func @dynamic_size(%x: !torch.vtensor<[?,4],f32>, %i: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,4],f32> {
  %int0 = torch.constant.int 0
  // expected-error @+1 {{purity-check-indices: 'torch.aten.index_select' on a tensor of dynamic shape cannot be bounds-checked}}
  %0 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}

// -----

// Nothing is in range of a dimension of size 0.
func.func @empty_dimension(%x: !torch.vtensor<[0,4],f32>, %i: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,4],f32> {
  %int0 = torch.constant.int 0
  // expected-error @+1 {{purity-check-indices: 'torch.aten.index_select' indexes a dimension of size 0 with a non-empty index}}
  %0 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[0,4],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}

// -----

// The dimension indexed must be a constant to know its size.
func.func @non_constant_dim(%x: !torch.vtensor<[8,4],f32>, %i: !torch.vtensor<[2],si64>, %dim: !torch.int) -> !torch.vtensor<[2,4],f32> {
  // expected-error @+1 {{purity-check-indices: 'torch.aten.index_select' with a non-constant dimension cannot be bounds-checked}}
  %0 = torch.aten.index_select %x, %dim, %i : !torch.vtensor<[8,4],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}

// -----

// Advanced indexing with a list that is not a torch.prim.ListConstruct (a function argument): its elements are unknown.
func.func @indices_not_a_list_construct(%x: !torch.vtensor<[8,4],f32>, %indices: !torch.list<optional<vtensor>>) -> !torch.vtensor<[2,4],f32> {
  // expected-error @+1 {{purity-check-indices: 'torch.aten.index.Tensor' with indices not built by a list construct cannot be bounds-checked}}
  %0 = torch.aten.index.Tensor %x, %indices : !torch.vtensor<[8,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}
