"""Classes of programs written elsewhere (PyTorch's and torch-mlir's published
tests) that Purity once got wrong, crashed on or refused, each against eager:
complex and negative-bit views, dtype views, `_foreach_*`, `as_strided` on
views and channels_last inputs, `as_strided_copy`, `slogdet`, `xlogy`,
`ReflectionPad3d`, `diag` with an offset, unfold-based im2col; and the
honest refusals of Python decisions on tensor data."""

import warnings

import pytest
import torch

import torch_purity
from torch_purity.checking import compare


def foreach_ops(a, b, c, d):
    torch._foreach_add_([a, b], [c, d])
    return torch._foreach_mul([a, b], 2.0)


def complex_views(x):
    c = torch.view_as_complex(x)
    return torch.view_as_real(c * 2), torch.view_as_real(c.conj().resolve_conj())


def negative_bit_view(x):
    # the view runs in eager; the compiled clone read its memory un-negated
    return torch._neg_view(x).clone(), x * 2


def dtype_views_back_and_forth(x):
    x.view(torch.int32).add_(1)
    return x.view(torch.int32).view(torch.float32) * 1, x


def as_strided_on_a_select(x):
    # eager starts at the view's own storage offset: [[4, 5], ...]
    return torch.as_strided(x.select(1, 1), (2, 2), (12, 1))


def as_strided_on_a_narrow(x):
    return torch.as_strided(x.narrow(2, 1, 2), (2, 2), (12, 1)) * 1


def as_strided_over_channels_last(x):
    return torch.as_strided(x, (2, 3), (1, 4))


PROGRAMS = {
    "foreach": (foreach_ops, lambda: [torch.randn(3), torch.randn(2, 2), torch.randn(3), torch.randn(2, 2)]),
    "complex_views": (complex_views, lambda: [torch.randn(4, 2)]),
    "negative_bit_view": (negative_bit_view, lambda: [torch.randn(5)]),
    "dtype_views": (dtype_views_back_and_forth, lambda: [torch.randn(5)]),
    "as_strided_copy": (lambda x: torch.as_strided_copy(x[1:], (2, 2), (1, 2)), lambda: [torch.randn(5)]),
    "slogdet": (torch.linalg.slogdet, lambda: [torch.randn(3, 3)]),
    "xlogy": (lambda x, y: (torch.xlogy(x, y), torch.special.xlogy(x, 2.0)), lambda: [torch.rand(5), torch.rand(5)]),
    "reflection_pad3d": (torch.nn.ReflectionPad3d(1), lambda: [torch.randn(1, 1, 2, 3, 3)]),
    "diag_with_offset": (
        lambda v, m: (torch.diag(v, 1), torch.diag(m, -1)),
        lambda: [torch.randn(3), torch.randn(4, 4)],
    ),
    "unfold_im2col": (
        lambda x: x.unfold(2, 2, 1).unfold(3, 2, 1).reshape(1, 2, 9, 4),
        lambda: [torch.randn(1, 2, 4, 4)],
    ),
    "as_strided_on_a_select": (as_strided_on_a_select, lambda: [torch.arange(24.0).reshape(2, 3, 4)]),
    "as_strided_on_a_narrow": (as_strided_on_a_narrow, lambda: [torch.arange(24.0).reshape(2, 3, 4)]),
    "as_strided_over_channels_last": (
        as_strided_over_channels_last,
        lambda: [torch.randn(1, 4, 5, 3).contiguous(memory_format=torch.channels_last)],
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name):
    program, inputs = PROGRAMS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch_purity.EagerFallbackWarning)
        report = compare(program, torch_purity.compile(program), inputs())
    assert report.ok, report.problems


def test_an_argument_with_the_negative_bit_is_refused_untouched():
    x = torch._neg_view(torch.randn(4))
    before = x.resolve_neg()
    with pytest.raises(torch_purity.PurityError, match="lazy negative bit"):
        torch_purity.compile(lambda t: t.mul_(2))(x)
    assert torch.equal(x.resolve_neg(), before)


def test_the_negative_bit_is_refused_after_calls_without_it():
    # Repeated calls skip the per-call refusal: the repeat check (Dynamo's,
    # comparing dispatch keys) must send a lazy tensor back to it.
    compiled = torch_purity.compile(lambda t: t.mul_(2))
    plain = torch.randn(4)
    for _ in range(3):
        compiled(plain)
    x = torch._neg_view(torch.randn(4))
    before = x.resolve_neg()
    with pytest.raises(torch_purity.PurityError, match="lazy negative bit"):
        compiled(x)
    assert torch.equal(x.resolve_neg(), before)


def _decides_on_data(x):
    return x * 2 if bool(x.sum() > 0) else x * 3


def _equal_as_output(x):
    return x * 2, torch.equal(x, x + 1)


def _nonzero_into(x):
    return torch.nonzero(x, out=torch.empty(0, 1, dtype=torch.long))


@pytest.mark.parametrize(
    "program, message",
    [
        (_decides_on_data, r"test_published_classes.py:\d+: the program makes a Python decision on tensor data"),
        (
            _equal_as_output,
            r"on op aten.equal.default at \S*test_published_classes.py:\d+: this op returns a Python value",
        ),
        (_nonzero_into, r"on op aten.nonzero.out at \S*test_published_classes.py:\d+: .*shape depends on tensor data"),
    ],
    ids=["bool_of_a_tensor", "equal_returned", "nonzero_out"],
)
def test_python_values_from_tensor_data_are_refused_located(program, message):
    with pytest.raises(torch_purity.PurityError, match=message):
        torch_purity.compile(program)(torch.randn(4))


def _narrow_at_a_start_given_as_a_tensor(x, start):
    return torch.narrow(x, 1, start, 2)


def test_a_number_from_data_between_eager_and_compiled_steps_is_refused_located():
    """`narrow` at a 0-d tensor start (an OpInfo sample) reads the start with
    `.item()` and runs its slice in eager; the number cannot cross to it."""
    x, start = torch.randn(5, 5, 5), torch.tensor(2)
    with pytest.raises(
        torch_purity.PurityError,
        match=r"on op aten._local_scalar_dense.default at \S*test_published_classes.py:\d+: a number read from tensor",
    ):
        torch_purity.compile(_narrow_at_a_start_given_as_a_tensor)(x, start)
