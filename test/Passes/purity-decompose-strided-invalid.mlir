// RUN: purity-opt %s --purity-decompose-strided --split-input-file --verify-diagnostics

func.func @scatter_with_dynamic_offset(%base: !torch.vtensor<[6],f32>, %src: !torch.vtensor<[2],f32>, %offset: !torch.int) -> !torch.vtensor<[6],f32> {
  %int2 = torch.constant.int 2
  %size = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  // expected-error @+1 {{'torch.aten.as_strided_scatter' with non-constant view arguments is not supported}}
  %0 = torch.aten.as_strided_scatter %base, %src, %size, %size, %offset : !torch.vtensor<[6],f32>, !torch.vtensor<[2],f32>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[6],f32>
  return %0 : !torch.vtensor<[6],f32>
}
