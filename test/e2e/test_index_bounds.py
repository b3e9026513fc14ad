"""Indices read from data: in range, the same results as eager; out of range,
eager's error (a PurityIndexError, which is an IndexError) naming the op and
the user's line, raised before any write reaches the caller's tensors, with
the process alive and the compiled code still usable.

Every program also writes a row of `cache` (tied: IREE writes it in place),
so the checks are shown to hold back in-place writes too.
"""

import pytest
import torch
import torch.nn.functional as F

import torch_purity
from torch_purity import PurityIndexError
from torch_purity.checking import clone_preserving_aliasing, compare

HUGE = 1 << 40
ROWS = 8  # the size of every indexed dimension below


def with_cache_row(body):
    def program(x, index, source, cache, row):
        cache[2] = row
        return body(x, index, source)

    program.__name__ = body.__name__
    return program


def index_select(x, index, source):
    return x.index_select(0, index)


def gather(x, index, source):
    return x.t().gather(1, index.view(1, -1).expand(4, -1))


def take(x, index, source):
    return torch.take(x[:2], index)  # 8 elements


def embedding(x, index, source):
    return F.embedding(index, x)


def embedding_bag(x, index, source):
    return F.embedding_bag(index.view(1, -1), x, mode="sum")


def advanced_read(x, index, source):
    return x[index] * 2


def advanced_read_two_dims(x, index, source):
    return x[index, index.remainder(4)]


def index_put(x, index, source):
    x.index_put_((index,), source)
    return x.sum(1)


def index_put_accumulate(x, index, source):
    x.index_put_((index,), source, accumulate=True)
    return x.sum(1)


def setitem(x, index, source):
    x[index] = source
    return x.clone()


def index_copy(x, index, source):
    x.index_copy_(0, index, source)
    return x.sum(1)


def index_fill(x, index, source):
    x.index_fill_(0, index, -1.0)
    return x.sum(1)


def index_add(x, index, source):
    x.index_add_(0, index, source)
    return x.sum(1)


def scatter(x, index, source):
    x.scatter_(0, index.view(-1, 1).expand(-1, 4), source)
    return x.sum(1)


def scatter_add(x, index, source):
    x.scatter_add_(0, index.view(-1, 1).expand(-1, 4), source)
    return x.sum(1)


def scatter_reduce(x, index, source):
    x.scatter_reduce_(0, index.view(-1, 1).expand(-1, 4), source, "amax")
    return x.sum(1)


def scatter_value(x, index, source):
    x.scatter_(0, index.view(-1, 1).expand(-1, 4), 5.0)
    return x.sum(1)


def gather_computed_index(x, index, source):
    """An index computed in the program (argmax) still in range, and one from data."""
    best = x.argmax(0)
    return x.gather(0, best.view(1, -1)) + x.index_select(0, index).sum(0)


# (program, accepts negative indices as eager does: they count from the end)
CASES = [
    (index_select, False),
    (gather, False),
    (take, True),
    (embedding, False),
    (embedding_bag, False),
    (advanced_read, True),
    (advanced_read_two_dims, True),
    (index_put, True),
    (index_put_accumulate, True),
    (setitem, True),
    (index_copy, False),
    (index_fill, True),
    (index_add, False),
    (scatter, False),
    (scatter_add, False),
    (scatter_reduce, False),
    (scatter_value, False),
    (gather_computed_index, False),
]


def make_inputs(index_values):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, 4, generator=generator)
    index = torch.tensor(index_values)
    source = torch.randn(len(index_values), 4, generator=generator)
    return [x, index, source, torch.zeros(6, 4), torch.ones(4)]


def good_indices(wraps):
    return [[1, 7], [-1, -ROWS]] if wraps else [[1, 7], [0, 3]]


def bad_indices(wraps):
    return [[1, ROWS], [-ROWS - 1, 0], [HUGE, 1]] if wraps else [[1, ROWS], [-1, 2], [HUGE, 0]]


@pytest.mark.parametrize("body,wraps", CASES, ids=[c[0].__name__ for c in CASES])
def test_in_range_matches_eager_and_out_of_range_raises_before_any_write(body, wraps):
    program = with_cache_row(body)
    compiled = torch_purity.compile(program)
    for values in good_indices(wraps):
        report = compare(program, compiled, make_inputs(values))
        assert report.ok, f"{values}: " + "; ".join(report.problems)
    entry, _ = compiled.entry_for(*make_inputs(good_indices(wraps)[0]))
    assert 3 in entry.convention.tied_inputs, "the checks must not cost the cache row its in-place write"
    assert entry.convention.index_checks is not None

    for values in bad_indices(wraps):
        eager_inputs = make_inputs(values)
        with pytest.raises((IndexError, RuntimeError)):
            program(*eager_inputs)
        inputs = make_inputs(values)
        before = clone_preserving_aliasing(inputs)
        with pytest.raises(PurityIndexError, match=r"index out of range") as raised:
            compiled(*inputs)
        assert isinstance(raised.value, IndexError)
        assert "test_index_bounds.py:" in str(raised.value), "the error names the user's line"
        for got, want in zip(inputs, before):
            assert torch.equal(got, want), f"{values}: a failed call wrote into the caller's tensor"
    # Still usable, with the same compiled code, after the failures.
    report = compare(program, compiled, make_inputs(good_indices(wraps)[1]))
    assert report.ok, "; ".join(report.problems)
    assert len(compiled.cache) == 1


def take_along_dim(x, index, source):
    return torch.take_along_dim(x, index.view(-1, 1).expand(-1, 4), 0)


def test_take_along_dim_wraps_every_index_as_eager_does():
    """Eager's take_along_dim takes indices modulo the size: no index fails."""
    program = with_cache_row(take_along_dim)
    compiled = torch_purity.compile(program)
    for values in ([1, 7], [ROWS, -1], [HUGE, -ROWS - 3]):
        report = compare(program, compiled, make_inputs(values))
        assert report.ok, f"{values}: " + "; ".join(report.problems)


def kv_decode_step(cache, position, row):
    cache.index_copy_(0, position, row)
    return cache[:4].sum(0)


def test_decode_loop_past_the_cache_end_raises_and_keeps_the_cache():
    """The reported case: one step past a static 8-row cache."""
    compiled = torch_purity.compile(kv_decode_step)
    cache, eager_cache = torch.zeros(ROWS, 4), torch.zeros(ROWS, 4)
    for step in range(ROWS):
        row = torch.full((1, 4), float(step + 1))
        got = compiled(cache, torch.tensor([step]), row)
        torch.testing.assert_close(got, kv_decode_step(eager_cache, torch.tensor([step]), row))
    assert torch.equal(cache, eager_cache)
    with pytest.raises(IndexError, match=r"index out of range"):
        compiled(cache, torch.tensor([ROWS]), torch.ones(1, 4))
    assert torch.equal(cache, eager_cache)


def _index_copy_write(cache, position, row):
    cache.index_copy_(0, position, row)
    return cache[position].sum()


def _setitem_write(cache, position, row):
    cache[position] = row
    return row.sum()


def _attention_after_write(cache, position, row):
    cache[:, position] = row  # the elements at (:, position): index_put with a leading full slice
    return cache[:, :4].sum(1)


@pytest.mark.parametrize("program", [_index_copy_write, _setitem_write, _attention_after_write])
def test_a_write_at_a_tensor_position_is_done_in_the_callers_tensor(program):
    """A static KV cache's write (a row at a position given as a tensor):
    the cache is tied and IREE writes it in the caller's memory, so nothing
    of the whole cache is copied, the calls match eager, and a position past
    the end still raises with the cache untouched."""
    cache = torch.randn(4096, 16) if program is not _attention_after_write else torch.randn(16, 4096)
    row = torch.randn(1, 16) if program is not _attention_after_write else torch.randn(16, 1)
    eager_cache = cache.clone()
    compiled = torch_purity.compile(program)
    for step in (3, 4095, 0):
        position = torch.tensor([step])
        got = compiled(cache, position, row)
        torch.testing.assert_close(got, program(eager_cache, position, row))
        assert torch.equal(cache, eager_cache)
    entry, _ = compiled.entry_for(cache, torch.tensor([0]), row)
    assert entry.convention.tied_inputs == {0} and entry.hand_over == "in place"
    assert 0 in entry.imports and entry.imports[0][0] == cache.data_ptr(), "the cache crossed as a copy"
    with pytest.raises(IndexError, match=r"index out of range"):
        compiled(cache, torch.tensor([4096]), row + 1)
    assert torch.equal(cache, eager_cache)


def test_through_torch_compile():
    torch._dynamo.reset()
    program = with_cache_row(embedding)
    compiled = torch.compile(program, backend="purity")
    report = compare(program, compiled, make_inputs([1, 7]))
    assert report.ok, "; ".join(report.problems)
    inputs = make_inputs([1, ROWS])
    before = clone_preserving_aliasing(inputs)
    with pytest.raises(IndexError):
        compiled(*inputs)
    for got, want in zip(inputs, before):
        assert torch.equal(got, want)


def embedding_bag_with_offsets(weight, indices, offsets, cache, row):
    cache[2] = row
    return F.embedding_bag(indices, weight, offsets, mode="sum")


def test_embedding_bag_offsets_are_checked_as_eager_checks_them():
    """The first offset is 0, none decreases, none is past the indices."""

    def inputs(offsets):
        return [
            torch.randn(ROWS, 4),
            torch.tensor([1, 2, 3, 4]),
            torch.tensor(offsets),
            torch.zeros(6, 4),
            torch.ones(4),
        ]

    compiled = torch_purity.compile(embedding_bag_with_offsets)
    for good in ([0, 2], [0, 4], [0, 0]):
        report = compare(embedding_bag_with_offsets, compiled, inputs(good))
        assert report.ok, f"{good}: " + "; ".join(report.problems)
    for bad in ([0, 9], [0, -3], [3, 1], [1, 2]):
        with pytest.raises((IndexError, RuntimeError)):
            embedding_bag_with_offsets(*inputs(bad))
        args = inputs(bad)
        before = clone_preserving_aliasing(args)
        with pytest.raises(PurityIndexError):
            compiled(*args)
        for got, want in zip(args, before):
            assert torch.equal(got, want)


def test_purity_run_lists_the_index_checks(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    source = tmp_path / "lookup.py"
    source.write_text(
        "import torch\n"
        "def program(cache, row, ids, weight):\n"
        "    cache[2] = row\n"
        "    return torch.nn.functional.embedding(ids, weight).sum(0)\n"
        "def example_inputs():\n"
        "    return torch.zeros(8, 4), torch.ones(4), torch.tensor([1, 5]), torch.randn(10, 4)\n"
    )
    purity = Path(sys.executable).parent / "purity"
    result = subprocess.run([str(purity), "run", str(source), "--repeats", "2"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "index checks in the compiled program: 1" in result.stdout
    assert f"aten.embedding.default at {source}:4: 2 indices clamped into range and checked" in result.stdout


# Boolean mask assignments: a mask with no True element once made the compiled
# call write out of bounds (torch-mlir's nonzero positions broadcast to one).
def _mask(bits: str) -> torch.Tensor:
    return torch.tensor([bit == "1" for bit in bits])


def mask_put(x, mask, values):
    return torch.index_put(x, (mask,), values)


def mask_accumulate(x, mask, values):
    return torch.index_put(x, (mask,), values, accumulate=True)


def mask_columns_in_place(x, mask, values):
    x[:, mask] = values
    return x * 1


MASK_CASES = {
    "row_broadcast": (mask_put, lambda ones: torch.randn(5)),
    "row_per_selected": (mask_put, lambda ones: torch.randn(ones, 5)),
    "accumulate_broadcast": (mask_accumulate, lambda ones: torch.randn(5)),
    "accumulate_per_selected": (mask_accumulate, lambda ones: torch.randn(ones, 5)),
    "columns_scalar": (mask_columns_in_place, lambda ones: torch.randn(())),
    "columns_per_selected": (mask_columns_in_place, lambda ones: torch.randn(5, ones)),
}


@pytest.mark.parametrize("bits", ["00000", "01001", "11111"])
@pytest.mark.parametrize("name", sorted(MASK_CASES))
def test_mask_assignment_matches_eager(name, bits):
    program, values = MASK_CASES[name]
    inputs = [torch.randn(5, 5), _mask(bits), values(bits.count("1"))]
    report = compare(program, torch_purity.compile(program), inputs, atol=0, rtol=0)
    assert report.ok, report.problems


def test_mask_with_more_selected_than_values_raises_as_eager():
    inputs = [torch.randn(5, 5), _mask("11100"), torch.randn(2, 5)]
    with pytest.raises(RuntimeError):
        mask_put(*clone_preserving_aliasing(inputs))
    given = clone_preserving_aliasing(inputs)
    with pytest.raises(PurityIndexError):
        torch_purity.compile(mask_put)(*given)
    assert all(torch.equal(a, b) for a, b in zip(given, inputs))


def test_computed_mask_clamps_like_eager():
    def clamp_low(z):
        z = z.clone()
        z[z < -1.0] = -1.0
        return z

    report = compare(clamp_low, torch_purity.compile(clamp_low), [torch.randn(64) * 2])
    assert report.ok, report.problems


# scatter ops with a negative dim crashed torch-mlir's lowering.
NEGATIVE_DIM = {
    "negative_dim_scatter_add": lambda x, i, s: torch.scatter_add(x, -1, i, s),
    "negative_dim_scatter_add_in_place": lambda x, i, s: x.scatter_add_(-1, i, s) * 1,
    "negative_dim_scatter": lambda x, i, s: torch.scatter(x, -1, i, s),
    "negative_dim_scatter_value": lambda x, i, s: torch.scatter(x, -2, i, 2.0),
    "negative_dim_scatter_reduce": lambda x, i, s: torch.scatter_reduce(x, -1, i, s, "amax"),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE_DIM))
def test_scatter_with_a_negative_dim_matches_eager(name):
    program = NEGATIVE_DIM[name]
    inputs = [torch.randn(10, 5), torch.randint(0, 5, (5, 5)), torch.randn(5, 5)]
    report = compare(program, torch_purity.compile(program), inputs)
    assert report.ok, report.problems
