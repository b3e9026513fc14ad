# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# IREE 3.13 constant-expression hoisting miscompiled the constant scatter index, nondeterministically
# (wrong values or failed compiles); fixed by --iree-opt-const-expr-hoisting=false
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(2, 3, generator=g)
    return (base0, base0[1],)


def program(x0, x1):
    x0.index_put_((torch.tensor([0]),), torch.tensor(2.0))
    x1.scatter_add_(0, torch.zeros((1,) + tuple(x1.shape[1:]), dtype=torch.int64), torch.ones((1,) + tuple(x1.shape[1:])))
    x1.add_(1.5)
    return (x0,)
