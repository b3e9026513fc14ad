"""purity-functionalize against eager PyTorch, one program per lit case family,
run with IREE on the CPU: outputs and final contents of mutated inputs."""

import pytest
import torch
from iree_harness import assert_matches_eager


def in_place_on_fresh(x, y):
    z = x * 2
    z.add_(y)
    z.mul_(3).sub_(1)
    return z


def issue_example(x, y):
    z = x * 2
    z.add_(y)
    z[0].mul_(3)
    a, b = z.split(2)
    b.zero_()
    x.add_(1)
    return z


def select_of_strided_slice(x):
    x[1::2][1].fill_(5.0)
    return x * 1


def narrow_write(x):
    x.narrow(1, 1, 2).mul_(10)
    return x.sum()


def diagonal_write(x):
    x.diagonal().add_(1)
    return x + 0


def diagonal_of_clone(x):
    y = x + x
    y.diagonal().fill_(0)
    return y


def as_strided_write(x):
    x.as_strided((2,), (2,), 1).add_(1)
    return x * 1


def view_and_permute(x, y):
    x.view(-1).mul_(3)
    y.permute(2, 0, 1).neg_()
    return x + 1, y + 1


def transpose_and_t(x):
    x.t()[0].add_(1)
    x.transpose(0, 1)[1].mul_(2)
    return x * 1


def unsqueeze_squeeze(x):
    x.unsqueeze(0)[0, 1].fill_(7.0)
    return x * 1


def split_chunk_unbind(x):
    a, b = x.split_with_sizes([1, 3])
    b.mul_(2)
    c, d = x.chunk(2, dim=1)
    d.add_(1)
    rows = x.unbind(0)
    rows[2].zero_()
    return x * 1


def view_before_mutation(x):
    v = x.view(-1)
    before = v * 1
    x.add_(1)
    return before, v + 0


def copy_broadcast_dtype(x, y):
    z = torch.zeros(3, 3)
    z.diagonal().copy_(y)
    z[0].copy_(x.to(torch.int64))
    return z


def metadata_mutation_then_write(x):
    x.t_()
    x[0].mul_(2)
    return x + 0


def unsqueeze_inplace(x):
    y = x * 1
    y.unsqueeze_(0)
    y[0, 0].fill_(3.0)
    return y


def index_put_accumulate(x, v):
    idx = torch.tensor([0, 2, 0])
    x.index_put_((idx,), v, accumulate=True)
    return x * 1


def index_put_through_view(x):
    idx = torch.tensor([1, 3])
    x[1].index_put_((idx,), torch.tensor([5.0, 6.0]))
    return x * 1


def masked_fill_write(x):
    x[0].masked_fill_(x[0] > 0, 0.0)
    return x * 1


def scatter_writes(x):
    idx = torch.tensor([[0, 1, 2, 0]])
    x.scatter_(0, idx, torch.ones(1, 4))
    x.scatter_add_(0, idx, torch.ones(1, 4))
    return x * 1


def out_variant(a, b, c):
    torch.add(a, b, out=c)
    return c * 2


def nested_helper_mutates(x):
    def helper(t):
        t[0].add_(1)

    helper(x)
    return x + x


def fill_and_zero_fresh(x):
    t = torch.zeros(10)
    t[5].fill_(1)
    u = x.clone()
    u[1:3].zero_()
    return t, u


KNOWN_GAPS: dict[str, str] = {}


def bool_mask_index_put(x):
    mask = x > 0
    x[mask] = 0.0
    y = x * 2
    y.index_put_((y < 0,), torch.tensor(1.0))
    return y


def index_copy_fill_add(x, src):
    idx = torch.tensor([0, 2])
    y = x.clone()
    y.index_copy_(0, idx, src)
    y.index_fill_(1, torch.tensor([1]), -1.0)
    x[1:].index_add_(0, torch.tensor([0, 1]), src)
    return y


def scatter_reduce_through_view(x):
    idx = torch.tensor([[0, 1, 0]])
    x[:, 1:].scatter_reduce_(0, idx, torch.full((1, 3), 5.0), reduce="amax")
    return x * 1


def masked_fill_fresh_and_view(x):
    y = x.clone()
    y.masked_fill_(y < 0, 0.0)
    x.t()[1].masked_fill_(torch.tensor([True, False, True]), 9.0)
    return y


def metadata_mutations_of_intermediates(x):
    y = x + 1
    y.t_()
    y.unsqueeze_(0)
    y.squeeze_(0)
    y.transpose_(0, 1)
    y[0].zero_()
    return y * 1


def outputs_alias_each_other(x):
    y = x * 2
    return y.view(-1), y[0], y.t()


def reads_between_writes(x):
    row = x[0]
    a = row.sum()
    row.add_(1)
    b = row.sum()
    x.mul_(2)
    c = row.sum()
    return a, b, c


def _lowering_gap(program, reason):
    """Marks a case that functionalizes correctly but cannot be run yet: it must
    fail (strict xfail), so the mark goes when the gap is closed."""
    KNOWN_GAPS[program.__name__] = reason
    return program


IREE_SCATTER_INTO_ARGUMENT = (
    "IREE 3.13 rejects this index_put into a tied argument ('write affecting operations on global resources')"
)

CASES = [
    (in_place_on_fresh, lambda: (torch.randn(4), torch.randn(4))),
    (issue_example, lambda: (torch.randn(4, 4), torch.randn(4, 4))),
    (select_of_strided_slice, lambda: (torch.randn(6, 4),)),
    (narrow_write, lambda: (torch.randn(3, 4),)),
    (diagonal_write, lambda: (torch.randn(3, 3),)),
    (diagonal_of_clone, lambda: (torch.randn(3, 3),)),
    (as_strided_write, lambda: (torch.randn(8),)),
    (view_and_permute, lambda: (torch.randn(2, 3), torch.randn(2, 3, 4))),
    (transpose_and_t, lambda: (torch.randn(3, 3),)),
    (unsqueeze_squeeze, lambda: (torch.randn(3),)),
    (split_chunk_unbind, lambda: (torch.randn(4, 4),)),
    (view_before_mutation, lambda: (torch.randn(2, 3),)),
    (
        copy_broadcast_dtype,
        lambda: (torch.randn(3) * 10, torch.randn(())),
    ),
    (metadata_mutation_then_write, lambda: (torch.randn(2, 3),)),
    (unsqueeze_inplace, lambda: (torch.randn(2, 3),)),
    (index_put_accumulate, lambda: (torch.randn(3, 2), torch.randn(3, 2))),
    (_lowering_gap(index_put_through_view, IREE_SCATTER_INTO_ARGUMENT), lambda: (torch.randn(2, 4),)),
    (masked_fill_write, lambda: (torch.randn(2, 5),)),
    (scatter_writes, lambda: (torch.randn(3, 4),)),
    (out_variant, lambda: (torch.randn(3), torch.randn(3), torch.randn(3))),
    (nested_helper_mutates, lambda: (torch.randn(2, 2),)),
    (fill_and_zero_fresh, lambda: (torch.randn(4),)),
    (bool_mask_index_put, lambda: (torch.randn(3, 4),)),
    (index_copy_fill_add, lambda: (torch.randn(3, 2), torch.randn(2, 2))),
    (scatter_reduce_through_view, lambda: (torch.randn(2, 4),)),
    (masked_fill_fresh_and_view, lambda: (torch.randn(3, 3),)),
    (metadata_mutations_of_intermediates, lambda: (torch.randn(2, 3),)),
    (outputs_alias_each_other, lambda: (torch.randn(2, 3),)),
    (reads_between_writes, lambda: (torch.randn(3, 3),)),
]


PARAMS = [
    pytest.param(
        program,
        make_inputs,
        id=program.__name__,
        marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[program.__name__])]
        if program.__name__ in KNOWN_GAPS
        else [],
    )
    for program, make_inputs in CASES
]


@pytest.mark.parametrize("program,make_inputs", PARAMS)
def test_matches_eager(program, make_inputs):
    torch.manual_seed(0)
    assert_matches_eager(program, *make_inputs())


def as_strided_after_a_view(x):
    # as_strided addresses the storage: through x[1] it still starts at x's first element.
    x[1].as_strided((2,), (1,), 1).add_(1)
    return x * 1


def as_strided_metadata_mutation(x):
    y = x * 1
    y.as_strided_((2, 2), (1, 3), 1)
    y[0].mul_(10)
    return y + 0, y.sum()


@pytest.mark.parametrize("program", [as_strided_after_a_view, as_strided_metadata_mutation])
def test_as_strided_addresses_the_storage(program):
    assert_matches_eager(program, torch.randn(3, 3))


def test_as_strided_on_an_offset_input_is_rejected_at_its_line():
    def program(x):
        x.as_strided((2,), (1,), 0).add_(1)
        return x

    base = torch.randn(8)
    with pytest.raises(Exception, match="as_strided on a tensor whose storage is not laid out contiguously"):
        assert_matches_eager(program, base[2:])
