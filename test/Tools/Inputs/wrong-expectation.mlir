func.func @f(%x: !torch.tensor<[1,3],f32>) -> !torch.none {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %none = torch.constant.none
  %shape = torch.prim.ListConstruct %int4, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %e = torch.aten.expand %x, %shape, %false : !torch.tensor<[1,3],f32>, !torch.list<int>, !torch.bool -> !torch.tensor<[4,3],f32>
  // expected-error @+1 {{something else}}
  %0 = torch.aten.add_.Scalar %e, %int1, %int1 : !torch.tensor<[4,3],f32>, !torch.int, !torch.int -> !torch.tensor<[4,3],f32>
  return %none : !torch.none
}
