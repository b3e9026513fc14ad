// RUN: purity-opt %s --purity-decompose-strided --split-input-file --verify-diagnostics

func.func @scatter_with_dynamic_offset(%base: !torch.vtensor<[6],f32>, %src: !torch.vtensor<[2],f32>, %offset: !torch.int) -> !torch.vtensor<[6],f32> {
  %int2 = torch.constant.int 2
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  // expected-error @+1 {{'torch.aten.as_strided_scatter' with non-constant view arguments is not supported}}
  %0 = torch.aten.as_strided_scatter %base, %src, %size, %size, %offset : !torch.vtensor<[6],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[6],f32>
  return %0 : !torch.vtensor<[6],f32>
}

// -----
// as_strided on a base of dynamic shape: the flat positions cannot be tabulated.
func.func @as_strided_dynamic_shape(%base: !torch.vtensor<[?],f32>) -> !torch.vtensor<[2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  // expected-error @+1 {{'torch.aten.as_strided' on tensors with dynamic shape is not supported}}
  %0 = torch.aten.as_strided %base, %size, %stride, %int0 : !torch.vtensor<[?],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}

// -----
// An as_strided_scatter view reaching past the end of its base (offset 5 + 2 elements > 6).
func.func @scatter_past_the_end(%base: !torch.vtensor<[6],f32>, %src: !torch.vtensor<[2],f32>) -> !torch.vtensor<[6],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int5 = torch.constant.int 5
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  // expected-error @+1 {{'torch.aten.as_strided_scatter' reaches outside its base (7 > 6 elements)}}
  %0 = torch.aten.as_strided_scatter %base, %src, %size, %stride, %int5 : !torch.vtensor<[6],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[6],f32>
  return %0 : !torch.vtensor<[6],f32>
}

// -----
// An as_strided view starting before its base (negative storage offset).
func.func @as_strided_negative_offset(%base: !torch.vtensor<[6],f32>) -> !torch.vtensor<[2],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %intm1 = torch.constant.int -1
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %stride = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  // expected-error @+1 {{'torch.aten.as_strided' reaches outside its base}}
  %0 = torch.aten.as_strided %base, %size, %stride, %intm1 : !torch.vtensor<[6],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}
