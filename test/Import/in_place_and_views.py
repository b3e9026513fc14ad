# RUN: %PYTHON %s | filecheck %s
# The program: in-place ops, a view write, a multi-output view, an input mutation.
import torch

from torch_purity import import_fx


def program(x, y):
    z = x * 2
    z.add_(y)
    z[0].mul_(3)
    a, b = z.split(2)
    b.zero_()
    x.add_(1)
    return z


x, y = torch.randn(4, 4), torch.randn(4, 4)
before = x.clone()
print(import_fx(program, x, y).operation.get_asm(enable_debug_info=True))
# Tracing must not touch the caller's tensors.
assert torch.equal(x, before), "import_fx wrote into an example input"

# x is mutated, y is only read.
# CHECK-LABEL: func.func @main(
# CHECK-SAME: %[[X:.*]]: !torch.tensor<[4,4],f32> {{{.*}}purity.input = "input:0"
# CHECK-SAME: %[[Y:.*]]: !torch.vtensor<[4,4],f32> {{{.*}}purity.input = "input:1"
# CHECK-SAME: -> !torch.tensor<[4,4],f32>
# CHECK: %[[Z:.*]] = torch.aten.mul.Scalar %[[X]], %{{.*}} : !torch.tensor<[4,4],f32>, !torch.float -> !torch.tensor<[4,4],f32> loc(#[[MUL:loc[0-9]+]])
# CHECK: %[[YT:.*]] = torch.copy.to_tensor %[[Y]] : !torch.tensor<[4,4],f32>
# CHECK: %[[Z1:.*]] = torch.aten.add_.Tensor %[[Z]], %[[YT]], %{{.*}} : !torch.tensor<[4,4],f32>, !torch.tensor<[4,4],f32>, !torch.int -> !torch.tensor<[4,4],f32>
# CHECK: %[[ROW:.*]] = torch.aten.select.int %[[Z1]], %{{.*}}, %{{.*}} : !torch.tensor<[4,4],f32>, !torch.int, !torch.int -> !torch.tensor<[4],f32>
# CHECK: torch.aten.mul_.Scalar %[[ROW]], %{{.*}} : !torch.tensor<[4],f32>, !torch.float -> !torch.tensor<[4],f32>
# CHECK: %[[PARTS:.*]] = torch.aten.split.Tensor %[[Z1]], %{{.*}}, %{{.*}} : !torch.tensor<[4,4],f32>, !torch.int, !torch.int -> !torch.list<tensor>
# CHECK: %[[AB:.*]]:2 = torch.prim.ListUnpack %[[PARTS]] : !torch.list<tensor> -> !torch.tensor<[2,4],f32>, !torch.tensor<[2,4],f32>
# CHECK: torch.aten.zero_ %[[AB]]#1 : !torch.tensor<[2,4],f32> -> !torch.tensor<[2,4],f32>
# CHECK: torch.aten.add_.Scalar %[[X]], %{{.*}}, %{{.*}} : !torch.tensor<[4,4],f32>, !torch.float, !torch.int -> !torch.tensor<[4,4],f32>
# CHECK: return %[[Z1]] : !torch.tensor<[4,4],f32>
# Locations name the ATen op and the line of this file.
# CHECK: #[[FILE:loc[0-9]+]] = loc("{{.*}}in_place_and_views.py":9:5)
# CHECK: #[[MUL]] = loc("aten.mul.Tensor"(#[[FILE]]))
