# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# differs from eager on data 0: input 0 after the call: values differ from eager (max abs difference
# 3.2)
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(3, 2, generator=g)
    base1 = torch.randn(3, 2, generator=g)
    if seed == 1: base0[(0,) * base0.dim()] = float("nan"); base0[(-1,) * base0.dim()] = float("inf")
    return (base0, base1,)


def program(x0, x1):
    v0 = x0.unfold(0, 1, 2)
    v0.add_(v0.sum().item())
    v0.add_(v0.sum().item())
    return (v0,)
