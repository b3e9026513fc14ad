// RUN: purity-opt %s --purity-functionalize --split-input-file --verify-diagnostics

func.func @write_into_expanded(%x: !torch.tensor<[1,3],f32>) -> !torch.none {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %none = torch.constant.none
  %shape = torch.prim.ListConstruct %int4, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %e = torch.aten.expand %x, %shape, %false : !torch.tensor<[1,3],f32>, !torch.list<int>, !torch.bool -> !torch.tensor<[4,3],f32>
  // expected-error @+1 {{a write through 'torch.aten.expand' would write overlapping memory}}
  %0 = torch.aten.add_.Scalar %e, %int1, %int1 : !torch.tensor<[4,3],f32>, !torch.int, !torch.int -> !torch.tensor<[4,3],f32>
  return %none : !torch.none
}

// -----
func.func @unknown_op_on_non_value(%x: !torch.tensor<[3],f32>) -> !torch.none {
  %none = torch.constant.none
  // expected-error @+1 {{unknown op 'torch.aten.mystery' uses a non-value tensor}}
  %0 = torch.operator "torch.aten.mystery"(%x) : (!torch.tensor<[3],f32>) -> !torch.tensor<[3],f32>
  return %none : !torch.none
}

// -----
// A branch writing a tensor created outside it (an argument): its value
// after the If would depend on the branch taken.
func.func @mutation_in_control_flow(%x: !torch.tensor<[3],f32>, %c: !torch.bool) -> !torch.none {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  torch.prim.If %c -> () {
    // expected-error @+1 {{'torch.aten.add_.Scalar' inside a control-flow region writes a tensor created outside that region}}
    %0 = torch.aten.add_.Scalar %x, %int1, %int1 : !torch.tensor<[3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
    torch.prim.If.yield
  } else {
    torch.prim.If.yield
  }
  return %none : !torch.none
}

// -----
func.func @resize_to_new_shape(%x: !torch.tensor<[3],f32>) -> !torch.none {
  %none = torch.constant.none
  %int5 = torch.constant.int 5
  %sizes = torch.prim.ListConstruct %int5 : (!torch.int) -> !torch.list<int>
  // expected-error @+1 {{in-place op 'torch.aten.resize_' changes the shape or dtype of the tensor it writes}}
  %0 = torch.aten.resize_ %x, %sizes, %none : !torch.tensor<[3],f32>, !torch.list<int>, !torch.none -> !torch.tensor<[5],f32>
  return %none : !torch.none
}

// -----
// The argument starts 2 elements into its storage: as_strided would address memory outside it.
func.func @as_strided_of_offset_input(%x: !torch.tensor<[6],f32> {purity.sizes = array<i64: 6>, purity.strides = array<i64: 1>, purity.storage_offset = 2 : i64}) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  // expected-error @+1 {{as_strided on a tensor whose storage is not laid out contiguously from its first element}}
  %v = torch.aten.as_strided %x, %size, %stride, %int0 : !torch.tensor<[6],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.tensor<[2],f32>
  %0 = torch.aten.add_.Scalar %v, %int1, %int1 : !torch.tensor<[2],f32>, !torch.int, !torch.int -> !torch.tensor<[2],f32>
  return %none : !torch.none
}

// -----
// A returned list of views: its producer is erased with the other views.
func.func @returned_list_of_views(%a: !torch.tensor<[2,3],f32>) -> !torch.list<tensor> {
  %int0 = torch.constant.int 0
  %l = torch.aten.unbind.int %a, %int0 : !torch.tensor<[2,3],f32>, !torch.int -> !torch.list<tensor>
  // expected-error @+1 {{purity-functionalize: returning a list of views (unpack it first) is not supported}}
  return %l : !torch.list<tensor>
}

// -----
// A metadata mutation (unverified torch.operator) of a value tensor yielding a non-value one: no alias to mutate.
func.func @metadata_mutation_of_value_tensor(%v: !torch.vtensor<[2,3],f32>) -> !torch.none {
  %none = torch.constant.none
  // expected-error @+1 {{'torch.operator' uses a non-value tensor whose origin is not modelled}}
  %0 = torch.operator "torch.aten.t_"(%v) : (!torch.vtensor<[2,3],f32>) -> !torch.tensor<[3,2],f32>
  return %none : !torch.none
}

// -----
// A write through unfold with overlapping windows (step 1 < size 2).
func.func @write_into_overlapping_unfold(%x: !torch.tensor<[4],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %u = torch.aten.unfold %x, %int0, %int2, %int1 : !torch.tensor<[4],f32>, !torch.int, !torch.int, !torch.int -> !torch.tensor<[3,2],f32>
  // expected-error @+1 {{a write through 'torch.aten.unfold' would write overlapping memory}}
  %0 = torch.aten.add_.Scalar %u, %int1, %int1 : !torch.tensor<[3,2],f32>, !torch.int, !torch.int -> !torch.tensor<[3,2],f32>
  return %none : !torch.none
}

// -----
// A region-holding op producing a non-value tensor (control flow over aliases).
func.func @if_yields_non_value(%x: !torch.tensor<[3],f32>, %y: !torch.tensor<[3],f32>, %c: !torch.bool) -> !torch.vtensor<[3],f32> {
  // expected-error @+1 {{'torch.prim.If' returns a non-value tensor: control-flow ops return value tensors}}
  %0 = torch.prim.If %c -> (!torch.tensor<[3],f32>) {
    torch.prim.If.yield %x : !torch.tensor<[3],f32>
  } else {
    torch.prim.If.yield %y : !torch.tensor<[3],f32>
  }
  %1 = torch.copy.to_vtensor %0 : !torch.vtensor<[3],f32>
  return %1 : !torch.vtensor<[3],f32>
}

// -----
// An op taking a list of non-value tensors (a function argument).
func.func @list_of_non_value_tensors(%l: !torch.list<tensor>) -> !torch.vtensor<[6],f32> {
  %int0 = torch.constant.int 0
  // expected-error @+1 {{'torch.aten.cat' takes a list of non-value tensors, which is not supported}}
  %0 = torch.aten.cat %l, %int0 : !torch.list<tensor>, !torch.int -> !torch.vtensor<[6],f32>
  return %0 : !torch.vtensor<[6],f32>
}

// -----
// as_strided without an offset after a slice with a non-constant start: where the view starts is unknown.
func.func @as_strided_without_offset_after_dynamic_slice(%x: !torch.tensor<[6],f32>, %start: !torch.int) -> !torch.vtensor<[2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %none = torch.constant.none
  %end = torch.aten.add.int %start, %int4 : !torch.int, !torch.int -> !torch.int
  %s = torch.aten.slice.Tensor %x, %int0, %start, %end, %int1 : !torch.tensor<[6],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.tensor<[4],f32>
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  // expected-error @+1 {{as_strided without an offset on a view of non-constant geometry}}
  %v = torch.aten.as_strided %s, %size, %stride, %none : !torch.tensor<[4],f32>, !torch.list<int>, !torch.list<int>, !torch.none -> !torch.tensor<[2],f32>
  %0 = torch.copy.to_vtensor %v : !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}

// -----
// unbind along a non-constant dimension: which element each result views is unknown.
func.func @unbind_non_constant_dim(%x: !torch.tensor<[2,2],f32>, %dim: !torch.int) -> !torch.vtensor<[2],f32> {
  // expected-error @+1 {{a multi-output view with a non-constant dimension}}
  %l = torch.aten.unbind.int %x, %dim : !torch.tensor<[2,2],f32>, !torch.int -> !torch.list<tensor>
  %a, %b = torch.prim.ListUnpack %l : !torch.list<tensor> -> !torch.tensor<[2],f32>, !torch.tensor<[2],f32>
  %0 = torch.copy.to_vtensor %a : !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}

// -----
// unbind of a tensor of dynamic shape.
func.func @unbind_dynamic_shape(%x: !torch.tensor<[?,3],f32>) -> !torch.vtensor<[?],f32> {
  %int1 = torch.constant.int 1
  // expected-error @+1 {{a multi-output view of a tensor with dynamic shape}}
  %l = torch.aten.unbind.int %x, %int1 : !torch.tensor<[?,3],f32>, !torch.int -> !torch.list<tensor>
  %a, %b, %c = torch.prim.ListUnpack %l : !torch.list<tensor> -> !torch.tensor<[?],f32>, !torch.tensor<[?],f32>, !torch.tensor<[?],f32>
  %0 = torch.copy.to_vtensor %a : !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----
// An in-place ATen op the Torch dialect has no value-semantic variant of.
func.func @in_place_without_value_variant(%x: !torch.tensor<[3],f32>) -> !torch.none {
  %none = torch.constant.none
  // expected-error @+1 {{in-place op 'torch.aten.mystery_' has no value-semantic variant in the Torch dialect}}
  %0 = torch.operator "torch.aten.mystery_"(%x) : (!torch.tensor<[3],f32>) -> !torch.tensor<[3],f32>
  return %none : !torch.none
}

// -----
// A metadata mutation of an argument of dynamic shape: its new sizes are unknown.
func.func @transpose_in_place_dynamic_shape(%x: !torch.tensor<[?,3],f32>) -> !torch.none {
  %none = torch.constant.none
  // expected-error @+1 {{cannot compute the new sizes of a metadata-mutated argument}}
  %0 = torch.operator "torch.aten.t_"(%x) : (!torch.tensor<[?,3],f32>) -> !torch.tensor<[3,?],f32>
  return %none : !torch.none
}

// -----
// A write through unfold (windows apart) of a tensor of dynamic shape.
func.func @write_into_unfold_dynamic_shape(%x: !torch.tensor<[?],f32>) -> !torch.none {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %u = torch.aten.unfold %x, %int0, %int2, %int2 : !torch.tensor<[?],f32>, !torch.int, !torch.int, !torch.int -> !torch.tensor<[?,2],f32>
  // expected-error @+1 {{a write through unfold of a tensor with dynamic shape is not supported}}
  %0 = torch.aten.add_.Scalar %u, %int1, %int1 : !torch.tensor<[?,2],f32>, !torch.int, !torch.int -> !torch.tensor<[?,2],f32>
  return %none : !torch.none
}

// -----
// A write through a reshape of a tensor of dynamic shape: the sizes to reshape back to are unknown.
func.func @write_into_view_dynamic_shape(%x: !torch.tensor<[?,3],f32>) -> !torch.none {
  %int1 = torch.constant.int 1
  %intm1 = torch.constant.int -1
  %none = torch.constant.none
  %shape = torch.prim.ListConstruct %intm1 : (!torch.int) -> !torch.list<int>
  %v = torch.aten.view %x, %shape : !torch.tensor<[?,3],f32>, !torch.list<int> -> !torch.tensor<[?],f32>
  // expected-error @+1 {{a write through 'torch.aten.view' of a tensor with dynamic shape is not supported}}
  %0 = torch.aten.add_.Scalar %v, %int1, %int1 : !torch.tensor<[?],f32>, !torch.int, !torch.int -> !torch.tensor<[?],f32>
  return %none : !torch.none
}

// -----
// A write through a permute whose dims are not constants: its inverse is unknown.
func.func @write_into_permute_non_constant_dims(%x: !torch.tensor<[2,2],f32>, %d0: !torch.int, %d1: !torch.int) -> !torch.none {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %dims = torch.prim.ListConstruct %d0, %d1 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.aten.permute %x, %dims : !torch.tensor<[2,2],f32>, !torch.list<int> -> !torch.tensor<[2,2],f32>
  // expected-error @+1 {{a write through a permute with non-constant dims}}
  %0 = torch.aten.add_.Scalar %p, %int1, %int1 : !torch.tensor<[2,2],f32>, !torch.int, !torch.int -> !torch.tensor<[2,2],f32>
  return %none : !torch.none
}
