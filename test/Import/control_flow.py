# RUN: %PYTHON %s | filecheck %s
# torch.cond and while_loop imported as regions: operands are value snapshots
# taken where the operator runs, between the writes around it; a result the
# program writes afterwards is made non-value.
import torch
from torch._higher_order_ops.while_loop import while_loop

from torch_purity import import_fx


def branchy(x, y):
    x.add_(1)

    def scaled(x, y):
        t = x.clone()
        t.mul_(2)
        return (t + y,)

    def difference(x, y):
        return (x - y,)

    (r,) = torch.cond(x.sum() > 0, scaled, difference, (x, y))
    r.add_(1)
    x.mul_(3)
    return r


def looping(x, limit):
    def keep_going(i, a):
        return i < limit

    def step(i, a):
        return (i + 1, a * 2)

    _, a = while_loop(keep_going, step, (torch.zeros((), dtype=torch.int64), x))
    return a


print(import_fx(branchy, torch.randn(3), torch.randn(3)))
print(import_fx(looping, torch.randn(3), torch.tensor(4)))

# CHECK-LABEL: func.func @main(
# CHECK-SAME: %[[X:.*]]: !torch.tensor<[3],f32> {{.*}}, %[[Y:.*]]: !torch.vtensor<[3],f32>
# CHECK: %[[X1:.*]] = torch.aten.add_.Scalar %[[X]]
# CHECK: %[[PRED:.*]] = torch.aten.Bool.Tensor
# CHECK: %[[SNAPSHOT:.*]] = torch.copy.to_vtensor %[[X1]] : !torch.vtensor<[3],f32>
# CHECK: %[[IF:.*]] = torch.prim.If %[[PRED]] -> (!torch.vtensor<[3],f32>) {
# CHECK: %[[T:.*]] = torch.aten.clone %[[SNAPSHOT]], %{{.*}} -> !torch.tensor<[3],f32>
# CHECK: torch.aten.mul_.Scalar %[[T]]
# CHECK: torch.prim.If.yield %{{.*}} : !torch.vtensor<[3],f32>
# CHECK: } else {
# CHECK: %[[D:.*]] = torch.aten.sub.Tensor %[[SNAPSHOT]], %[[Y]]
# CHECK: torch.prim.If.yield %[[D]] : !torch.vtensor<[3],f32>
# CHECK: %[[R:.*]] = torch.copy.to_tensor %[[IF]] : !torch.tensor<[3],f32>
# CHECK: torch.aten.add_.Scalar %[[R]]
# CHECK: torch.aten.mul_.Scalar %[[X1]]

# CHECK-LABEL: func.func @main(
# CHECK: %[[FIRST:.*]] = torch.aten.lt.Tensor
# CHECK: %[[MAX:.*]] = torch.constant.int 9223372036854775807
# CHECK: %[[GO:.*]] = torch.aten.Bool.Tensor %[[FIRST]]
# CHECK: %[[LOOP:.*]]:2 = torch.prim.Loop %[[MAX]], %[[GO]], init(
# CHECK-NEXT: ^bb0(%{{.*}}: !torch.int, %[[I:.*]]: !torch.vtensor<[],si64>, %[[A:.*]]: !torch.vtensor<[3],f32>):
# CHECK: %[[NEXT_I:.*]] = torch.aten.add.Scalar %[[I]]
# CHECK: %[[NEXT_A:.*]] = torch.aten.mul.Scalar %[[A]]
# CHECK: %[[TEST:.*]] = torch.aten.lt.Tensor %[[NEXT_I]]
# CHECK: %[[AGAIN:.*]] = torch.aten.Bool.Tensor %[[TEST]]
# CHECK: torch.prim.Loop.condition %[[AGAIN]], iter(%[[NEXT_I]], %[[NEXT_A]] :
# CHECK: return %[[LOOP]]#1
