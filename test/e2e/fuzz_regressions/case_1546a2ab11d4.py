# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# segmentation fault in IREE: a write into a tied input that is a view starting inside its storage
# (x[1:]), imported without copy at an unaligned address; fixed: only 64-byte aligned inputs are
# imported in place
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(4, 4, generator=g)
    base2 = torch.randn(4, 4, generator=g)
    return (base0[:1], base0[1:], base2,)


def program(x0, x1, x2):
    v0 = x1[2]
    v0.zero_()
    x1.copy_(x2.sum())
    x0.scatter_add_(0, torch.zeros((1,) + tuple(x0.shape[1:]), dtype=torch.int64), torch.ones((1,) + tuple(x0.shape[1:])))
    return (x0,)
