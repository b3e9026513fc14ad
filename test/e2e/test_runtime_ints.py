"""Int arguments as runtime values: calls with other values reuse the
compiled code, each call matches eager, and the guards a trace recorded
decide which entry serves a value (importer.symbolic)."""

import pytest
import torch
from dynamo_recording import recording_purity_backend

import torch_purity
from torch_purity import PurityError
from torch_purity.checking import compare


def decode_step(cache, row, position: int):
    """One decode step: write this position's row in place, attend over the rows so far."""
    cache[position] = row
    keys = cache[: position + 1]
    weights = torch.softmax(keys @ row, dim=0)
    return weights @ keys


def readme_step(cache, row, position: int):
    cache[position].copy_(row)  # the README's example: a write through a view at an int position
    return cache[: position + 1].sum(0)


def _entries(compiled) -> list:
    return list(compiled.cache.values())


def _decode_60_steps(step, entry_count, seed: int) -> tuple[list[int], torch.Tensor, int]:
    """Runs `step` 60 positions on, checking each step and the cache against
    eager; returns the entry count after each step, the cache and its address."""
    cache, eager_cache = torch.zeros(64, 16), torch.zeros(64, 16)
    address = cache.data_ptr()
    generator = torch.Generator().manual_seed(seed)
    counts = []
    for position in range(60):
        row = torch.randn(16, generator=generator)
        got, want = step(cache, row, position), decode_step(eager_cache, row, position)
        torch.testing.assert_close(got, want, msg=f"step {position}")
        assert torch.equal(cache, eager_cache), f"cache after step {position}"
        counts.append(entry_count())
    return counts, cache, address


def test_decode_loop_compiles_once_after_warm_up():
    """60 steps with the position as an int: each step matches eager, the
    cache is written in place (the caller's memory, no copy), and every step
    after the first two runs code compiled before."""
    compiled = torch_purity.compile(decode_step)
    counts, cache, address = _decode_60_steps(compiled, lambda: len(compiled.cache), seed=0)
    assert cache.data_ptr() == address
    # Position 0 reads one row (a size-1 slice, which the trace specializes);
    # from position 1 on, one entry takes the position as a runtime value.
    assert counts[-1] == counts[1] == 2, counts
    general = _entries(compiled)[1]
    assert general.runtime_ints
    assert general.convention.tied_inputs == {0}, "the cache is written in place through its tie"


def test_readme_example_compiles_twice_for_ten_positions():
    compiled = torch_purity.compile(readme_step)
    for position in range(10):
        report = compare(readme_step, compiled, (torch.zeros(16, 8), torch.randn(8), position))
        assert report.ok, (position, report.problems)
    assert len(compiled.cache) == 2


def test_decode_loop_through_torch_compile_stops_recompiling():
    """Dynamo specializes the first value, then hands the position as a
    SymInt; Purity takes it as a runtime value: no compile after warm-up."""
    backend, programs = recording_purity_backend()
    torch._dynamo.reset()
    step = torch.compile(decode_step, backend=backend)
    counts, cache, address = _decode_60_steps(step, lambda: sum(len(p.cache) for p in programs), seed=1)
    assert cache.data_ptr() == address
    assert counts[-1] == counts[5], counts
    assert counts[-1] <= 3, counts
    assert any(entry.runtime_ints for program in programs for entry in program.cache.values())


def offsets_and_shapes(x, start: int, length: int, scale: int):
    window = x.narrow(0, start, length)  # a view of runtime extent
    window.mul_(scale)  # written through it, into the input
    total = x.sum(0) * (start + 1)
    return window.sum(0) + total, x[start:, 1:].mean()


def rows_as_matrix(x, rows: int):
    return x.reshape(rows, -1).sum(1)


def scale_and_shift(x, by: int):
    return x * by + (by // 2)


def roll(x, by: int):
    return torch.roll(x, by, 0) + by


def index_put_at(x, values, at: int):
    x[at, 1:3] += values
    x[-1 - at] = -1.0
    return x


def row_read_by_indexing(x, at: int):
    return x[at] * 2, x[1:, at]


def indexing_with_none(x, at: int):
    return x[None, at] * 2


@pytest.mark.parametrize(
    ("program", "make", "values"),
    [
        (offsets_and_shapes, lambda v: (torch.randn(10, 4), *v), [(1, 3, 2), (2, 5, 3), (0, 10, 4), (4, 2, -1)]),
        (rows_as_matrix, lambda v: (torch.randn(4, 6), *v), [(2,), (3,), (6,), (12,)]),
        (scale_and_shift, lambda v: (torch.randn(7, 2), *v), [(1,), (3,), (-2,), (9,)]),
        (index_put_at, lambda v: (torch.randn(6, 4), torch.randn(2), *v), [(0,), (2,), (5,), (-3,)]),
    ],
    ids=["narrow_write", "reshape", "arithmetic", "index_put"],
)
def test_ints_feeding_views_shapes_and_arithmetic_match_eager(program, make, values):
    compiled = torch_purity.compile(program)
    for value in values:
        report = compare(program, compiled, make(value))
        assert report.ok, (value, report.problems)
    assert any(entry.runtime_ints for entry in _entries(compiled))
    assert len(compiled.cache) < len(values)


def test_where_runtime_ints_fail_to_compile_the_ints_are_specialized():
    """torch.roll by a runtime amount lowers to slices IREE cannot reshape
    (a dynamic dim without its value): each amount gets its own entry, which
    says why, and every call still matches eager."""
    compiled = torch_purity.compile(roll)
    for by in (1, 3, -2):
        assert compare(roll, compiled, (torch.randn(7, 2), by)).ok
    entries = _entries(compiled)
    assert len(entries) == 3 and not any(entry.runtime_ints for entry in entries)
    assert all("IREE failed" in entry.ints_specialized_because for entry in entries)


def test_one_entry_serves_many_positions():
    compiled = torch_purity.compile(index_put_at)
    for at in range(1, 5):
        assert compare(index_put_at, compiled, (torch.randn(6, 4), torch.randn(2), at)).ok
    assert len(compiled.cache) == 1


def branch_on(x, n: int):
    if n > 3:
        return x * n
    return x - n


def test_python_branch_on_an_int_is_a_guard():
    compiled = torch_purity.compile(branch_on)
    for n in (5, 7, 2, 0, 9, 1):
        assert compare(branch_on, compiled, (torch.randn(3), n)).ok, n
    assert len(compiled.cache) == 2
    guards = sorted(entry.symbol_guard.expression for entry in _entries(compiled))
    assert any("3 < L['t0']" in g or "L['t0'] > 3" in g or "4 <= L['t0']" in g for g in guards), guards


def row_view(x, i: int):
    return x.select(0, i)


def test_output_view_at_an_int_position_stays_a_view():
    """An output that views an input at the int's position comes back as a
    view of the caller's tensor, its layout computed per call from the trace."""
    compiled = torch_purity.compile(row_view)
    for i in (1, 2, 3):
        report = compare(row_view, compiled, (torch.randn(5, 3), i))
        assert report.ok, report.problems
    assert len(compiled.cache) == 1 and _entries(compiled)[0].runtime_ints
    x = torch.randn(5, 3)
    out = compiled(x, 2)
    out.add_(1)
    assert torch.equal(x[2], out)


def test_indexing_with_an_int_keeps_it_a_runtime_value():
    """`x[at]` and `x[1:, at]` (Python's indexing protocol would convert the
    position with `__index__`, specializing it) trace as select and slice:
    one entry for every position, the view of the input a real view."""
    compiled = torch_purity.compile(row_read_by_indexing)
    for at in (1, 2, 0, 3):
        report = compare(row_read_by_indexing, compiled, (torch.randn(4, 4), at))
        assert report.ok, (at, report.problems)
    assert len(compiled.cache) == 1 and _entries(compiled)[0].runtime_ints


def test_other_indexing_with_an_int_specializes_it():
    """An index with None (or tensors, or ...) goes to torch's own indexing,
    which converts the int: an entry per value, each matching eager."""
    compiled = torch_purity.compile(indexing_with_none)
    for at in (1, 2):
        assert compare(indexing_with_none, compiled, (torch.randn(4, 3), at)).ok
    assert [entry.symbol_guard.expression for entry in _entries(compiled)] == ["L['t0'] == 1", "L['t0'] == 2"]


def test_position_out_of_range_fails_and_leaves_inputs_untouched():
    compiled = torch_purity.compile(decode_step)
    cache, row = torch.randn(8, 4), torch.randn(4)
    compiled(cache, row, 3)
    before = cache.clone()
    for position in (8, -9, 100):
        with pytest.raises(PurityError, match="out of bounds"):
            compiled(cache, row, position)
        assert torch.equal(cache, before)
    # Negative positions in range index from the end, as in eager.
    report = compare(decode_step, compiled, (torch.randn(8, 4), row, -3))
    assert report.ok, report.problems


def test_saved_program_guard_survives_a_reload(tmp_path):
    compiled = torch_purity.compile(index_put_at, torch.randn(6, 4), torch.randn(2), 2)
    loaded = torch_purity.load(compiled.save(tmp_path / "program"))
    for at in (1, 3, 4):
        assert compare(index_put_at, loaded, (torch.randn(6, 4), torch.randn(2), at)).ok


def scaled_and_half(x, n: int):
    return x * n, n * 0.5


def test_numbers_computed_from_an_int_are_returned_as_numbers():
    """A returned number computed from a runtime int has no place in the
    compiled code's results: that entry specializes the int and returns the
    number eager returns (never a symbol)."""
    compiled = torch_purity.compile(scaled_and_half)
    for n in (2, 3):
        x = torch.randn(3)
        got, want = compiled(x, n), scaled_and_half(x, n)
        torch.testing.assert_close(got[0], want[0])
        assert type(got[1]) is float and got[1] == want[1]
    assert all("number computed from runtime values" in e.ints_specialized_because for e in _entries(compiled))


def arange_of_runtime_length(x, n: int):
    return x.index_select(0, torch.arange(n)).sum(0), torch.arange(1, n + 1) * 2


def test_arange_of_runtime_length_matches_eager():
    """torch-mlir lowers an arange over a runtime int to one element
    (TORCH-MLIR-WORKAROUND(dynamic-arange)): that entry specializes the int,
    and every value still matches eager (the first output is static, so a
    miscompiled arange would be silently wrong)."""
    compiled = torch_purity.compile(arange_of_runtime_length)
    for n in (2, 3, 5):
        report = compare(arange_of_runtime_length, compiled, (torch.randn(9, 2), n))
        assert report.ok, (n, report.problems)
    assert all("arange over a runtime int" in e.ints_specialized_because for e in _entries(compiled))
