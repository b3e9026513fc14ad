# A minimal program found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# differs from eager on data 1: output 0: values differ from eager (max abs difference 0.000202);
# input 0 after the call: values differ from eager (max abs difference 0.000202)
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(2, 3, 3, 4, generator=g).contiguous(memory_format=torch.channels_last)
    return (base0,)


def program(x0):
    x0.add_(x0.sum().item())
    x0.add_(1.5)
    x0.sub_(x0.sum() * 0 + 0.25)
    x0.add_(x0.sum().item())
    return (x0,)
