"""A training example: an MLP with BatchNorm (running statistics written in
place) and an in-place ReLU, whose parameters require grad. `purity run`
compiles its forward and backward, reports what the forward writes and what
it saves for the backward, and checks outputs, buffers and gradients
against eager.
"""

import torch

torch.manual_seed(0)
program = torch.nn.Sequential(
    torch.nn.Linear(6, 16, bias=False),
    torch.nn.BatchNorm1d(16),
    torch.nn.ReLU(inplace=True),
    torch.nn.Linear(16, 3),
)


def example_inputs():
    return (torch.randn(8, 6),)
