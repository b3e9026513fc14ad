"""Ops that change a tensor's shape in place, against eager: out= ops that
resize their `out` tensor, `resize_` (growing, shrinking, another rank) and
`set_`. A fresh tensor an out= op resizes compiles (`fx_import.
_fresh_out_tensors_as_results`); a resized or re-pointed input runs those
ops in eager between compiled segments, and every later use sees the new
shape (`segments._alias_parent`: such a write is its own value)."""

import warnings

import pytest
import torch

import torch_purity
from torch_purity.checking import compare


def _into_fresh(op):
    def program(*tensors):
        out = torch.empty(0)
        op(*tensors, out=out)
        return out, out * 2

    return program


def _arange_into(x):
    r = torch.empty(0, dtype=torch.int64)
    torch.arange(2, 9, out=r)
    return r + x


COMPILED = {
    "add_resizes_a_fresh_tensor": (_into_fresh(torch.add), [torch.randn(3, 4), torch.randn(4)]),
    "cat_resizes_a_fresh_tensor": (
        lambda a, b: _into_fresh(lambda *t, out: torch.cat(list(t), out=out))(a, b),
        [torch.randn(3, 4), torch.randn(2, 4)],
    ),
    "int_result_into_a_fresh_float_tensor": (_into_fresh(lambda a, out: torch.add(a, 1, out=out)), [torch.arange(6)]),
    "arange_resizes_a_fresh_tensor": (_arange_into, [torch.ones(7, dtype=torch.int64)]),
    # the program: the write into x was dropped, then the process segfaulted
    "arange_into_an_input": (lambda x: torch.arange(2, 9, out=x) * 1, [torch.zeros(7, dtype=torch.int64)]),
}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_out_resizing_a_fresh_tensor_compiles(name):
    program, inputs = COMPILED[name]
    report = compare(program, torch_purity.compile(program, fallback="error"), inputs)
    assert report.ok, report.problems


def out_resizes_an_input(a, b, out):
    torch.add(a, b, out=out)
    return out.sum(0)


def grow(x):
    x.resize_(4, 4)
    x.view(-1)[4:] = 0.5  # the new elements, uninitialized in eager, written before anything reads them
    return x * 2


def shrink(x):
    x.resize_(2)
    return x * 2


def another_rank(x):
    x.resize_(3, 2)
    return x + 1


def fresh_grows(a):
    r = torch.zeros(2)
    r.resize_(6)
    r[2:] = 1.0
    return r.view(2, 3) + a


def set_to_another_tensor(x, y):
    x.set_(y)
    x.add_(1)
    return x.sum()


def set_to_a_window(x, y):
    x.set_(y.as_strided((2, 2), (2, 1), 1))
    return x * 3


IN_EAGER = {
    "out_resizes_an_input": (out_resizes_an_input, [torch.randn(3, 4), torch.randn(4), torch.empty(0)]),
    "resize_grows": (grow, [torch.randn(2, 2)]),
    "resize_shrinks": (shrink, [torch.randn(2, 3)]),
    "resize_to_another_rank": (another_rank, [torch.randn(6)]),
    "resize_a_fresh_tensor_then_view": (fresh_grows, [torch.randn(2, 3)]),
    "set_to_another_tensor": (set_to_another_tensor, [torch.randn(3), torch.randn(2, 2)]),
    "set_to_a_window": (set_to_a_window, [torch.randn(3), torch.randn(6)]),
}


@pytest.mark.parametrize("name", sorted(IN_EAGER))
def test_shape_changing_writes_match_eager(name):
    program, inputs = IN_EAGER[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch_purity.EagerFallbackWarning)
        report = compare(program, torch_purity.compile(program), inputs)
    assert report.ok, report.problems


def test_set_to_a_storage_is_refused_with_what_to_do():
    def program(x, y):
        x.set_(y.untyped_storage(), 0, (2, 2), (2, 1))
        return x * 3

    with pytest.raises(torch_purity.PurityError, match=r"pass the tensor instead") as raised:
        torch_purity.compile(program)(torch.randn(3), torch.randn(4))
    assert "test_resizing.py" in str(raised.value)
