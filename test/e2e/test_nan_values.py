"""NaN and infinities in inputs: comparisons with eager, bit for bit."""

import pytest
import torch

import torch_purity

VALUES = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), -0.0])


def equal_to_itself(x):
    return x == x


def finite(x):
    return torch.isfinite(x)


def equal_to_a_copy(x):
    return x == x.clone()


@pytest.mark.parametrize("program", [equal_to_itself, finite, equal_to_a_copy, torch.isnan, torch.isinf])
def test_nan_comparisons(program):
    assert torch.equal(torch_purity.compile(program)(VALUES.clone()), program(VALUES.clone()))
