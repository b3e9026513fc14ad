"""The call plan an entry takes once its calls have settled
(`Executable.run_without_grad`, `_steady_call`): the same effects and
outputs as eager, call after call, while the arguments change the way a
decode loop or a caller's buffers change them.

Each test first checks that the entry took the plan (so the cases run
through it, not through `run`), then checks every call against eager on
clones of the same inputs.
"""

from __future__ import annotations

import pytest
import torch

import torch_purity
from torch_purity import PurityIndexError


def kv_write(cache, row, position: int):
    cache[position].copy_(row)
    return row.sum()


def kv_write_returning_two(cache, row, position: int):
    cache[position].copy_(row)
    return row * 2, cache.sum()


def index_copy_write(cache, row, position):
    cache.index_copy_(0, position, row)
    return row.sum()


def only_entry(compiled: torch_purity.CompiledProgram):
    (entry,) = compiled.cache.values()
    return entry


def settled(program, *args):
    """The compiled program after the calls that settle its entry, which must take the plan."""
    compiled = torch_purity.compile(program)
    for _ in range(3):
        compiled(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    assert callable(only_entry(compiled)._plan), "the entry does not take the steady call plan"
    return compiled


def test_row_writes_at_moving_positions_match_eager() -> None:
    cache = torch.zeros(16, 8)
    compiled = settled(kv_write, cache, torch.randn(8), 0)
    expected = cache.clone()
    for position in [3, 15, -1, 0, 7, -16]:
        row = torch.randn(8)
        result = compiled(cache, row, position)
        eager = kv_write(expected, row, position)
        assert torch.equal(cache, expected), position
        assert torch.allclose(result, eager)
        assert result.shape == eager.shape and result.dtype == eager.dtype


def test_another_cache_of_the_same_layout_is_written_not_the_last() -> None:
    first, second = torch.zeros(16, 8), torch.zeros(16, 8)
    compiled = settled(kv_write, first, torch.randn(8), 0)
    compiled(first, torch.ones(8), 2)
    row = torch.randn(8)
    compiled(second, row, 5)
    assert torch.equal(second[5], row) and not second[torch.arange(16) != 5].any()
    assert torch.equal(first[2], torch.ones(8)) and not first[5].any()


def test_memory_iree_cannot_import_is_written_through_a_copy() -> None:
    # Same signature (offset 0, contiguous) but a storage starting off IREE's
    # 64-byte boundary: the plan falls back on `run`, which copies it in and back.
    compiled = settled(kv_write, torch.zeros(4, 8), torch.randn(8), 0)
    raw = bytearray(4 * 8 * 4 + 4)
    unaligned = torch.frombuffer(raw, dtype=torch.float32, offset=4).view(4, 8)
    assert unaligned.data_ptr() % 64 != 0 and unaligned.storage_offset() == 0
    unaligned.zero_()
    row = torch.randn(8)
    result = compiled(unaligned, row, 1)
    assert torch.equal(unaligned[1], row) and not unaligned[0].any()
    assert torch.allclose(result, row.sum())


def test_a_tuple_of_results_matches_eager() -> None:
    cache = torch.zeros(6, 4)
    compiled = settled(kv_write_returning_two, cache, torch.randn(4), 0)
    row = torch.randn(4)
    doubled, total = compiled(cache, row, 3)
    assert torch.equal(cache[3], row)
    assert torch.allclose(doubled, row * 2) and torch.allclose(total, cache.sum())
    assert doubled.data_ptr() != total.data_ptr()


def test_version_counters_move_as_in_eager() -> None:
    cache = torch.zeros(6, 4)
    compiled = settled(kv_write, cache, torch.randn(4), 0)
    row = torch.randn(4)
    cache_version, row_version = cache._version, row._version
    compiled(cache, row, 2)
    assert cache._version > cache_version
    assert row._version == row_version


def batch_norm_training(x, running_mean, running_var, num_batches_tracked, weight, bias):
    num_batches_tracked.add_(1)  # rank-0: copied back from a result of its own (never tied)
    return torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training=True, momentum=0.1)


def test_a_rank_zero_input_written_by_a_copy_keeps_the_plan() -> None:
    """BatchNorm in training mode writes its running statistics in place
    (tied) and its rank-0 batch counter through a copy of a result: the
    plan copies it back as `run` does, call after call."""
    state = [torch.zeros(4), torch.ones(4), torch.tensor(0), torch.rand(4), torch.randn(4)]
    compiled = settled(batch_norm_training, torch.randn(8, 4, 3), *[t.clone() for t in state])
    ours, expected = [t.clone() for t in state], [t.clone() for t in state]
    for call in range(3):
        x = torch.randn(8, 4, 3)
        version = ours[2]._version
        torch.testing.assert_close(compiled(x, *ours), batch_norm_training(x, *expected))
        for got, want in zip(ours, expected, strict=True):
            torch.testing.assert_close(got, want)
        assert int(ours[2]) == call + 1 and ours[2]._version > version


def test_an_index_out_of_range_raises_and_writes_nothing() -> None:
    cache = torch.zeros(8, 4)
    compiled = settled(index_copy_write, cache, torch.randn(1, 4), torch.tensor([1]))
    compiled(cache, torch.ones(1, 4), torch.tensor([6]))
    before = cache.clone()
    with pytest.raises(PurityIndexError):
        compiled(cache, torch.full((1, 4), 5.0), torch.tensor([8]))
    assert torch.equal(cache, before)
    row = torch.randn(1, 4)
    compiled(cache, row, torch.tensor([3]))  # still usable
    assert torch.equal(cache[3], row[0]) and torch.equal(cache[6], torch.ones(4))


def test_arguments_requiring_grad_leave_the_plan() -> None:
    compiled = settled(lambda x, y: x * y, torch.randn(3), torch.randn(3))
    x, y = torch.randn(3, requires_grad=True), torch.randn(3)
    out = compiled(x, y)
    out.sum().backward()
    assert torch.allclose(x.grad, y)


def test_an_entry_returning_a_view_keeps_the_general_path() -> None:
    compiled = torch_purity.compile(lambda x: x.add_(1).t())
    x = torch.randn(3, 5)
    expected = x.clone()
    for _ in range(4):
        out = compiled(x)
        expected.add_(1)
    assert torch.equal(x, expected)
    assert out.data_ptr() == x.data_ptr() and out.shape == (5, 3)
    assert only_entry(compiled)._plan is False


def add_parts(x, parts):
    return x + sum(parts) if isinstance(parts, (list, tuple)) else x + parts


def test_a_list_where_a_tensor_was_takes_the_structure_walk() -> None:
    # Repeated calls of leaves only skip flattening: the repeat's check must
    # send a list in a tensor's place back to it.
    x = torch.randn(4)
    compiled = settled(add_parts, x, torch.randn(4))
    parts = [torch.randn(4), torch.randn(4)]
    assert torch.allclose(compiled(x, parts), add_parts(x, parts))
    assert torch.allclose(compiled(x, tuple(parts)), add_parts(x, tuple(parts)))
    y = torch.randn(4)
    assert torch.allclose(compiled(x, y), x + y)


def test_a_tensor_marked_dynamic_after_repeats_gets_a_dynamic_entry() -> None:
    compiled = settled(lambda x: x * 3, torch.randn(4))
    marked = torch.randn(6)
    torch._dynamo.mark_dynamic(marked, 0)
    assert torch.allclose(compiled(marked), marked * 3)
    assert any(entry.dynamic_dims for entry in compiled.cache.values())


def sgd_step(params, grads, lr: float):
    for p, g in zip(params, grads):
        p.add_(g, alpha=-lr)
    return params[0].sum()


def counted_step(p, g, counter):
    counter.add_(1)  # rank-0: copied back from a result of its own
    p.add_(g)


@pytest.fixture
def argument_lists(monkeypatch):
    """The argument list each invocation of a plan got (held here, so no
    two of them can share an `id`)."""
    from torch_purity.iree import module

    seen: list[object] = []
    plain = module.LoadedModule.vm_invoke.fget

    def recording(self):
        invoke = plain(self)

        def call(arguments, results):
            seen.append(arguments)
            return invoke(arguments, results)

        return call

    monkeypatch.setattr(module.LoadedModule, "vm_invoke", property(recording))
    return seen


def test_rank_zero_results_keep_the_argument_list_and_come_out_fresh(argument_lists) -> None:
    """A program whose only stored result is rank-0 (an optimizer step
    returning `p.sum()`) keeps its storage and its whole argument list from
    call to call: each output is still a tensor of its own, holding its
    call's value."""
    params, grads = [torch.randn(4, 4) for _ in range(3)], [torch.randn(4, 4) for _ in range(3)]
    expected = [p.clone() for p in params]
    compiled = settled(sgd_step, [p.clone() for p in params], grads, 0.1)
    argument_lists.clear()
    outputs = [compiled(params, grads, 0.1) for _ in range(3)]
    eager = [sgd_step(expected, grads, 0.1) for _ in range(3)]
    assert len({id(a) for a in argument_lists}) == 1, "the argument list was built again for the same tensors"
    for got, want in zip(outputs, eager, strict=True):
        torch.testing.assert_close(got, want)  # earlier outputs keep their own values
    assert len({o.data_ptr() for o in outputs}) == 3
    for got, want in zip(params, expected, strict=True):
        torch.testing.assert_close(got, want)
    # Other tensors of the same signature: a list of their own, and they are the ones written.
    others = [p.clone() for p in params]
    torch.testing.assert_close(compiled(others, grads, 0.1), sgd_step(expected, grads, 0.1))
    assert len({id(a) for a in argument_lists}) == 2
    for got, want in zip(others, expected, strict=True):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(params[0], expected[0] + 0.1 * grads[0])  # the earlier ones untouched


def test_a_rank_zero_input_copied_back_through_kept_storage(argument_lists) -> None:
    p, g, counter = torch.zeros(3), torch.ones(3), torch.tensor(0)
    compiled = settled(counted_step, p.clone(), g, counter.clone())
    argument_lists.clear()
    for call in range(1, 4):
        version = counter._version
        assert compiled(p, g, counter) is None
        assert int(counter) == call and counter._version > version
        assert torch.equal(p, torch.full((3,), float(call)))
    assert len({id(a) for a in argument_lists}) == 1
