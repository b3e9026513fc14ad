# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# data 1: the failed call changed input 0
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(2, 2, generator=g)
    base1 = torch.randn(2, 2, generator=g)
    base2 = torch.randn(2, 2, generator=g)
    if seed == 1: base0[(0,) * base0.dim()] = float("nan"); base0[(-1,) * base0.dim()] = float("inf")
    idx = torch.randint(0 if seed == 0 else -2, 2, (2,), generator=g)
    idx = torch.tensor([0, 2]) if seed == 2 else idx
    return (base0, base1, base2, idx,)


def program(x0, x1, x2, idx):
    v0 = idx.detach()
    v1 = x1.detach()
    v2 = idx.detach()
    v4 = idx.detach()
    v5 = idx.detach()
    v1.scatter_add_(0, idx.view((2,) + (1,) * (v1.dim() - 1)).expand((2,) + tuple(v1.shape[1:])), torch.ones((2,) + tuple(v1.shape[1:])))
    return (idx,)
