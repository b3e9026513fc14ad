# RUN: %PYTHON %s | filecheck %s
# Input storage attributes, nn.Module state as arguments, decompositions, and
# the located error for an op the dialect lacks.
import torch

from torch_purity import PurityError, import_fx


def read_both(a, b):
    return a + b


base = torch.randn(4, 4)
# The same storage twice (a row and the whole tensor, transposed): one group.
# CHECK-LABEL: func.func @main(
# CHECK-SAME: purity.input = "input:0", purity.sizes = array<i64: 4>, purity.storage_group = 0 : i64, purity.storage_offset = 4 : i64, purity.strides = array<i64: 1>
# CHECK-SAME: purity.input = "input:1", purity.sizes = array<i64: 4, 4>, purity.storage_group = 0 : i64, purity.storage_offset = 0 : i64, purity.strides = array<i64: 1, 4>
print(import_fx(read_both, base[1], base.t()))


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(3))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.steps.add_(1)
        return x * self.weight


# Parameters, then buffers, then inputs; only the mutated buffer is non-value.
# CHECK-LABEL: func.func @main(
# CHECK-SAME: %arg0: !torch.vtensor<[3],f32> {purity.input = "param:weight"
# CHECK-SAME: %arg1: !torch.tensor<[],si64> {purity.input = "buffer:steps"
# CHECK-SAME: %arg2: !torch.vtensor<[3],f32> {purity.input = "input:0"
# CHECK: torch.aten.add_.Scalar %arg1
print(import_fx(Counter(), torch.randn(3)))


def cumulative(x):
    x.cumsum_(0)
    return x


# cumsum_ is not a dialect op: PyTorch's decomposition gives its computation and a copy_.
# CHECK-LABEL: func.func @main(%arg0: !torch.tensor<[3],f32>
# CHECK-NOT: cumsum_
# CHECK: torch.aten.copy_ %arg0
print(import_fx(cumulative, torch.randn(3)))


def unsupported(x):
    return torch.linalg.eigh(x)[0]


# CHECK: import failed on op aten._linalg_eigh.default at {{.*}}inputs_and_errors.py:54: the Torch dialect has no op 'torch.aten._linalg_eigh'
try:
    import_fx(unsupported, torch.randn(3, 3))
except PurityError as error:
    print(error)
