# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# crashed: IndexError: index 2 is out of bounds for dimension 0 with size 2
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(2, 2, generator=g)
    if seed == 1: base0[(0,) * base0.dim()] = float("nan"); base0[(-1,) * base0.dim()] = float("inf")
    idx = torch.randint(0 if seed == 0 else -2, 2, (2,), generator=g)
    idx = torch.tensor([0, 2]) if seed == 2 else idx
    return (base0, base0[1], idx,)


def program(x0, x1, idx):
    x1.index_put_((idx,), torch.tensor(2.0))
    return (idx,)
