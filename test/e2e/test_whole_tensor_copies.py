"""No whole-tensor copy inside IREE where eager writes part of an input in place.

Each program writes a part of its input (a row, a slice) or updates it
pointwise, as eager does in place, and may return the input. The compiled
call must match eager (outputs, the input after the call, outputs that view
the input), and IREE's scheduled program (`--compile-to=stream`) must
neither copy nor allocate anything as large as the input: before
purity-elide-input-view-results, returning the written input made IREE copy
it whole on every call (a one-row write into a 32 MiB cache took 17 ms
against 29 µs), and before the region rule of purity-tie-written-inputs,
`x[:10].add_(1)` computed all of x into a new buffer that the runtime then
copied back.

The programs that read one region and write another, or read a region
through a non-pointwise op, must stay correct: IREE does not order other
reads of a tied argument before writes into it (docs/architecture.md), so
those keep their copy."""

from __future__ import annotations

import pytest
import torch

import torch_purity
from torch_purity.errors import PurityIndexError
from torch_purity.iree.module import scheduled_buffers

ROWS, COLUMNS = 4096, 64  # 1 MiB of float32


def row_write_returned(cache, row, position):
    cache.index_copy_(0, position, row)
    return cache


def int_row_write_returned(cache, row, position: int):
    cache[position].copy_(row[0])
    return cache


def scaled_returned(cache):
    cache.mul_(1.5)
    return cache


def slice_added(cache):
    cache[:10].add_(1)


def slice_added_returned(cache):
    cache[3:9].mul_(2).add_(1)
    return cache


def row_scaled_at_int(cache, row, position: int):
    cache[position].mul_(row[0]).sub_(0.5)
    return cache[position]


def slice_updated_twice(cache):
    cache[:4].add_(1).clamp_(0, 1)


def slice_updated_from_an_input(cache, row, position: int):
    cache[position : position + 1].addcmul_(row, row, value=0.5)


def element_set(cache, value):
    cache[3, 4] = value


def masked_filled(cache, mask):
    cache.masked_fill_(mask, 0.0)


def copied_from_an_input(cache, source):
    cache.copy_(source)


def rows_added(cache, index, rows):
    cache.index_add_(0, index, rows)


def accumulated_at_indices(cache, index, values):
    cache.index_put_((index,), values, accumulate=True)


def scattered_added(cache, index, values):
    cache.scatter_add_(0, index, values)


def flat_slice_scaled(cache):
    cache.view(-1)[5:10].mul_(2)


def row_of_a_reshape_written(cache, row):
    cache.view(ROWS * 2, COLUMNS // 2)[7].copy_(row[0, : COLUMNS // 2])


def unsqueezed_row_added(cache, position: int):
    cache.unsqueeze(1)[position].add_(1)


def large_values_zeroed(cache):
    cache[cache > 1.0] = 0.0


def masked_set(cache, mask, value):
    cache[mask] = value


def zeroed(cache):
    cache.zero_()


def filled_with(cache, value: float):
    cache.fill_(value)


def row_zeroed(cache):
    cache[5].zero_()


def row_written_at_a_tensor_position_then_read(cache, row, position, query):
    # A static KV cache's update and attention over it (transposed, as
    # `q @ k.transpose(-1, -2)`).
    cache.index_copy_(0, position, row)
    return query @ cache.t()


def row_at_an_int_position_read_beside_a_check(cache, table, token, row, position: int):
    # The same at an int position (a `select_scatter`), with an embedding
    # lookup's index check: the check's restore of the row and the row's
    # write are one region, which MLIR's insert-after-insert fold put both
    # on the cache's original value (purity-chain-same-region-writes).
    cache[position] = row[0] + table[token].sum()
    return cache @ row[0]


def row_at_a_fixed_position_read_beside_a_check(cache, table, token, row):
    # The same at a position fixed in the program (the region's offsets are constants).
    cache[-7] = row[0] + table[token].sum()
    return cache @ row[0]


_NO_COPY = [
    (row_write_returned, lambda: (torch.randn(1, COLUMNS), torch.tensor([17]))),
    (int_row_write_returned, lambda: (torch.randn(1, COLUMNS), 17)),
    (scaled_returned, lambda: ()),
    (slice_added, lambda: ()),
    (slice_added_returned, lambda: ()),
    (row_scaled_at_int, lambda: (torch.randn(1, COLUMNS), 2000)),
    (slice_updated_twice, lambda: ()),
    (slice_updated_from_an_input, lambda: (torch.randn(1, COLUMNS), 9)),
    (element_set, lambda: (torch.randn(()),)),
    (masked_filled, lambda: (torch.rand(COLUMNS) < 0.5,)),
    (copied_from_an_input, lambda: (torch.randn(ROWS, COLUMNS),)),
    (rows_added, lambda: (torch.tensor([17, 5, 17]), torch.randn(3, COLUMNS))),
    (accumulated_at_indices, lambda: (torch.tensor([9, 9, 4000]), torch.randn(3, COLUMNS))),
    (scattered_added, lambda: (torch.randint(0, 8, (3, COLUMNS)), torch.randn(3, COLUMNS))),
    (flat_slice_scaled, lambda: ()),
    (row_of_a_reshape_written, lambda: (torch.randn(1, COLUMNS),)),
    (unsqueezed_row_added, lambda: (11,)),
    (large_values_zeroed, lambda: ()),
    (masked_set, lambda: (torch.rand(ROWS, COLUMNS) < 0.3, torch.randn(()))),
    (zeroed, lambda: ()),
    (filled_with, lambda: (0.25,)),
    (row_zeroed, lambda: ()),
    (
        row_written_at_a_tensor_position_then_read,
        lambda: (torch.randn(1, COLUMNS), torch.randint(0, ROWS, (1,)), torch.randn(2, COLUMNS)),
    ),
    (
        row_at_an_int_position_read_beside_a_check,
        lambda: (
            torch.randn(10, COLUMNS),
            torch.randint(0, 10, (1,)),
            torch.randn(1, COLUMNS),
            int(torch.randint(0, ROWS, ())),
        ),
    ),
    (
        row_at_a_fixed_position_read_beside_a_check,
        lambda: (torch.randn(10, COLUMNS), torch.randint(0, 10, (1,)), torch.randn(1, COLUMNS)),
    ),
]


def old_slice_kept(cache):
    old = cache[:10].clone()
    cache[:10].add_(1)
    return old


def overlapping_slices(cache):
    cache[1:11].copy_(cache[0:10] * 2)


def slice_reversed(cache):
    cache[:10].copy_(cache[:10].flip(0))


def slice_multiplied(cache, weight):
    cache[:8].copy_(cache[:8] @ weight)


def slice_after_another_read(cache):
    total = cache[5:15].sum(dim=0)
    cache[:10].add_(1)
    return total




def row_set_from_another(cache):
    cache[3] = cache[5]


def copied_from_its_flip(cache):
    cache.copy_(cache.flip(0))


def flat_slices_overlapping(cache):
    flat = cache.view(-1)
    flat[1:11].copy_(flat[0:10] * 2)


def reshape_row_from_another(cache):
    cache.view(ROWS * 2, COLUMNS // 2)[3].add_(cache[0, : COLUMNS // 2])


def scattered_out_of_place_beside_a_row_write(cache, row):
    kept = torch.slice_scatter(cache, row, 0, 0, 1)
    cache[5] = 7
    return kept


def rows_added_then_summed(cache, index, rows):
    cache.index_add_(0, index, rows)
    return cache.sum(0)


def transposed_added_to_itself(cache):
    square = cache[:COLUMNS]
    square.t().add_(square.clone())


_KEEP_ORDER = [
    (old_slice_kept, lambda: ()),
    (overlapping_slices, lambda: ()),
    (slice_reversed, lambda: ()),
    (slice_multiplied, lambda: (torch.randn(COLUMNS, COLUMNS),)),
    (slice_after_another_read, lambda: ()),
    (row_set_from_another, lambda: ()),
    (copied_from_its_flip, lambda: ()),
    (flat_slices_overlapping, lambda: ()),
    (reshape_row_from_another, lambda: ()),
    (scattered_out_of_place_beside_a_row_write, lambda: (torch.randn(1, COLUMNS),)),
    (rows_added_then_summed, lambda: (torch.tensor([3, 3000]), torch.randn(2, COLUMNS))),
    (transposed_added_to_itself, lambda: ()),
]


def _largest_stream_buffer(entry) -> int:
    """The largest copy or allocation, in bytes, in IREE's scheduled program."""
    return max([0] + [size for _, size in scheduled_buffers(entry.lowered.iree_input, "cpu")])


def _check_against_eager(program, make_arguments, calls: int = 3):
    torch.manual_seed(0)
    compiled = torch_purity.compile(program)
    cache = torch.randn(ROWS, COLUMNS)
    expected_cache = cache.clone()
    for _ in range(calls):
        arguments = make_arguments()
        got = compiled(cache, *arguments)
        want = program(expected_cache, *arguments)
        torch.testing.assert_close(cache, expected_cache)  # IREE may fuse a multiply-add (addcmul_)
        if want is None:
            assert got is None
            continue
        torch.testing.assert_close(got, want)
        views_input = want.untyped_storage().data_ptr() == expected_cache.untyped_storage().data_ptr()
        assert (got.untyped_storage().data_ptr() == cache.untyped_storage().data_ptr()) == views_input
        if views_input:
            got.add_(1)  # a real view: the write shows in the input
            want.add_(1)
            torch.testing.assert_close(cache, expected_cache)
    (entry,) = compiled.cache.values()
    return entry, cache


@pytest.mark.parametrize(("program", "make_arguments"), _NO_COPY, ids=[p.__name__ for p, _ in _NO_COPY])
def test_written_in_place_without_a_whole_copy(program, make_arguments):
    entry, cache = _check_against_eager(program, make_arguments)
    assert 0 in entry.convention.tied_inputs and entry.hand_over == "in place"
    assert _largest_stream_buffer(entry) < cache.nbytes


@pytest.mark.parametrize(("program", "make_arguments"), _KEEP_ORDER, ids=[p.__name__ for p, _ in _KEEP_ORDER])
def test_reads_the_write_does_not_wait_for_stay_correct(program, make_arguments):
    entry, _ = _check_against_eager(program, make_arguments)
    assert 0 not in entry.convention.tied_inputs


def test_an_out_of_range_accumulation_leaves_every_bit_of_the_input():
    """An accumulating write is written in place and, when its index check
    fails, adds -0.0 where it would have added: every element keeps its
    bits, -0.0 included (adding +0.0 would make it +0.0, which
    torch.equal would not see)."""
    compiled = torch_purity.compile(rows_added)
    cache = torch.full((ROWS, COLUMNS), -0.0)
    cache[1] = float("nan")
    before = cache.clone()
    with pytest.raises(PurityIndexError, match="index out of range"):
        compiled(cache, torch.tensor([1, ROWS]), torch.randn(2, COLUMNS))
    assert torch.equal(cache.view(torch.int32), before.view(torch.int32))
    (entry,) = compiled.cache.values()
    assert 0 in entry.convention.tied_inputs
    rows = torch.randn(2, COLUMNS)
    compiled(cache, torch.tensor([1, 0]), rows)
    rows_added(before, torch.tensor([1, 0]), rows)
    torch.testing.assert_close(cache, before, rtol=0, atol=0, equal_nan=True)


def test_a_failed_check_after_a_write_that_was_read_leaves_the_input():
    """The row written at a tensor position and read again is written back
    after every check, as it was, when one fails: the cache keeps every bit
    (here a second index, checked after the read, is out of range)."""

    def written_read_then_gathered(cache, row, position, query, late_index):
        cache.index_copy_(0, position, row)
        scores = query @ cache.t()
        return scores.index_select(1, late_index)

    compiled = torch_purity.compile(written_read_then_gathered)
    cache = torch.randn(ROWS, COLUMNS)
    before = cache.clone()
    row, query = torch.randn(1, COLUMNS), torch.randn(2, COLUMNS)
    with pytest.raises(PurityIndexError, match="index out of range"):
        compiled(cache, row, torch.tensor([7]), query, torch.tensor([ROWS]))
    assert torch.equal(cache, before)
    (entry,) = compiled.cache.values()
    assert 0 in entry.convention.tied_inputs
    got = compiled(cache, row, torch.tensor([7]), query, torch.tensor([3, 9]))
    want = written_read_then_gathered(before, row, torch.tensor([7]), query, torch.tensor([3, 9]))
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(cache, before)


def test_rows_written_at_an_int_position_and_read_around_a_check():
    """A row and a slice written at an int position (`select_scatter`,
    `slice_scatter`), read in between and after, beside an index check
    (an embedding-like lookup): the guard restores both regions, last
    write first, over the program's writes; every call matches eager, and
    a failed check leaves every bit of the cache."""

    def step(cache, table, token, row, position: int):
        cache[position] = row[0] + table[token].sum()
        cache[position : position + 2].mul_(0.5)  # overlaps the row: restored last write first
        return cache[: position + 3].sum(0)

    torch.manual_seed(0)
    compiled = torch_purity.compile(step)
    cache, table, row = torch.randn(ROWS, COLUMNS), torch.randn(10, COLUMNS), torch.randn(1, COLUMNS)
    expected = cache.clone()
    for position in (3, 100, 7):
        token = torch.tensor([position % 10])
        got = compiled(cache, table, token, row, position)
        torch.testing.assert_close(got, step(expected, table, token, row, position))
        torch.testing.assert_close(cache, expected)
    before = cache.clone()
    with pytest.raises(PurityIndexError, match="index out of range"):
        compiled(cache, table, torch.tensor([10]), row, 5)
    assert torch.equal(cache, before)
    (entry,) = compiled.cache.values()
    assert 0 in entry.convention.tied_inputs and entry.hand_over == "in place"
