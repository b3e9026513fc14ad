"""Python numbers read from tensor data (`.item()`) inside a compiled program:
returned as eager returns them (a new value per call, eager's Python type),
and compared as Python compares them, NaN included."""

import dataclasses
import math
import operator

import pytest
import torch

import torch_purity


def _same_number(got: object, want: object) -> bool:
    if type(got) is not type(want):
        return False
    if isinstance(want, float) and math.isnan(want):
        return math.isnan(got)
    return got == want


def _assert_matches_eager(program, *args):
    eager_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    want = program(*eager_args)
    got = torch_purity.compile(program)(*args)
    assert type(got) is type(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            torch.testing.assert_close(g, w, equal_nan=True)
        else:
            assert _same_number(g, w), (g, w)
    for a, e in zip(args, eager_args):
        if isinstance(a, torch.Tensor):
            torch.testing.assert_close(a, e, equal_nan=True)


def _returns_checked_total(x):
    total = x.sum().item()
    torch._check(total != -1000.5)
    return x * 2, total


def _returns_numbers_of_each_type(x):
    return x.max().item(), x.float().mean().item(), x.bool().any().item(), x.nan_to_num().long().sum().item() * 2 + 1


@pytest.mark.parametrize("program", [_returns_checked_total, _returns_numbers_of_each_type])
def test_a_returned_number_is_this_calls_value(program):
    compiled = torch_purity.compile(program)
    for values in ([1.0, 2.0, 3.5], [-4.0, 0.0, 0.25], [0.0, float("nan"), 1.0]):
        x = torch.tensor(values)
        got, want = compiled(x), program(x.clone())
        assert len(got) == len(want)
        for g, w in zip(got, want):
            if isinstance(w, torch.Tensor):
                torch.testing.assert_close(g, w, equal_nan=True)
            else:
                assert _same_number(g, w), (values, g, w)
    assert len([e for e in compiled.cache.values() if e is not None]) == 1  # one entry served every value


COMPARISONS = [operator.gt, operator.ge, operator.lt, operator.le, operator.eq, operator.ne]
VALUES = [float("nan"), 5.0, 3.0, 1.0, float("inf")]


@pytest.mark.parametrize("compare", COMPARISONS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("value", VALUES, ids=str)
def test_comparisons_of_numbers_from_data_order_nan_as_python(compare, value):
    def program(x, y):
        a, b = x.sum().item(), y.max().item()
        n = x.nan_to_num(posinf=7).long().sum().item()
        return (
            compare(a, 3.0),
            compare(3.0, a),
            compare(a, b),
            compare(a, 3),
            compare(n, 2.5),
            compare(2.5, n),
            compare(n, a),
            compare(n, 3),
        )

    _assert_matches_eager(program, torch.tensor([value]), torch.tensor([3.0, float("nan") if value == 1.0 else 2.0]))


@pytest.mark.parametrize("value", VALUES, ids=str)
def test_a_comparison_inside_a_cond_branch(value):
    def program(x, p):
        def taken(x):
            return (x * 0).add(x.sum().item() > 3.0)

        def other(x):
            return x - 1

        return (torch.cond(p.sum() > 0, taken, other, (x,)),)

    _assert_matches_eager(program, torch.tensor([value, 0.0]), torch.ones(1))


@pytest.mark.parametrize(
    "dtype, values",
    [
        (torch.int32, [7, -3]),
        (torch.uint8, [200, 3]),
        (torch.float16, [0.1, 2.0]),
        (torch.bool, [False, True]),
        (torch.float32, [float("inf"), -0.5]),
    ],
    ids=str,
)
def test_a_returned_number_has_eagers_type_and_value(dtype, values):
    def program(x):
        return x[0].item(), x[1].item(), x.clone()

    _assert_matches_eager(program, torch.tensor(values, dtype=dtype))


@pytest.mark.parametrize("value", VALUES, ids=str)
def test_a_comparison_with_nan_written_into_a_tensor(value):
    def program(x, y):
        y.add_(x.sum().item() > 3.0)
        y.mul_(x.max().item() != x.min().item() * 1.0)
        return y

    _assert_matches_eager(program, torch.tensor([value, 3.0]), torch.ones(2))


def test_a_saved_program_returns_its_numbers(tmp_path):
    compiled = torch_purity.compile(_returns_numbers_of_each_type, torch.tensor([1.0, 2.0]))
    loaded = torch_purity.load(compiled.save(tmp_path / "saved"))
    for values in ([4.0, -0.5], [0.0, 0.0]):
        x = torch.tensor(values)
        got, want = loaded(x), _returns_numbers_of_each_type(x)
        assert len(got) == len(want) and all(_same_number(g, w) for g, w in zip(got, want)), (got, want)


@dataclasses.dataclass
class _Result:
    scaled: torch.Tensor
    total: float
    positive: bool


def _returns_an_object_holding_numbers(x):
    return _Result(x * 2, x.sum().item(), x.max().item() > 0)


def test_numbers_inside_a_returned_object_are_each_calls_values():
    """They were traced symbols inside the object, refused as 'holds a function'."""
    compiled = torch_purity.compile(_returns_an_object_holding_numbers)
    for values in ([1.5, 2.0], [-3.0, -0.5], [float("nan"), 1.0]):
        x = torch.tensor(values)
        got, want = compiled(x), _returns_an_object_holding_numbers(x)
        assert type(got) is _Result
        torch.testing.assert_close(got.scaled, want.scaled, equal_nan=True)
        assert _same_number(got.total, want.total) and _same_number(got.positive, want.positive), (got, want)


def test_a_number_read_from_a_uint8_computation():
    """`.item()` of a uint8 sum lost torch-mlir's tensor metadata in the uint8 rewrite."""
    _assert_matches_eager(lambda u: (u.sum().item(), u.argmax().item()), torch.tensor([200, 3, 255], dtype=torch.uint8))


def test_a_runtime_int_with_a_uint8_tensor_is_refused_located_and_runs_in_eager():
    def program(u, t):
        return (u > t.sum().item(),)

    u, t = torch.tensor([200, 3, 0], dtype=torch.uint8), torch.tensor([-1])
    with pytest.raises(torch_purity.PurityError, match=r"test_item_numbers.py:\d+: an int computed at run time used"):
        torch_purity.compile(program, fallback="error")(u, t)
    _assert_matches_eager(program, u, t)
