# A program (as found, not shrunk) found by `purity fuzz`; test/e2e/test_fuzz.py runs it.
# (purity fuzz --seed 2035 --keep-going, programs 1320 and 1321: an out= write into a transposed alias of the
# tensor it reads, which eager computes in its kernel's order; now run in eager through the fallback)
# differs from eager on data 0: output 1: values differ from eager (max abs difference 2.18); input 0
# after the call: values differ from eager (max abs difference 2.18); input 1 after the call: values
# differ from eager (max abs difference 2.18)
import torch


def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    base0 = torch.randn(3, 2 * 3, generator=g)[:, ::2]
    base2 = torch.randn(3, 3, generator=g)
    return (base0, base0.t(), base2,)


def program(x0, x1, x2):
    torch.mul(x1, 2, out=x1)
    v1 = x2.as_strided((1, 2), (2, 1), 0)
    torch.add(x0, x1, alpha=0.5, out=x1)
    return (v1, x0, x2,)
