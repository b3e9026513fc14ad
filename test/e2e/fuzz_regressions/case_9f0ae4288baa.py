# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# data 1: the failed call changed input 1
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(4, 2, generator=g)
    if seed == 1: base0[(0,) * base0.dim()] = float("nan"); base0[(-1,) * base0.dim()] = float("inf")
    idx = torch.randint(0 if seed == 0 else -4, 4, (2,), generator=g)
    idx = torch.tensor([0, 4]) if seed == 2 else idx
    return (base0[:1], base0[1:], idx,)


def program(x0, x1, idx):
    v1 = x1.as_strided((2, 2), (1, 2))
    v1.index_put_((torch.tensor([0, 0]),), torch.tensor([1.0, 2.0]).reshape((2,) + (1,) * (v1.dim() - 1)).expand((2,) + tuple(v1.shape[1:])).clone(), accumulate=True)
    f3 = v1 * 2 + x0.sum()
    x0.index_put_((torch.tensor([0, 0]),), torch.tensor([1.0, 2.0]).reshape((2,) + (1,) * (x0.dim() - 1)).expand((2,) + tuple(x0.shape[1:])).clone(), accumulate=True)
    v5 = x0.as_strided((1, 2), (2, 1), 0)
    g6 = torch.nn.functional.embedding(idx, v1)
    return (g6, f3, x0,)
