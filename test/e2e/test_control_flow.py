"""torch.cond and while_loop with mutation around and inside them: imported
as torch.prim.If / torch.prim.Loop regions, functionalized across regions,
compiled (scf) and compared with eager on every branch and trip count."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from torch._higher_order_ops.while_loop import while_loop

import torch_purity
from torch_purity import PurityError, PurityIndexError
from torch_purity.checking import compare


def cond_between_writes(x, y):
    """The branch reads `x` between two in-place writes; the taken branch
    writes a tensor of its own through a view."""
    x.add_(1)

    def doubled_tail(x, y):
        t = x.clone()
        t[1:].mul_(2)
        return (t + y,)

    def difference(x, y):
        return (x - y,)

    (chosen,) = torch.cond(x.sum() > 0, doubled_tail, difference, (x, y))
    x.mul_(3)
    return chosen + x


def cond_result_written_after(x):
    """A branch's result is written in place afterwards and returned with a
    view of it: the caller sees one storage, as in eager."""

    def scaled(x):
        return (x * 2,)

    def shifted(x):
        return (x - 1,)

    (r,) = torch.cond(x[0] > 0, scaled, shifted, (x,))
    r[0].add_(10)
    return r, r[1:]


def count_up(x, limit):
    """A while loop whose trip count is a tensor's value; the body writes a
    clone of its carried tensor through a view; `x` is written after the loop."""

    def keep_going(i, a):
        return i < limit.sum()

    def step(i, a):
        b = a.clone()
        b[0].add_(1)
        return (i + 1, b * 2)

    i, a = while_loop(keep_going, step, (torch.zeros((), dtype=torch.int64), x))
    x.add_(1)
    return a, i


def loop_with_branch(x, limit):
    """A cond inside a while_loop body, with the loop's input written before the loop."""
    x.mul_(0.5)

    def keep_going(i, a):
        return i < limit

    def step(i, a):
        def grow(a):
            return (a + 1,)

        def shrink(a):
            return (a - 2,)

        (b,) = torch.cond(a.sum() < 3, grow, shrink, (a,))
        return (i + 1, b)

    _, a = while_loop(keep_going, step, (torch.zeros((), dtype=torch.int64), x))
    return a


def _signed(value: float):
    return [torch.full((4,), value), torch.arange(4.0)]


@pytest.mark.parametrize("value", [1.0, -1.0], ids=["true_branch", "false_branch"])
def test_cond_reads_tensor_written_before_and_after(value):
    compiled = torch_purity.compile(cond_between_writes)
    report = compare(cond_between_writes, compiled, _signed(value))
    assert report.ok, report.problems


def test_cond_both_branches_share_one_entry():
    """The predicate is a tensor's value: one compiled program takes either
    branch at run time (no retrace, no guard on the predicate)."""
    compiled = torch_purity.compile(cond_between_writes)
    for value in (1.0, -1.0, 2.0, -3.0):
        assert compare(cond_between_writes, compiled, _signed(value)).ok
    assert len(compiled.cache) == 1
    imported = str(torch_purity.import_fx(cond_between_writes, *_signed(1.0)))
    assert "torch.prim.If" in imported


@pytest.mark.parametrize("value", [1.0, -1.0], ids=["true_branch", "false_branch"])
def test_cond_result_written_after_shares_storage_with_its_view(value):
    compiled = torch_purity.compile(cond_result_written_after)
    x = torch.full((4,), value)
    report = compare(cond_result_written_after, compiled, [x])
    assert report.ok, report.problems
    whole, tail = compiled(x.clone())
    whole[1].fill_(-7.0)
    assert tail[0].item() == -7.0, "the returned view must see writes to the other output"


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_while_loop_trip_counts(trips):
    compiled = torch_purity.compile(count_up)
    report = compare(count_up, compiled, [torch.arange(3.0), torch.tensor(trips)])
    assert report.ok, report.problems


def test_while_loop_one_entry_for_every_trip_count():
    compiled = torch_purity.compile(count_up)
    for trips in (3, 0, 7):
        x, eager_x = torch.arange(3.0), torch.arange(3.0)
        got, want = compiled(x, torch.tensor(trips)), count_up(eager_x, torch.tensor(trips))
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)
        assert torch.equal(x, eager_x)
    assert len(compiled.cache) == 1


@pytest.mark.parametrize("limit", [0, 2, 6])
def test_cond_inside_while_loop(limit):
    compiled = torch_purity.compile(loop_with_branch)
    report = compare(loop_with_branch, compiled, [torch.tensor([0.5, 1.0, -1.0]), torch.tensor(limit)])
    assert report.ok, report.problems


def test_cond_through_torch_compile():
    compiled = torch.compile(cond_between_writes, backend="purity", fullgraph=True)
    for value in (1.0, -1.0):
        report = compare(cond_between_writes, compiled, _signed(value))
        assert report.ok, report.problems


def test_branch_writing_its_input_is_a_located_error():
    """PyTorch forbids a branch to write its operands; the error names the line."""

    def writes_operand(x):
        def bump(x):
            x.add_(1)
            return (x.clone(),)

        def same(x):
            return (x.clone(),)

        return torch.cond(x.sum() > 0, bump, same, (x,))[0]

    x = torch.ones(3)
    with pytest.raises(PurityError) as raised:
        torch_purity.compile(writes_operand)(x)
    assert "test_control_flow.py" in str(raised.value)
    assert torch.equal(x, torch.ones(3)), "the caller's tensor is untouched"


def gather_in_branch_and_loop(table, ids, out):
    """Index ops inside a branch and a loop body: clamped in place, their
    flags leave the regions, and `out` is written only when all held."""

    def pick(table, ids):
        return (table.index_select(0, ids),)

    def first_rows(table, ids):
        return (table[:2] * 1,)

    (picked,) = torch.cond(ids.sum() > 0, pick, first_rows, (table, ids))

    def keep_going(i, acc):
        return i < 3

    def step(i, acc):
        return (i + 1, acc + table[ids])

    _, summed = while_loop(keep_going, step, (torch.zeros((), dtype=torch.int64), torch.zeros(2, 4)))
    out.copy_(picked + summed)
    return out


def test_index_ops_inside_regions_are_checked():
    compiled = torch_purity.compile(gather_in_branch_and_loop)
    table = torch.arange(32.0).reshape(8, 4)
    report = compare(gather_in_branch_and_loop, compiled, [table, torch.tensor([1, 6]), torch.zeros(2, 4)])
    assert report.ok, report.problems
    out = torch.full((2, 4), -1.0)
    with pytest.raises(PurityIndexError) as raised:
        compiled(table, torch.tensor([1, 8]), out)
    assert "aten.index_select" in str(raised.value) or "aten.index.Tensor" in str(raised.value)
    assert torch.equal(out, torch.full((2, 4), -1.0)), "a failed check leaves the caller's tensor untouched"
    with pytest.raises(IndexError):
        gather_in_branch_and_loop(table, torch.tensor([1, 8]), torch.zeros(2, 4))  # eager refuses it too


def loop_then_row_write(i, x):
    _, y = while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (i, x))
    y[0] = -1
    return y


def test_row_write_into_a_loop_result_at_zero_trips():
    """At zero trips the loop's result is its initial value, the caller's
    tensor: the row write must not become an IREE transfer into that memory
    (found by an adversarial run: PERMISSION_DENIED on the second call)."""
    compiled = torch_purity.compile(loop_then_row_write)
    for start in (0, 3, 0, 3):
        report = compare(loop_then_row_write, compiled, [torch.tensor(start), torch.ones(3)])
        assert report.ok, (start, report.problems)


def loop_seed_written_after(i, x):
    z = x * 1
    _, y = while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (i, z))
    z.add_(1)
    return z, y


def test_loop_seed_written_after_the_loop():
    compiled = torch_purity.compile(loop_seed_written_after)
    report = compare(loop_seed_written_after, compiled, [torch.tensor(0), torch.ones(3)])
    assert report.ok, report.problems


def test_loop_compiled_before_any_eager_call_in_a_fresh_process():
    """PyTorch fills its own caches on the first while_loop; that is not the
    program's state (found by an adversarial run: 'output 1 holds a function')."""
    script = textwrap.dedent(
        """
        import torch, torch_purity
        from torch._higher_order_ops.while_loop import while_loop
        def f(x):
            start = torch.zeros((), dtype=torch.int64)
            return while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (start, x))[1]
        print(torch_purity.compile(f)(torch.ones(2)).tolist())
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "[8.0, 8.0]" in result.stdout


def test_cond_with_number_operands_compiles():
    """Once eager cond has seen two shapes, PyTorch traces the next cond with
    sizes among its operands (numbers): compiled, not run in eager (found by
    an adversarial run). In a fresh process: that state is global."""
    script = textwrap.dedent(
        """
        import warnings, torch, torch_purity
        def g(p, x):
            return torch.cond(p, lambda a: a + 1, lambda a: a - 1, (x,))
        g(torch.tensor(True), torch.ones(3))
        g(torch.tensor(True), torch.ones(5))
        def f(p, x):
            return torch.cond(p, lambda a: a * 2, lambda a: a * 3, (x,))
        warnings.simplefilter("error", torch_purity.EagerFallbackWarning)
        compiled = torch_purity.compile(f)
        x = torch.ones(4)
        print(compiled(torch.tensor(True), x).tolist(), compiled(torch.tensor(False), x).tolist())
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "[2.0, 2.0, 2.0, 2.0] [3.0, 3.0, 3.0, 3.0]" in result.stdout


def constant_first_test(x):
    """The loop's carried values start as constants: its first test folds to
    true, which torch-mlir lowers as a for-loop to INT64_MAX ignoring the
    body's test (TORCH-MLIR-WORKAROUND(for-like-while)): the call hung."""
    start = torch.zeros((), dtype=torch.int64)
    return while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (start, x))[1]


def test_loop_whose_first_test_is_a_constant_ends():
    here = str(Path(__file__).parent)
    script = textwrap.dedent(
        f"""
        import sys, torch, torch_purity
        sys.path.insert(0, {here!r})
        from test_control_flow import constant_first_test
        print(torch_purity.compile(constant_first_test)(torch.ones(2)).tolist())
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "[8.0, 8.0]" in result.stdout
