"""Inputs that share storage: synthetic bases in the IR where they overlap and
one is written, none where they do not; call-time guards that recompile when
the aliasing of the inputs changes. Each case is compared with eager on two
sets of data (outputs, the storage after the call, output aliasing)."""

import os

import pytest
import torch

import torch_purity
from torch_purity.checking import compare

TARGET = os.environ.get("PURITY_E2E_TARGET", "cpu")


def base(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def mutate_first_read_both(a, b):
    a.add_(1)
    return a + b


def mutate_both(a, b):
    a.mul_(2)
    b.add_(1)
    return a * 1, b * 1


def mutate_then_view_of_other(a, b):
    a.add_(1)
    return b.view(-1)


def three_inputs_last_mutated(a, b, c):
    c.mul_(2)
    return b + 1, c.view(-1)


def metadata_mutation_of_one_alias(a, b):
    b.t_()
    a[0].mul_(3)
    return a + 0, b + 0


def two_groups(a, b, c, d):
    b.add_(1)
    d.unsqueeze_(0)
    return a + c.sum(), d + 0


def mutate_second_return_first(a, b):
    b.add_(1)
    return a


def mutate_all_read_view(a, b, c):
    c.mul_(2)
    b.t_()
    tmp = a + c
    return tmp.view(-1), b.t(), c.unsqueeze(0)


def both_mutated_both_returned(a, b):
    a.add_(1)
    b.add_(2)
    return a, b


def data_and_metadata_mutation(a, b):
    a.mul_(2)
    b.t_()
    return a + 0, b + 0


def read_window_write_both_halves(window, second, first):
    picked = window[torch.tensor([1, 0])]
    second.add_(1.5)
    first.add_(1.5)
    return picked * 2


def dupe_arg_torture(x, y):
    x.t_()
    y.unsqueeze_(0)
    return x + 0, y + 0


CASES = [
    ("same_tensor_twice", mutate_first_read_both, lambda s: (lambda x: (x, x))(base(s, 4))),
    (
        "row_and_its_tensor",
        mutate_first_read_both,
        lambda s: (lambda x: (x[0], x[1:].sum(0) * 0 + x[0]))(base(s, 3, 4)),
    ),
    ("row_and_whole", mutate_first_read_both, lambda s: (lambda x: (x[1], x))(base(s, 3, 4))),
    (
        "view_passed_twice_output_view",
        mutate_then_view_of_other,
        lambda s: (lambda x: (x.view(-1), x.view(-1)))(base(s, 2, 3)),
    ),
    (
        "aliased_with_other_input_between",
        three_inputs_last_mutated,
        lambda s: (lambda x, y: (x.view(-1), y, x.view(-1)))(base(s, 2, 2), base(s + 9, 4)),
    ),
    ("metadata_mutation_of_one_alias", metadata_mutation_of_one_alias, lambda s: (lambda x: (x, x.t()))(base(s, 3, 3))),
    ("two_alias_groups", two_groups, lambda s: (lambda x, y: (x, x[0], y, y[1]))(base(s, 2, 3), base(s + 5, 3, 2))),
    ("unsqueeze_view_of_base", mutate_second_return_first, lambda s: (lambda x: (x, x.unsqueeze(0)))(base(s, 3))),
    ("mutate_all_aliases", mutate_all_read_view, lambda s: (lambda x: (x, x[:], x[:]))(base(s, 2, 2))),
    ("overlapping_slices", mutate_both, lambda s: (lambda x: (x[:6], x[2:]))(base(s, 8))),
    ("tensor_and_inner_slice", both_mutated_both_returned, lambda s: (lambda x: (x, x[1:-1]))(base(s, 6))),
    ("tensor_and_its_transpose", mutate_both, lambda s: (lambda x: (x, x.t()))(base(s, 3, 3))),
    ("same_row_twice_data_and_metadata", data_and_metadata_mutation, lambda s: (lambda x: (x[0], x[0]))(base(s, 2, 2))),
    ("same_object_twice_metadata", dupe_arg_torture, lambda s: (lambda x: (x, x))(base(s, 2, 3))),
    ("disjoint_halves", mutate_both, lambda s: (lambda x: (x[0:2], x[2:4]))(base(s, 4))),
    ("interleaved_columns", mutate_both, lambda s: (lambda x: (x[:, 0::2], x[:, 1::2]))(base(s, 3, 4))),
    # The window and the second half need a base over the storage from its
    # start; the first half, disjoint from both, lies inside that base.
    (
        "disjoint_input_inside_a_synthetic_base",
        read_window_write_both_halves,
        lambda s: (lambda x: (x[1:].as_strided((2, 2), (1, 2)), x[1:], x[:1]))(base(s, 2, 4)),
    ),
]


@pytest.mark.parametrize("name,program,make_inputs", CASES, ids=[c[0] for c in CASES])
def test_aliased_inputs_match_eager(name, program, make_inputs):
    compiled = torch_purity.compile(program, target=TARGET)
    for seed in (0, 1):
        report = compare(program, compiled, make_inputs(seed))
        assert report.ok, f"seed {seed}: " + "; ".join(report.problems)


def synthetic_bases_of(program, inputs) -> int:
    entry, _ = torch_purity.compile(program).entry_for(*inputs)
    return len(entry.convention.synthetic_bases)


def test_synthetic_base_only_where_needed():
    x = base(0, 4)
    assert synthetic_bases_of(mutate_first_read_both, (x, x)) == 1
    assert synthetic_bases_of(mutate_both, (x[0:2], x[2:4])) == 0
    y = base(0, 3, 4)
    assert synthetic_bases_of(mutate_both, (y[:, 0::2], y[:, 1::2])) == 0
    assert synthetic_bases_of(mutate_first_read_both, (base(0, 4), base(1, 4))) == 0


def test_guard_recompiles_for_new_aliasing():
    compiled = torch_purity.compile(mutate_first_read_both, target=TARGET)
    assert compare(mutate_first_read_both, compiled, (base(0, 4), base(1, 4))).ok
    x = base(2, 4)
    report = compare(mutate_first_read_both, compiled, (x, x))
    assert report.ok, report.problems
    assert len(compiled.cache) == 2
    # And in place on the caller's tensor, like eager:
    y = base(3, 4)
    expected = y + 1
    compiled(y, y)
    torch.testing.assert_close(y, expected)


def double_into_transposed_alias(x, xt):
    torch.mul(x, 2, out=xt)
    return x + 0


def test_out_write_into_a_transposed_alias_runs_like_eager():
    """`out=` into the transpose of the tensor the op reads: eager reads
    elements it already overwrote, in its kernel's order (for tensors that
    are not dense it cannot tell and does not refuse). Purity's own code
    refuses it with a located error; the eager fallback runs that op in
    eager and matches."""
    def make(seed):
        every_other_column = base(seed, 3, 6)[:, ::2]
        return every_other_column, every_other_column.t()

    with pytest.raises(torch_purity.PurityError, match="depends on the order its kernel visits") as refused:
        torch_purity.compile(double_into_transposed_alias, fallback="error")(*make(0))
    assert "test_aliased_inputs.py" in str(refused.value)
    with pytest.warns(torch_purity.EagerFallbackWarning, match="aten.mul.out"):
        compiled = torch_purity.compile(double_into_transposed_alias, fallback="eager")
        report = compare(double_into_transposed_alias, compiled, make(1))
    assert report.ok, report.problems


def fill_from_own_element(x):
    x.fill_(x[1, 1])
    return x + 0


def masked_fill_from_own_element(x):
    x.masked_fill_(x > 0, x[2, 2])
    return x * 1


@pytest.mark.parametrize("program", [fill_from_own_element, masked_fill_from_own_element])
def test_a_fill_from_an_element_of_its_own_tensor_compiles(program):
    """The fill family reads its 0-d value before writing (eager too): not an
    order-dependent write, so Purity's own code compiles it."""
    compiled = torch_purity.compile(program, fallback="error", target=TARGET)
    report = compare(program, compiled, (base(0, 3, 3),))
    assert report.ok, report.problems
