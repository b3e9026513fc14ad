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
func.func @mutation_in_control_flow(%x: !torch.tensor<[3],f32>, %c: !torch.bool) -> !torch.none {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  // expected-error @+1 {{mutation or aliasing inside the regions of 'torch.prim.If' is not supported}}
  torch.prim.If %c -> () {
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
