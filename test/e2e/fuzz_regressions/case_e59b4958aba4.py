# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# differs from eager on data 0: output 0: values differ from eager (max abs difference 108); input 0
# after the call: values differ from eager (max abs difference 3)
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(2, 2, generator=g)
    base1 = torch.randn(2, 2, generator=g)
    if seed == 1: base0[(0,) * base0.dim()] = float("nan"); base0[(-1,) * base0.dim()] = float("inf")
    return (base0, base1,)


def program(x0, x1):
    x0.add_(1.5)
    v1 = x0.diagonal()
    x0.fill_(3.0)
    v1.copy_(v1.sum())
    f4 = v1 * 2 + v1.sum()
    f4.add_(f4.sum().item())
    f4.add_(f4.sum().item())
    return (f4,)
