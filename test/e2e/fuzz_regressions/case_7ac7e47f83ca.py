# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# crashed: IndexError: index 2 is out of bounds for dimension 0 with size 2
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(2, 3, generator=g)
    base2 = torch.randn(2, 3, generator=g)
    return (base0, base0, base2,)


def program(x0, x1, x2):
    x0.t_()
    v1 = x1[2]
    return (v1,)
