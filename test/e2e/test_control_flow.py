"""torch.cond and while_loop with mutation around and inside them: imported
as torch.prim.If / torch.prim.Loop regions, functionalized across regions,
compiled (scf) and compared with eager on every branch and trip count."""

import pytest
import torch
from torch._higher_order_ops.while_loop import while_loop

import torch_purity
from torch_purity import PurityError
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
