"""The eager oracle's comparison (checking.compare): what counts as a difference."""

import torch

from torch_purity.checking import compare


def _returning(value: torch.Tensor):
    return lambda x: value.clone()


def test_a_wrong_value_is_reported():
    want = torch.tensor([15.2602, 0.5848, -14.4981, 7.4797])
    report = compare(_returning(want), _returning(want + torch.tensor([0.0, 0.01, 0.0, 0.0])), (torch.zeros(1),))
    assert not report.ok and "values differ" in report.problems[0]


def test_rounding_of_a_cancelling_sum_is_within_tolerance():
    """0.5848 off by 1.7e-5 is beyond 1e-5 relative to itself, but within it
    relative to the output's magnitudes (case_500539edfa48)."""
    want = torch.tensor([15.2602, 0.5848, -14.4981, 7.4797])
    got = want + torch.tensor([0.0, 1.67e-5, 0.0, 0.0])
    assert compare(_returning(want), _returning(got), (torch.zeros(1),)).ok


def test_a_nan_where_eager_has_a_number_is_reported():
    want = torch.tensor([1.0, 2.0])
    report = compare(_returning(want), _returning(torch.tensor([1.0, float("nan")])), (torch.zeros(1),))
    assert not report.ok


def test_captured_state_starts_from_the_same_values_and_is_compared():
    counter = torch.zeros(2)

    def eager(x):
        counter.add_(1)
        return x + counter

    def forgets_the_write(x):
        return x + counter + 1

    assert compare(eager, eager, (torch.zeros(2),), state=[("counter", counter)]).ok
    report = compare(eager, forgets_the_write, (torch.zeros(2),), state=[("counter", counter)])
    assert not report.ok and "counter after the call" in report.problems[0]
