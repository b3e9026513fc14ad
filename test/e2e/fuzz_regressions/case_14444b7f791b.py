# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# differs from eager on data 0: output 0: values differ from eager (max abs difference 7.34)
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(2, 2, generator=g)
    base2 = torch.randn(2, 2, generator=g)
    return (base0, base0, base2,)


def program(x0, x1, x2):
    f0 = x0 * 2 + x0.sum()
    x2.add_(1.5)
    x0.index_put_((torch.tensor([0]),), torch.tensor(2.0))
    return (f0,)
