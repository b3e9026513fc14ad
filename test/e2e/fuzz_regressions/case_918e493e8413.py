# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# differs from eager on data 0: output 0: values differ from eager (max abs difference 3)
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(3, 2, generator=g)
    return (base0, base0[1:],)


def program(x0, x1):
    f0 = x0 * 2 + x0.sum()
    v1 = x1[1]
    f2 = v1 * 2 + f0.sum()
    v3 = f0.detach()
    v1.add_(1.5)
    v5 = f0.detach()
    return (f2,)
