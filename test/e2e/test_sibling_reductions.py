"""A float32 variance reads its input once: var, std, var_mean and std_mean
(BatchNorm's statistics in training mode) sum the deviations from a shift
and their squares side by side (importer/fx_import.py,
`_shifted_one_pass_spread`), and purity-merge-sibling-reductions makes one
reduction of the two sums, as it does for BatchNorm's backward sums. The
answers stay as close to the exact ones as eager's, on data whose mean is
far from zero (where an unshifted sum of squares loses every digit), and
keep eager's inf and NaN."""

from __future__ import annotations

import re

import pytest
import torch

import torch_purity


def _reductions_per_function(compiled) -> dict[str, list[str]]:
    """Per function of the compiled program: its reduction generics' result lists (`%4:2`, `%7`)."""
    (entry,) = compiled.cache.values()
    text = entry.lowered.iree_input
    found = {}
    for body in re.split(r"(?=func\.func @)", text)[1:]:
        name = re.match(r"func\.func @(\w+)", body).group(1)
        found[name] = re.findall(r"(%\w+(?::\d+)?) = linalg\.generic \{[^\n]*reduction", body)
    return found


def _assert_as_close_as_eager(got: torch.Tensor, want: torch.Tensor, true: torch.Tensor) -> None:
    torch.testing.assert_close(got, want)
    spacing = torch.finfo(torch.float32).eps * true.abs()
    assert bool(((got.double() - true).abs() <= (want.double() - true).abs() + spacing).all())


SPREADS = {
    "var_over_batch_and_space": lambda x: x.var(dim=(0, 2, 3)),
    "std_over_channels_kept": lambda x: x.std(dim=1, keepdim=True),
    "var_mean_without_correction": lambda x: torch.var_mean(x, dim=(0, 2, 3), correction=0),
    "std_mean_of_everything": lambda x: torch.std_mean(x),
    "var_of_the_last_dim_corrected_by_two": lambda x: x.var(dim=-1, correction=2),
}


@pytest.mark.parametrize("name", list(SPREADS))
def test_spreads_far_from_zero_are_as_close_as_eager(name: str) -> None:
    spread = SPREADS[name]
    generator = torch.Generator().manual_seed(11)
    # A mean of 1e4 and a spread of 0.05: the sum of squares of the data
    # itself is 4e10 times the variance, more than float64 can cancel.
    x = torch.randn(6, 5, 7, 9, generator=generator) * 0.05 + 1e4
    got, want, true = torch_purity.compile(spread)(x), spread(x), spread(x.double())
    for got_part, want_part, true_part in zip(*(torch.atleast_1d(t) for t in (got, want, true)), strict=True):
        _assert_as_close_as_eager(got_part, want_part, true_part)


def test_infinite_and_nan_elements_give_eagers_answers() -> None:
    x = torch.randn(4, 3, 5)
    x[0, 0, 0] = float("inf")  # the first element of its slice: the shift
    x[2, 1, 3] = float("-inf")
    x[1, 2, 2] = float("nan")
    y = torch.randn(4, 3, 5)
    y[3, 1, 0] = float("nan")

    # (Not var_mean's mean beside an inf: eager's one-pass CPU kernel gives
    # inf or NaN there depending on where the inf sits; the plain mean, as
    # here and in BatchNorm, is inf.)
    def spreads(x, y):
        return x.std(dim=0), x.var(dim=2), x.var(dim=(0, 2), keepdim=True), torch.var_mean(y, dim=(0, 2))

    got, want = torch_purity.compile(spreads)(x, y), spreads(x, y)
    for got_part, want_part in zip(torch.utils._pytree.tree_leaves(got), torch.utils._pytree.tree_leaves(want)):
        torch.testing.assert_close(got_part, want_part, equal_nan=True)


def test_a_variance_is_one_reduction() -> None:
    compiled = torch_purity.compile(lambda x: torch.var_mean(x, dim=(0, 2, 3)))
    x = torch.randn(4, 8, 6, 6)
    torch.testing.assert_close(compiled(x), torch.var_mean(x, dim=(0, 2, 3)))
    reductions = _reductions_per_function(compiled)["main"]
    assert len(reductions) == 1 and reductions[0].endswith(":2"), reductions


def test_batch_norm_training_reads_its_input_once_each_way() -> None:
    """The forward's statistics and the backward's two sums over the
    gradient are one reduction each; the step matches eager's."""
    torch.manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU()).train()
    reference = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU()).train()
    reference.load_state_dict(model.state_dict())
    compiled = torch_purity.compile(model)
    x = torch.randn(8, 6)
    compiled(x).square().mean().backward()
    reference(x).square().mean().backward()
    for ours, eager in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(ours.grad, eager.grad)
    for ours, eager in zip(model.buffers(), reference.buffers(), strict=True):
        torch.testing.assert_close(ours, eager)
    reductions = _reductions_per_function(compiled)
    assert [r.endswith(":2") for r in reductions["forward"]] == [True], reductions["forward"]
    # The BatchNorm's sums of the gradient and of the gradient times the
    # centred input, then the Linear's bias gradient (which reads them).
    assert [r.endswith(":2") for r in reductions["backward"]] == [True, False], reductions["backward"]
