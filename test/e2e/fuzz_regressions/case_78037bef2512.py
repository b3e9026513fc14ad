# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# data 2: the failed call changed input 0
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(2, 3, 2, 2, generator=g).contiguous(memory_format=torch.channels_last)
    if seed == 1: base0[(0,) * base0.dim()] = float("nan"); base0[(-1,) * base0.dim()] = float("inf")
    idx = torch.randint(0 if seed == 0 else -2, 2, (2,), generator=g)
    idx = torch.tensor([0, 2]) if seed == 2 else idx
    return (base0, idx,)


def program(x0, idx):
    v0 = idx.detach()
    x0.add_(1.5)
    f3 = idx * 2 + idx.sum()
    v4 = x0.as_strided((2, 2), (1, 2))
    f3.add_(f3.sum().item())
    g6 = f3[idx]
    return (f3,)
