"""NaN and infinities in inputs: results equal to eager's, NaN where eager
has NaN (torch-mlir's lowerings of `==`, maximum/minimum and clamp lose NaN;
the importer's workarounds keep it)."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import torch_purity

VALUES = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), -2.0, 0.5])
OTHER = torch.tensor([0.0, 0.0, float("nan"), 1.0, -3.0, 2.0])

PROGRAMS = {
    "equal_to_itself": lambda x, y: x == x,
    "equal_to_a_copy": lambda x, y: x == x.clone(),
    "isfinite": lambda x, y: torch.isfinite(x),
    "isnan": lambda x, y: torch.isnan(x),
    "isinf": lambda x, y: torch.isinf(x),
    "maximum": lambda x, y: torch.maximum(x, y),
    "minimum": lambda x, y: torch.minimum(x, y),
    "max_of_two": lambda x, y: torch.max(x, y),
    "clamp": lambda x, y: x.clamp(-1, 1),
    "clamp_min": lambda x, y: x.clamp_min(0),
    "clamp_max": lambda x, y: x.clamp_max(0),
    "clamp_tensor_bounds": lambda x, y: x.clamp(min=y),
    "hardtanh": lambda x, y: F.hardtanh(x),
    "relu6": lambda x, y: F.relu6(x),
    "clamp_in_place": lambda x, y: x.clamp_(-1, 1),
    "clamp_min_in_place": lambda x, y: x.clamp_min_(0.25) * 2,
    "integer_clamp": lambda x, y: torch.arange(6).clamp(1, 3) + x.isnan(),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager_with_nan_and_inf(name):
    program = PROGRAMS[name]
    x, y = VALUES.clone(), OTHER.clone()
    eager_x, eager_y = VALUES.clone(), OTHER.clone()
    got = torch_purity.compile(program)(x, y)
    want = program(eager_x, eager_y)
    assert got.dtype == want.dtype
    assert torch.equal(got, want) if not want.is_floating_point() else torch.allclose(got, want, equal_nan=True)
    assert torch.allclose(x, eager_x, equal_nan=True) and torch.allclose(y, eager_y, equal_nan=True)


def clamp_parameter(param, grad):
    param.add_(grad, alpha=-0.1).clamp_(-1, 1)
    return param.sum()


def test_an_in_place_clamp_of_an_input_stays_in_place():
    """The NaN-keeping clamp is still a pointwise update: the input is tied."""
    compiled = torch_purity.compile(clamp_parameter)
    param, grad = torch.randn(64), torch.randn(64)
    expected = param.clone()
    clamp_parameter(expected, grad)
    compiled(param, grad)
    entry, _ = compiled.entry_for(param, grad)
    assert entry.convention.tied_inputs == {0}
    assert torch.allclose(param, expected)


# Variances over N <= correction elements: eager divides by max(0, N - correction), so NaN or inf.
VARIANCES = {
    "variance_of_nothing": (lambda x: torch.var_mean(x, 0, unbiased=True), (0, 5)),
    "variance_of_one": (lambda x: torch.var(x), (1,)),
    "std_of_one_per_row": (lambda x: torch.std(x, dim=1), (3, 1)),
    "variance_correction_two": (lambda x: torch.var(x, dim=0, correction=2), (2, 3)),
    "std_mean_of_a_scalar": (lambda x: torch.std_mean(x, dim=0, unbiased=True), ()),
    "variance_of_a_scalar_uncorrected": (lambda x: torch.var(x, dim=0, unbiased=False), ()),
    "variance_of_many": (lambda x: torch.var_mean(x, dim=0), (4, 3)),
}


@pytest.mark.parametrize("name", sorted(VARIANCES))
def test_variance_of_too_few_elements_matches_eager(name):
    program, shape = VARIANCES[name]
    x = torch.randn(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager warns that the degrees of freedom are <= 0
        want = program(x)
        got = torch_purity.compile(program)(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape and torch.allclose(g, w, equal_nan=True), (g, w)


# Ordering with NaN: eager orders NaN above every number (argmax/argmin give
# the first NaN, sort puts NaN last ascending and first descending, topk takes
# NaN as the largest). Rows and columns hold no two equal values, so the
# order of indices is defined even where the sort is not stable.
ROWS = torch.tensor(
    [
        [1.0, float("nan"), 3.0, -1.0, float("inf")],
        [2.0, 0.5, float("inf"), -float("inf"), 7.0],
        [float("nan"), -2.0, 4.0, 0.0, -float("inf")],
        [-0.5, 1e30, 6.0, float("nan"), 2.0],
    ]
)
# Several NaN in a row: only where eager's answer is defined (the first NaN, a stable sort).
MANY_NAN = torch.tensor([[3.0, float("nan"), float("inf"), float("nan"), -1.0], [float("nan")] * 5])

ORDERING = {
    "argmax": (lambda x: x.argmax(1), ROWS),
    "argmax_keepdim": (lambda x: x.argmax(-1, keepdim=True), ROWS),
    "argmax_of_all": (lambda x: x.argmax(), ROWS),
    "argmin": (lambda x: x.argmin(1), ROWS),
    "argmin_of_all_keepdim": (lambda x: x.argmin(keepdim=True), ROWS),
    "max_along_dim": (lambda x: torch.max(x, 1), ROWS),
    "min_along_dim_0": (lambda x: torch.min(x, 0), ROWS),
    "argmax_first_of_many_nan": (lambda x: x.argmax(1), MANY_NAN),
    "sort": (lambda x: torch.sort(x, 1), ROWS),
    "sort_descending_columns": (lambda x: torch.sort(x, 0, descending=True), ROWS),
    "stable_sort_many_nan": (lambda x: torch.sort(x, dim=1, stable=True), MANY_NAN),
    "stable_argsort_descending_many_nan": (lambda x: x.argsort(dim=1, stable=True, descending=True), MANY_NAN),
    "msort": (lambda x: x.msort(), ROWS),
    "topk_largest": (lambda x: x.topk(2, 1), ROWS),
    "topk_smallest": (lambda x: x.topk(3, 1, largest=False), ROWS),
    "sort_after_an_in_place_write": (lambda x: x.mul_(2).sort(1).values, ROWS),
}
ORDERING_CASES = [(name, dtype) for name in sorted(ORDERING) for dtype in (torch.float32, torch.float64)] + [
    (name, torch.float16) for name in ("argmax", "sort", "topk_largest")
]


@pytest.mark.parametrize("name,dtype", ORDERING_CASES, ids=[f"{n}-{str(d)[6:]}" for n, d in ORDERING_CASES])
def test_ordering_with_nan_matches_eager(name, dtype):
    program, data = ORDERING[name]
    x, eager_x = data.to(dtype).clone(), data.to(dtype).clone()
    # A stable sort has no Torch op and runs in eager (the eager fallback); the rest compiles.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch_purity.EagerFallbackWarning)
        got = torch_purity.compile(program, fallback="eager" if "stable" in name else "error")(x)
    want = program(eager_x)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        assert torch.equal(g, w) if not w.is_floating_point() else torch.allclose(g, w, equal_nan=True), (g, w)
    assert torch.allclose(x, eager_x, equal_nan=True)
