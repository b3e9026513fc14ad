"""Shapes at the edges: results with no element, and results whose shape
depends on the data. Found by the OpInfo conformance run (test/conformance):
torch-mlir's and IREE's lowerings crashed on several (SIGFPE on `repeat` by
0 and a `bilinear` of an empty batch, SIGSEGV on `nonzero`); Purity now
makes an empty result without computing it, and runs a data-dependent op in
eager (or refuses it, located, with fallback="error")."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import torch_purity
from torch_purity.checking import compare

EMPTY_RESULTS = {
    "repeat_by_zero": (lambda x: x.repeat(0) + 1, [torch.randn(2)]),
    "bilinear_of_an_empty_batch": (
        lambda a, b, w: F.bilinear(a, b, w) * 2,
        [torch.randn(0, 3), torch.randn(0, 4), torch.randn(5, 3, 4)],
    ),
    "empty_slice_then_sum": (lambda x: x[:, 2:2].exp().sum() + x, [torch.randn(3, 4)]),
    "write_next_to_an_empty_result": (lambda x: (x.add_(1), x.repeat(0, 1))[1], [torch.randn(3, 4)]),
    # SIGFPE in torch-mlir's view lowering (purity-materialize-empty-results)
    "output_view_of_an_empty_input": (lambda x: x.view(0, 2), [torch.randn(0, 2)]),
    "multi_dot_over_an_empty_matrix": (
        lambda a, b, c: torch.linalg.multi_dot([a, b, c]),
        [torch.randn(0, 2), torch.randn(2, 2), torch.randn(2, 2)],
    ),
    # iree-compile SIGFPE on a dot of two empty vectors (IREE-WORKAROUND(empty-contraction))
    "dot_of_empty_vectors": (
        lambda a, b, m: (torch.dot(a, b), torch.mv(m, a), torch.linalg.vecdot(m, a)),
        [torch.randn(0), torch.randn(0), torch.randn(3, 0)],
    ),
    # iree-compile SIGFPE: an out= write into a tensor with no element, next to other writes
    "out_into_an_empty_tensor": (
        lambda x, o, e, f, s, t: (torch.reciprocal(x, out=o), torch.reciprocal(e, out=f), torch.reciprocal(s, out=t)),
        [
            torch.randn(20),
            torch.empty(20),
            torch.randn(1, 0, 3),
            torch.empty(1, 0, 3),
            torch.randn(()),
            torch.empty(()),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(EMPTY_RESULTS))
def test_results_without_elements_match_eager(name):
    program, inputs = EMPTY_RESULTS[name]
    report = compare(program, torch_purity.compile(program, fallback="error"), inputs)
    assert report.ok, report.problems


def positions_of_positives(x):
    found = torch.nonzero(x > 0) * 2  # data-dependent shapes: eager
    return found, found.float().sum() + x.exp().sum(), x.add_(1)  # a static shape again: compiled


def test_data_dependent_shape_runs_in_eager_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = compare(positions_of_positives, torch_purity.compile(positions_of_positives), [torch.randn(16)])
    assert report.ok, report.problems
    warned = [str(w.message) for w in caught if issubclass(w.category, torch_purity.EagerFallbackWarning)]
    assert len(warned) == 1 and "aten.nonzero" in warned[0], warned


def test_data_dependent_shape_is_refused_located_without_fallback():
    with pytest.raises(torch_purity.PurityError, match="depends on the values of its input") as raised:
        torch_purity.compile(lambda x: torch.nonzero(x > 0) * 2, fallback="error")(torch.randn(16))
    assert "test_edge_shapes.py" in str(raised.value)


def _add_product_in_place(x, a, b):
    x.addmm_(a, b, beta=0.2, alpha=0.6)
    return x.sum()


EMPTY_CONTRACTIONS = {
    "empty_contraction_mm": (lambda a, b: torch.mm(a, b) + 1, [torch.randn(5, 0), torch.randn(0, 10)]),
    "empty_contraction_bmm": (lambda a, b: torch.bmm(a, b) * 2, [torch.randn(2, 3, 0), torch.randn(2, 0, 4)]),
    "empty_contraction_addmm_in_place": (
        _add_product_in_place,
        [torch.randn(5, 10), torch.randn(5, 0), torch.randn(0, 10)],
    ),
}


@pytest.mark.parametrize("name", sorted(EMPTY_CONTRACTIONS))
def test_products_over_an_empty_dimension_match_eager(name):
    """iree-compile died (SIGFPE) on these; they are zeros (plus beta * input)."""
    program, inputs = EMPTY_CONTRACTIONS[name]
    report = compare(program, torch_purity.compile(program, fallback="error"), inputs)
    assert report.ok, report.problems


def _reciprocals_in_place(x, empty, scalar):
    x.reciprocal_()
    empty.reciprocal_()
    scalar.reciprocal_()
    return x, empty, scalar


def test_in_place_ops_on_tensors_without_elements_match_eager():
    """iree-compile died (SIGFPE) on this program (found by the OpInfo run)."""
    inputs = [torch.rand(20) + 0.5, torch.rand(1, 0, 3), torch.rand(()) + 0.5]
    report = compare(_reciprocals_in_place, torch_purity.compile(_reciprocals_in_place, fallback="error"), inputs)
    assert report.ok, report.problems


def _integer_max_pool3d(x):
    return torch.nn.functional.max_pool3d(x, 2) * 2


def test_integer_max_pool3d_runs_in_eager():
    """TORCH-MLIR-WORKAROUND(int-max-pool3d): torch-mlir's linalg stage crashed
    (SIGSEGV) on an integer max_pool3d (found by the int64 OpInfo run)."""
    x = torch.randint(-50, 50, (1, 2, 4, 4, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = compare(_integer_max_pool3d, torch_purity.compile(_integer_max_pool3d), [x])
    assert report.ok, report.problems
    warned = [str(w.message) for w in caught if issubclass(w.category, torch_purity.EagerFallbackWarning)]
    assert len(warned) == 1 and "max_pool3d" in warned[0], warned
    with pytest.raises(torch_purity.PurityError, match="max_pool3d crashes on integer tensors"):
        torch_purity.compile(_integer_max_pool3d, fallback="error")(x)
