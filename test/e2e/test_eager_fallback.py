"""Ops Purity cannot compile run in eager between compiled segments
(driver/segments.py): custom ops with mutable arguments, ATen ops without a
Torch op, ops torch-mlir fails to lower. Each program is compared with eager:
outputs, inputs after the call, outputs sharing storage."""

import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import torch_purity
from torch_purity import EagerFallbackWarning, PurityError
from torch_purity.checking import compare

received_addresses: list[int] = []


@torch.library.custom_op("purity_fallback_test::scale_", mutates_args=("x",))
def scale_(x: torch.Tensor, factor: float) -> None:
    """A kernel library's in-place op: eager only (no Torch-dialect op)."""
    received_addresses.append(x.data_ptr())
    x.mul_(factor)


@torch.library.custom_op("purity_fallback_test::plus_hundred", mutates_args=())
def plus_hundred(x: torch.Tensor) -> torch.Tensor:
    out = x + 100
    received_addresses.append(out.data_ptr())
    return out


@plus_hundred.register_fake
def _(x):
    return torch.empty_like(x)


def custom_ops_and_views(a, b):
    """An eager op writes an intermediate through a view and then an input;
    compiled segments write inputs through views and read what eager wrote."""
    t = a * 2
    tail = t[1:]
    scale_(tail, 3.0)  # eager writes the intermediate through a view
    b[0].add_(1)  # compiled: a write to an input through a view
    scale_(b, 2.0)  # eager writes an input the compiled segment wrote
    shifted = plus_hundred(t)  # eager reads the intermediate written in eager
    b.add_(shifted[:2].sum())  # compiled reads eager's result, writes the input
    return t, tail, shifted, b[1:]


def _inputs():
    return [torch.arange(4.0), torch.ones(4)]


def test_custom_mutable_op_matches_eager_with_one_warning():
    compiled = torch_purity.compile(custom_ops_and_views)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = compare(custom_ops_and_views, compiled, _inputs())
    assert report.ok, report.problems
    fallback = [w for w in caught if issubclass(w.category, EagerFallbackWarning)]
    assert len(fallback) == 1, [str(w.message) for w in fallback]
    message = str(fallback[0].message)
    assert "purity_fallback_test.scale_.default" in message
    assert "purity_fallback_test.plus_hundred.default" in message
    assert "test_eager_fallback.py:" in message
    assert fallback[0].filename == __file__, "the warning points at the caller's line"
    entry = next(iter(compiled.cache.values()))
    assert [op.op for op in entry.eager_ops] == [
        "purity_fallback_test.scale_.default",
        "purity_fallback_test.scale_.default",
        "purity_fallback_test.plus_hundred.default",
    ]


def test_writes_cross_the_boundary_both_ways():
    """Eager sees what a compiled segment wrote in place, and a later segment
    sees what eager wrote; the returned view shares the intermediate's storage."""
    compiled = torch_purity.compile(custom_ops_and_views)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EagerFallbackWarning)
        a, b = _inputs()
        b_address = b.data_ptr()
        t, tail, shifted, b_tail = compiled(a, b)
    assert torch.equal(t, torch.tensor([0.0, 6.0, 12.0, 18.0]))
    assert torch.equal(b, torch.tensor([4.0, 2.0, 2.0, 2.0]) + 206.0)
    assert b.data_ptr() == b_address
    assert tail.data_ptr() == t.data_ptr() + 4, "the returned tail is a view of the returned intermediate"
    assert b_tail.data_ptr() == b_address + 4, "a view of the caller's input, as eager returns"
    t[2] = -1.0
    assert tail[1].item() == -1.0


def test_boundary_passes_tensors_without_copies():
    """The eager op receives the compiled segment's own output (the
    intermediate's storage), and the returned intermediate is that storage."""
    compiled = torch_purity.compile(custom_ops_and_views)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EagerFallbackWarning)
        compiled(*_inputs())  # compiles
        received_addresses.clear()
        a, b = _inputs()
        t, tail, shifted, _ = compiled(a, b)
    # scale_(tail), scale_(b), plus_hundred's own result.
    assert received_addresses == [t.data_ptr() + 4, b.data_ptr(), shifted.data_ptr()]


def test_fallback_error_refuses_with_location_and_leaves_inputs():
    compiled = torch_purity.compile(custom_ops_and_views, fallback="error")
    a, b = _inputs()
    with pytest.raises(PurityError) as raised:
        compiled(a, b)
    assert raised.value.op == "purity_fallback_test.scale_.default"
    assert "test_eager_fallback.py" in (raised.value.source or "")
    assert torch.equal(a, torch.arange(4.0)) and torch.equal(b, torch.ones(4))


def test_unknown_fallback_mode_is_a_value_error():
    with pytest.raises(ValueError, match="fallback='sometimes'"):
        torch_purity.compile(custom_ops_and_views, fallback="sometimes")


def weight_norm_linear(v, g, x):
    w = torch._weight_norm(v, g, 0)  # aten._weight_norm_interface: torch-mlir fails to lower it
    x.add_(1)
    return x @ w.t()


def matrix_exponential(a, x):
    e = torch.linalg.matrix_exp(a)  # no Torch-dialect op, no decomposition
    x.mul_(2)
    return e @ x, x[:1]


def decibels(x, y):
    level = torch.log10(x.abs() + 1) * 20  # IREE's executable does not link: no log10f
    y.add_(level)
    return level.sum(), y


def sorted_rows_of_a_view(x):
    # IREE rejects the sort's dispatch ("write affecting operations on global resources ...") for
    # integers; a float sort sorts computed keys (TORCH-MLIR-WORKAROUND(nan-ordering)) and compiles.
    values, positions = torch.sort(x[1:], dim=-1)
    return values * 2, positions


@pytest.mark.parametrize(
    "program, inputs, reason",
    [
        (weight_norm_linear, lambda: [torch.randn(4, 3), torch.rand(4, 1) + 0.5, torch.randn(2, 3)], "failed"),
        (matrix_exponential, lambda: [torch.randn(3, 3) * 0.3, torch.randn(3, 2)], "no decomposition"),
        (decibels, lambda: [torch.randn(5, 7), torch.randn(5, 7)], "IREE failed"),
        (sorted_rows_of_a_view, lambda: [torch.randperm(45).reshape(5, 9)], "IREE failed"),
    ],
    ids=["weight_norm", "matrix_exp", "iree_link_error", "iree_dispatch_error"],
)
def test_aten_ops_without_lowering_run_in_eager(program, inputs, reason):
    compiled = torch_purity.compile(program)
    with pytest.warns(EagerFallbackWarning):
        report = compare(program, compiled, inputs())
    assert report.ok, report.problems
    entry = next(iter(compiled.cache.values()))
    assert entry.eager_ops and all(reason in op.reason for op in entry.eager_ops), entry.eager_ops


def test_op_iree_rejects_is_named_without_fallback():
    """IREE's diagnostics name only the user's line: the op comes from a second
    compile that prints the failing operation with its ATen location."""
    with pytest.raises(torch_purity.PurityError, match="on op aten.log10.default") as raised:
        torch_purity.compile(decibels, fallback="error")(torch.randn(5, 7), torch.randn(5, 7))
    assert "IREE failed" in str(raised.value)


def test_custom_op_through_torch_compile():
    compiled = torch.compile(custom_ops_and_views, backend="purity")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EagerFallbackWarning)
        report = compare(custom_ops_and_views, compiled, _inputs())
    assert report.ok, report.problems


def test_save_and_training_are_refused_by_name():
    compiled = torch_purity.compile(matrix_exponential)
    with pytest.warns(EagerFallbackWarning):
        compiled(torch.randn(3, 3), torch.randn(3, 2))
    with pytest.raises(PurityError, match="linalg_matrix_exp.default runs in eager"):
        compiled.save("/tmp/purity-never-written")
    weights = torch.randn(3, 3, requires_grad=True)
    with pytest.raises(PurityError, match="inside a training program is not supported"):
        torch_purity.compile(matrix_exponential)(weights, torch.randn(3, 2))


def test_purity_run_reports_eager_ops(tmp_path):
    program = tmp_path / "custom_op_program.py"
    program.write_text(
        textwrap.dedent(
            """
            import torch

            @torch.library.custom_op("purity_fallback_cli::clamp_", mutates_args=("x",))
            def clamp_(x: torch.Tensor, limit: float) -> None:
                x.clamp_(-limit, limit)

            def program(x, y):
                t = x * 3
                clamp_(t[1:], 2.0)
                y.add_(t.sum(0))
                return t

            def example_inputs():
                return torch.randn(4, 5), torch.zeros(5)
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "torch_purity.tools.purity", "run", str(program)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "ran in eager (ops Purity cannot compile): 1" in result.stdout
    assert f"purity_fallback_cli.clamp_.default at {program}:10: a custom op" in result.stdout
    assert "check against eager: outputs, inputs after the call and output aliasing match" in result.stdout
    assert "Warning" not in result.stderr


@torch.library.custom_op("purity_fallback_test::bump_and_sum", mutates_args=("x",))
def bump_and_sum(x: torch.Tensor) -> torch.Tensor:
    """Writes its argument and returns a new tensor (not an alias of it)."""
    x.add_(1)
    return x.sum(0)


@bump_and_sum.register_fake
def _(x):
    return x.new_empty(x.shape[1:])


def writes_and_returns(x):
    row = x[1]
    s = bump_and_sum(x[1:])
    row.mul_(s[0])
    return s * 1, row


def test_op_writing_an_argument_and_returning_a_new_tensor():
    """Only a result the schema marks as an alias is the written argument
    (found by an adversarial run: the result was taken for the argument)."""
    compiled = torch_purity.compile(writes_and_returns)
    with pytest.warns(EagerFallbackWarning):
        report = compare(writes_and_returns, compiled, [torch.arange(6.0).reshape(3, 2)])
    assert report.ok, report.problems


@torch.library.custom_op("purity_fallback_test::storage_order", mutates_args=())
def storage_order(x: torch.Tensor) -> torch.Tensor:
    """Reads its argument in storage order (as a kernel on raw memory does)."""
    flat = torch.empty(0, dtype=x.dtype).set_(x.untyped_storage(), x.storage_offset(), (x.numel(),), (1,))
    return flat.clone()


@storage_order.register_fake
def _(x):
    return x.new_empty((x.numel(),))


def permuted_intermediate(x):
    return storage_order(x.t() * 2)


def test_eager_op_gets_intermediates_laid_out_as_in_eager():
    """Eager keeps `x.t() * 2` column-major; the compiled segment returns it
    row-major; the boundary lays it out as eager does before the eager op."""
    compiled = torch_purity.compile(permuted_intermediate)
    with pytest.warns(EagerFallbackWarning):
        report = compare(permuted_intermediate, compiled, [torch.arange(12.0).reshape(3, 4)])
    assert report.ok, report.problems


def custom_op_in_a_branch(x, flag):
    """A cond whose branch calls an op Purity cannot compile: the whole cond
    runs in eager, the writes around it compiled."""
    x.mul_(2)

    def shifted(x):
        return (plus_hundred(x),)

    def negated(x):
        return (-x,)

    (chosen,) = torch.cond(flag, shifted, negated, (x,))
    x.add_(1)
    return chosen + x


@pytest.mark.parametrize("flag", [True, False])
def test_cond_with_an_uncompilable_branch_runs_in_eager(flag):
    compiled = torch_purity.compile(custom_op_in_a_branch)
    with pytest.warns(EagerFallbackWarning, match="cond at .*its subgraph calls purity_fallback_test.plus_hundred"):
        report = compare(custom_op_in_a_branch, compiled, [torch.arange(4.0), torch.tensor(flag)])
    assert report.ok, report.problems


def two_remainders_through_views(b0, o0, b1, o1):
    # prims.remainder runs in eager; the compiled step after the first one reads
    # a base (b1) it meets only after the eager result: its inputs were listed in
    # another order than its placeholders, and same-shaped ones were swapped.
    return b0[1:].remainder_(o0), b1[:1].remainder_(o1)


@pytest.mark.parametrize(
    "inputs",
    [
        lambda: [torch.tensor([3.0, 5.5]), torch.tensor(2.0), torch.tensor([7.25]), torch.tensor(3.0)],
        lambda: [torch.tensor([3.0, 5.5]), torch.tensor(2.0), torch.arange(6.0) + 3, torch.tensor(2.0)],
    ],
    ids=["same_shapes", "different_shapes"],
)
def test_step_inputs_follow_its_placeholders(inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EagerFallbackWarning)
        report = compare(two_remainders_through_views, torch_purity.compile(two_remainders_through_views), inputs())
    assert report.ok, report.problems


@torch.library.custom_op("purity_fallback_test::double_", mutates_args=("x",))
def double_(x: torch.Tensor) -> None:
    """An in-place op with no Torch-dialect op, and no Python effect of its own."""
    x.mul_(2.0)


def scale_then_write_rows(x, cache, rows):
    """An eager op writes an input, then a compiled step, the last, writes
    rows of another input at positions read from data (bounds-checked)."""
    double_(x)
    cache.index_copy_(0, rows, x[: rows.shape[0]])
    return cache.sum()


def test_a_failing_last_step_leaves_every_input_as_it_was():
    """The compiled last step fails its index check: it writes nothing (so
    what it alone writes is not copied beforehand), and the eager op's write
    before it is restored from the copy taken before the first step."""
    x, cache = torch.arange(12.0).reshape(4, 3), torch.zeros(6, 3)
    compiled = torch_purity.compile(scale_then_write_rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EagerFallbackWarning)
        compiled(x.clone(), cache.clone(), torch.tensor([0, 5]))  # (compiles; in range)
        before = [x.clone(), cache.clone()]
        with pytest.raises(IndexError):
            compiled(x, cache, torch.tensor([0, 6]))
    torch.testing.assert_close(x, before[0], rtol=0, atol=0)
    torch.testing.assert_close(cache, before[1], rtol=0, atol=0)
    (entry,) = compiled.cache.values()
    assert entry.segments.restored_inputs == [0], "only the eager op's input is copied for restore"
