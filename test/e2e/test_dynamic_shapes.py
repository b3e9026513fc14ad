"""Dynamic dims: `torch_purity.compile(..., dynamic=True)`, Dynamo's
symbolic sizes and torch.export's `Dim`s compile one entry that serves every
size its guard admits, writes inputs in place as eager does, and matches
eager at each size."""

import copy

import pytest
import torch
from dynamo_recording import recording_purity_backend

import torch_purity
from torch_purity import PurityError
from torch_purity.checking import compare

BATCHES = (2, 3, 5, 8, 13, 21)


def scale_in_place(x, y):
    x.mul_(2).add_(y)
    return x.sum(0), x


def linear_relu(x, w, b):
    y = x @ w + b
    y.relu_()
    return y.sum(1)


def test_compile_dynamic_serves_six_batch_sizes_with_one_entry():
    compiled = torch_purity.compile(scale_in_place, dynamic=True)
    for batch in BATCHES:
        report = compare(scale_in_place, compiled, (torch.randn(batch, 4), torch.randn(batch, 4)))
        assert report.ok, (batch, report.problems)
    assert len(compiled.cache) == 1
    entry = next(iter(compiled.cache.values()))
    assert entry.runtime_ints and entry.convention.tied_inputs == {0}, "x is written in place through its tie"


def test_written_input_of_dynamic_size_is_the_callers_memory():
    compiled = torch_purity.compile(scale_in_place, dynamic=True)
    for batch in (3, 7):
        x, y = torch.randn(batch, 4), torch.randn(batch, 4)
        expected = x * 2 + y
        address = x.data_ptr()
        for _ in range(2):  # the second call crosses in place
            x.copy_(expected / 2 - y / 2)
            _, returned = compiled(x, y)
        torch.testing.assert_close(x, expected)
        assert x.data_ptr() == address and returned.data_ptr() == address


def cache_write(cache, row, position: int):
    cache[position] = row
    return cache[: position + 1].mean(0)


def test_kv_cache_of_dynamic_length_and_position_is_written_in_place():
    """A cache whose length is dynamic, written at a runtime position: one
    entry for every length and position, the row written into the caller's
    memory (tied, so the write costs the row, not the cache)."""
    compiled = torch_purity.compile(cache_write, dynamic=True)
    for length in (8, 16, 40):
        cache, eager = torch.zeros(length, 6), torch.zeros(length, 6)
        address = cache.data_ptr()
        for position in range(1, 6):
            row = torch.randn(6)
            torch.testing.assert_close(compiled(cache, row, position), cache_write(eager, row, position))
            assert torch.equal(cache, eager)
        assert cache.data_ptr() == address
    assert len(compiled.cache) == 1
    entry = next(iter(compiled.cache.values()))
    assert entry.convention.tied_inputs == {0} and entry.hand_over == "in place"


def test_mark_dynamic_makes_that_dim_dynamic_only():
    compiled = torch_purity.compile(linear_relu)
    w, b = torch.randn(4, 8), torch.randn(8)
    for batch in BATCHES[:4]:
        x = torch.randn(batch, 4)
        torch._dynamo.mark_dynamic(x, 0)  # (compare's clones would drop the mark)
        torch.testing.assert_close(compiled(x, w, b), linear_relu(x, w, b))
    assert len(compiled.cache) == 1
    assert next(iter(compiled.cache.values())).dynamic_dims == {0: (0,)}
    with pytest.raises(PurityError):
        x = torch.randn(3, 5)  # the static dim differs: a new entry, whose trace fails as eager's matmul does
        torch._dynamo.mark_dynamic(x, 0)
        compiled(x, w, b)


def test_torch_compile_dynamic_true_compiles_one_purity_entry():
    backend, programs = recording_purity_backend()
    torch._dynamo.reset()
    step = torch.compile(linear_relu, backend=backend, dynamic=True)
    w, b = torch.randn(4, 8), torch.randn(8)
    for batch in BATCHES:
        x = torch.randn(batch, 4)
        torch.testing.assert_close(step(x, w, b), linear_relu(x, w, b))
    assert len(programs) == 1 and len(programs[0].cache) == 1
    assert programs[0].declared_dynamic_dims, "Dynamo's symbolic dims are dynamic dims of the entry"


class CountedBatchNorm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 6)
        self.norm = torch.nn.BatchNorm1d(6)
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        return torch.relu(self.norm(self.linear(x)))


def test_exported_program_with_dynamic_batch_runs_four_sizes_with_one_entry():
    torch.manual_seed(0)
    model = CountedBatchNorm()
    batch = torch.export.Dim("batch", min=2, max=32)
    exported = torch.export.export(model, (torch.randn(8, 4),), dynamic_shapes={"x": {0: batch}})
    compiled = torch_purity.compile(exported)
    eager = copy.deepcopy(model)
    state = compiled.program  # the exported module, whose buffers the program writes
    for size in (3, 8, 17, 32):
        x = torch.randn(size, 4)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), eager(x))
        for (name, ours), (_, theirs) in zip(state.state_dict().items(), eager.state_dict().items()):
            torch.testing.assert_close(ours, theirs, msg=f"{name} after batch {size}")
    assert len(compiled.cache) == 1
    before = {name: value.clone() for name, value in state.state_dict().items()}
    with torch.no_grad(), pytest.raises(PurityError, match=r"x.shape\[0\] is 40, outside the range \[2, 32\]"):
        compiled(torch.randn(40, 4))
    assert all(torch.equal(before[name], value) for name, value in state.state_dict().items())


def test_saved_dynamic_entry_serves_other_sizes(tmp_path):
    compiled = torch_purity.compile(scale_in_place, torch.randn(4, 3), torch.randn(4, 3), dynamic=True)
    loaded = torch_purity.load(compiled.save(tmp_path / "program"))
    for batch in (2, 9):
        report = compare(scale_in_place, loaded, (torch.randn(batch, 3), torch.randn(batch, 3)))
        assert report.ok, report.problems


def test_one_storage_at_two_sizes_is_imported_at_each_size():
    """The runtime reuses IREE's view of an argument's memory while the same
    memory comes again; with dynamic dims the same memory can come at another
    size (a prefix of one buffer), which must not reuse the old view."""
    compiled = torch_purity.compile(scale_in_place, dynamic=True)
    buffer = torch.randn(32, 4)
    eager_buffer = buffer.clone()
    for rows in (8, 8, 16, 8, 32):
        y = torch.randn(rows, 4)
        got_sum, got = compiled(buffer[:rows], y)
        want_sum, want = scale_in_place(eager_buffer[:rows], y)
        torch.testing.assert_close(got_sum, want_sum, msg=f"{rows} rows")
        torch.testing.assert_close(buffer, eager_buffer, msg=f"buffer after {rows} rows")
    assert len(compiled.cache) == 1
