"""The bundled example: one decode step writes its key/value rows into a cache in place.

`purity run` convention: `program` is the function (or nn.Module) to compile,
`example_inputs()` returns its inputs.
"""

import torch


def program(k_cache: torch.Tensor, v_cache: torch.Tensor, k: torch.Tensor, v: torch.Tensor, step: torch.Tensor):
    k_cache[3].copy_(k)  # a one-row write through a view of an input
    v_cache.select(0, 3).copy_(v)
    step.add_(1)  # a counter mutated in place
    scores = k_cache @ k  # reads see the writes above
    head, tail = scores.split(4)  # a multi-output view
    tail.mul_(0.5)
    return scores


def example_inputs():
    return torch.randn(8, 16), torch.randn(8, 16), torch.randn(16), torch.randn(16), torch.zeros((), dtype=torch.int64)
