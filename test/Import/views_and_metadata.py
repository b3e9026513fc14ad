# RUN: %PYTHON %s | filecheck %s
# Views of mutated tensors stay views on !torch.tensor; metadata mutations the
# dialect does not register are kept as torch.operator.
import torch

from torch_purity import import_fx


def print_ir(program, *inputs):
    print(import_fx(program, *inputs))


def views(x):
    x[1::2].narrow(1, 1, 2).diagonal().add_(1)
    x.as_strided((2,), (2,), 1).mul_(2)
    x.view(-1).unsqueeze(0).squeeze(0).neg_()
    x.permute(1, 0).t().transpose(0, 1)[0].zero_()
    torch.ops.aten.alias(x.detach()).expand(4, 4).sum()
    return x


# CHECK-LABEL: func.func @main(%arg0: !torch.tensor<[4,4],f32>
# CHECK: torch.aten.slice.Tensor %arg0, {{.*}} -> !torch.tensor<[2,4],f32>
# CHECK: torch.aten.slice.Tensor {{.*}} -> !torch.tensor<[2,2],f32>
# CHECK: torch.aten.diagonal {{.*}} -> !torch.tensor<[2],f32>
# CHECK: torch.aten.add_.Scalar {{.*}} : !torch.tensor<[2],f32>
# CHECK: torch.aten.as_strided %arg0, {{.*}} -> !torch.tensor<[2],f32>
# CHECK: torch.aten.mul_.Scalar
# CHECK: torch.aten.view %arg0, {{.*}} -> !torch.tensor<[16],f32>
# CHECK: torch.aten.unsqueeze {{.*}} -> !torch.tensor<[1,16],f32>
# CHECK: torch.aten.squeeze.dim {{.*}} -> !torch.tensor<[16],f32>
# CHECK: torch.aten.neg_
# CHECK: torch.aten.permute %arg0, {{.*}} -> !torch.tensor<[4,4],f32>
# CHECK: torch.aten.t {{.*}} -> !torch.tensor<[4,4],f32>
# CHECK: torch.aten.transpose.int
# CHECK: torch.aten.select.int
# CHECK: torch.aten.zero_
# CHECK: torch.aten.detach %arg0
# CHECK: torch.aten.alias
# CHECK: torch.aten.expand {{.*}} -> !torch.tensor<[4,4],f32>
print_ir(views, torch.randn(4, 4))


def multi_output(x):
    a, b = x.split_with_sizes([1, 3])
    c, d = x.chunk(2, dim=1)
    rows = x.unbind(0)
    b.mul_(2)
    d.add_(1)
    rows[2].zero_()
    return x


# CHECK-LABEL: func.func @main(%arg0: !torch.tensor<[4,4],f32>
# chunk reaches ATen as split.Tensor.
# CHECK: %[[SWS:.*]] = torch.aten.split_with_sizes %arg0, {{.*}} -> !torch.list<tensor>
# CHECK: torch.prim.ListUnpack %[[SWS]] : !torch.list<tensor> -> !torch.tensor<[1,4],f32>, !torch.tensor<[3,4],f32>
# CHECK: %[[CH:.*]] = torch.aten.split.Tensor %arg0, {{.*}} -> !torch.list<tensor>
# CHECK: torch.prim.ListUnpack %[[CH]] : !torch.list<tensor> -> !torch.tensor<[4,2],f32>, !torch.tensor<[4,2],f32>
# CHECK: %[[UB:.*]] = torch.aten.unbind.int %arg0, {{.*}} -> !torch.list<tensor>
# CHECK: torch.prim.ListUnpack %[[UB]] : !torch.list<tensor> -> !torch.tensor<[4],f32>, !torch.tensor<[4],f32>, !torch.tensor<[4],f32>, !torch.tensor<[4],f32>
print_ir(multi_output, torch.randn(4, 4))


def metadata(x):
    x.t_()
    x.unsqueeze_(0)
    x.squeeze_(0)
    x.transpose_(0, 1)
    x.as_strided_((2,), (1,), 1)
    return x


# CHECK-LABEL: func.func @main(%arg0: !torch.tensor<[2,3],f32>
# CHECK: %[[T:.*]] = torch.operator "torch.aten.t_"(%arg0) : (!torch.tensor<[2,3],f32>) -> !torch.tensor<[3,2],f32>
# CHECK: %[[U:.*]] = torch.aten.unsqueeze_ %[[T]], {{.*}} -> !torch.tensor<[1,3,2],f32>
# CHECK: %[[S:.*]] = torch.operator "torch.aten.squeeze_.dim"(%[[U]], {{.*}}) : {{.*}} -> !torch.tensor<[3,2],f32>
# CHECK: %[[TR:.*]] = torch.operator "torch.aten.transpose_"(%[[S]], {{.*}}) : {{.*}} -> !torch.tensor<[2,3],f32>
# CHECK: torch.operator "torch.aten.as_strided_"(%[[TR]], {{.*}}) : {{.*}} -> !torch.tensor<[2],f32>
print_ir(metadata, torch.randn(2, 3))


def out_variant(a, b, c):
    torch.add(a, b, out=c)
    return c


# out= is the functional op followed by a copy_ into `out`.
# CHECK-LABEL: func.func @main(%arg0: !torch.vtensor<[3],f32> {{.*}}, %arg1: !torch.vtensor<[3],f32> {{.*}}, %arg2: !torch.tensor<[3],f32>
# CHECK: %[[SUM:.*]] = torch.aten.add.Tensor %arg0, %arg1
# CHECK: %[[SUMT:.*]] = torch.copy.to_tensor %[[SUM]]
# CHECK: torch.aten.copy_ %arg2, %[[SUMT]]
print_ir(out_variant, torch.randn(3), torch.randn(3), torch.randn(3))
