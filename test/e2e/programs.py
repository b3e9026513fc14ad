"""End-to-end programs: views, in-place ops, input mutation, output aliasing, models.

Each entry is (name, program, make_inputs) where make_inputs(seed) returns the
inputs; tests run every program on two seeds and compare with eager for
outputs, inputs after the call, and output aliasing. Written from the
behaviour groups of shared/docs/peer-behaviours.md, in our own code.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

PROGRAMS: list[tuple[str, object, object]] = []


def program(*shapes, dtype=torch.float32, make=None):
    """Registers a program with random inputs of `shapes` (or a custom `make(generator)`)."""

    def register(function):
        def make_inputs(seed: int):
            generator = torch.Generator().manual_seed(seed)
            if make is not None:
                return make(generator)
            return tuple(torch.randn(shape, generator=generator).to(dtype) for shape in shapes)

        PROGRAMS.append((function.__name__, function, make_inputs))
        return function

    return register


# --- views plus in-place ops (test_functionalization) -----------------------


@program((4, 2))
def simple_view_write(x):
    y = x.view(4, 2)
    y.add_(torch.ones(4, 2))
    z = x * x
    return y, z


@program((8,))
def view_sees_base_write(x):
    y = x.view(4, 2)
    x.add_(torch.ones(8))
    return y


@program((2, 4))
def multiple_views_of_same_base(x):
    y = x.view(-1)
    z = x.view(-1)
    x.add_(1)
    return y + 1, z * 2


@program((4, 2))
def scalars(x):
    y = x.view(4, 2)
    y.add_(1)
    z = 2 * y
    z.div_(1)
    return z


@program((4, 2))
def only_one_view(x):
    return x.view(2, 4)


@program((3,))
def tensor_constructor_mutated(x):
    t = torch.tensor([1.0, 2.0, 3.0])
    t.view(-1).add_(1)
    return t + x


@program((10,))
def index_mutation_on_non_input(x):
    t = torch.zeros(10)
    t[5].fill_(1)
    return t + x


@program((3, 3))
def fill_diagonal_of_intermediate(x):
    y = x + x
    y.diagonal().fill_(0)
    return y


@program((3, 3))
def dead_mutated_clone(x):
    x.clone().diagonal().add_(1)
    return x * x


@program((3, 3))
def diagonal_mutated_input(x):
    x.diagonal().add_(1)
    return x


@program((8,))
def as_strided_mutated_input(x):
    x.as_strided((2,), (2,), 1).add_(1)
    return x


@program((4, 2))
def split_then_diagonal(x):
    y = x + x
    a, b = y.split(2)
    b.diagonal().add_(1)
    return y


@program((4, 2))
def split_with_sizes_then_diagonal(x):
    y = x + x
    a, b = y.split_with_sizes([2, 2])
    a.diagonal().add_(1)
    return y


@program((4, 2))
def transpose_then_select_write(x):
    x.transpose_(1, 0)
    x[0].add_(1)
    return x


@program((4, 2))
def transpose_then_slice_write(x):
    x.transpose_(1, 0)
    x[0:2].add_(1)
    return x


@program((4, 2))
def transpose_then_unbind_write(x):
    x.transpose_(1, 0)
    x.unbind(0)[0].add_(1)
    return x


@program((4, 2))
def everything_chain(x):
    y = x + x
    z = y.view(8).reshape(2, 4).transpose(1, 0)
    z.unsqueeze_(0)
    z.squeeze_()
    z0, z1 = z.split(2)
    z0.add_(1)
    return z0[0] + z1.reshape(4)[0], y


@program((2, 4))
def index_put_through_view(x):
    values = torch.tensor([1.0, 2.0, 3.0, 4.0])
    x.view(8).index_put_((torch.arange(4),), values)
    return x * 1


@program((3,))
def advanced_indexing_write(x):
    z = torch.zeros(3, 3)
    z[:, torch.tensor([0, 2])] = x.unsqueeze(1)
    return z


@program((3, 3))
def masked_fill_strided_column(x):
    y = x.clone()
    y[:, 1].masked_fill_(y[:, 1] > 0, 0.0)
    return y


@program((2,))
def copy_into_diagonal_same(x):
    z = torch.zeros(2, 2)
    z.diagonal().copy_(x).add_(x)
    return z


@program((1,))
def copy_into_diagonal_broadcast(x):
    z = torch.zeros(2, 2)
    z.diagonal().copy_(x)
    return z


@program(make=lambda g: (torch.randint(-5, 5, (2,), generator=g),))
def copy_into_diagonal_dtype(x):
    z = torch.zeros(2, 2)
    z.diagonal().copy_(x)
    return z


@program(make=lambda g: (torch.randint(-5, 5, (1,), generator=g),))
def copy_into_diagonal_broadcast_and_dtype(x):
    z = torch.zeros(2, 2)
    z.diagonal().copy_(x).add_(1)
    return z


def _helper_mutates_row(t):
    t[0].add_(1)


@program((2, 2))
def nested_function_mutation(x):
    _helper_mutates_row(x)
    return x + x


@program((2, 4))
def two_views_one_mutated_both_returned(x):
    a = x[0]
    b = x.view(-1)
    a.mul_(2)
    return a, b


@program((3,))
def metadata_change_ge_(x):
    y = x.clone()
    y.ge_(0)
    return y


@program(
    make=lambda g: (torch.randint(0, 9, (3,), generator=g), torch.randint(0, 9, (3,), generator=g), torch.zeros(3))
)
def int_add_into_float_out(a, b, out):
    torch.add(a, b, out=out)
    return out


@program((4, 3), (3,), (3,), (3,), (3,))
def batch_norm_training_function(x, running_mean, running_var, weight, bias):
    return F.batch_norm(x, running_mean, running_var, weight, bias, training=True, momentum=0.1)


# --- input data mutation (test_aotdispatch) ------------------------------------


@program((3,))
def input_mutation_simple(a):
    a.mul_(2)
    return a * 3


@program((3,))
def input_mutation_is_output(a):
    a.mul_(2)
    return a


@program((3,), (3,), (3,))
def input_mutation_multiple(a, b, c):
    a.mul_(2)
    c.mul_(3)
    return b + 1


@program((3,), (3,))
def input_mutation_return_out(a, b):
    return torch.sin(a, out=b)


@program((3,), (3,))
def add_inplace_returned(x, y):
    return x.add_(y)


@program(make=lambda g: (torch.randn(8, generator=g)[0::2],))
def mutates_noncontiguous_input(a):
    a.mul_(2)
    return a + 1


@program(make=lambda g: (torch.randn(3, 2, generator=g)[:, 0],))
def mutates_column_input(a):
    a.add_(1)
    return a * 2


@program((3, 3))
def detach_then_mutate(a):
    a.detach().mul_(2)
    return a + 1


@program((2, 2))
def mutation_under_no_grad(a):
    with torch.no_grad():
        a.view(-1).mul_(2)
    return a + 1


@program((2, 3), (3, 2))
def input_metadata_mutation(a, b):
    a.transpose_(1, 0)
    return a + b


@program((2, 3))
def input_metadata_then_data_mutation(a):
    a.transpose_(1, 0)
    a.mul_(2)
    return a + 1


@program((2, 3))
def data_and_metadata_mutation(a):
    a.t_()
    a[0].mul_(2)
    return a.view(a.shape)


@program((2, 3), (4,))
def view_and_inplace_view(a, b):
    a.t_()
    return b.view(b.shape), a.view(a.shape)


# --- outputs that alias inputs ----------------------------------------------------


@program((2, 3))
def input_output_view_simple(a):
    return a.view(-1)


@program((4,), (4,), (4,))
def input_output_view_mutate_multiple(a, b, c):
    a.mul_(2)
    c.mul_(3)
    return b.view(2, 2), c.view(2, 2)


@program((4,), (2, 2), (2, 2))
def input_output_view_metadata_mutate_multiple(a, b, c):
    b.mul_(3)
    c.t_()
    return a.view(2, 2), b.view(2, 2), c.view(2, 2)


@program((4,))
def input_mutation_and_output_view(a):
    a.add_(1)
    return a.view(-1)


@program((3, 3), (3, 3), (3, 3), (3, 3))
def input_mutation_output_view_multiple(a, b, c, d):
    b.transpose_(1, 0)
    c.add_(1)
    return d + 1, b.diagonal(), a + c


@program((3,))
def view_detach(a):
    t = a.detach()
    a.mul_(2)
    return a, t


@program((3, 4))
def unbind_outputs_alias_input(a):
    return a.unbind(0)


@program((2, 3))
def all_alias_types(a):
    a.transpose_(1, 0)
    t = a * 2
    return t.squeeze(), t.T, a.unsqueeze(0)


# --- outputs that alias intermediates ----------------------------------------------


@program((4,))
def intermediate_view_returned(a):
    out = a * 3
    return out.view(-1)


@program((4,))
def intermediate_two_views(a):
    out = a * 3
    return out.view(-1), out.view(-1)


@program((4,))
def intermediate_and_its_view(a):
    out = a * 3
    return out, out.view(2, 2)


@program((4,))
def intermediate_returned_multiple_times(a):
    out = a * 3
    return out, out.view(-1), out


@program((2, 3))
def alias_of_intermediate_detach(x):
    a = (x + 1).T
    return a.detach(), a


@program((2, 3))
def intermediate_transposed_in_place(x):
    out = x * 2
    out.t_()
    out.detach_()
    return out


# --- torch-mlir e2e style -------------------------------------------------------------


@program((3, 4), (3, 4))
def copy_same(x, y):
    x.copy_(y)
    return x


@program((3, 4), (1, 4))
def copy_broadcast(x, y):
    x.copy_(y)
    return x


@program(make=lambda g: (torch.randn(3, 4, generator=g), torch.randint(0, 9, (3, 4), generator=g)))
def copy_dtype(x, y):
    x.copy_(y)
    return x


@program(make=lambda g: (torch.randn(3, 4, generator=g), torch.randint(0, 9, (4,), generator=g)))
def copy_broadcast_and_dtype(x, y):
    x.copy_(y)
    return x


@program((3, 4))
def add_scalar_in_place(x):
    return x.add_(3)


@program((3, 4))
def zero_in_place(x):
    return x.zero_()


@program((3, 4), ())
def fill_with_zero_dim_tensor(x, value):
    return x.fill_(value)


@program(make=lambda g: (torch.randint(0, 5, (3, 4), generator=g),))
def zero_int_tensor(x):
    x.zero_()
    return x


@program((8, 8))
def as_strided_of_slice_read(x):
    return x[2:6].as_strided((2, 2), (1, 2), 3) + 0


@program((5, 4), (2, 4))
def slice_copy(x, y):
    x[2:4].copy_(y)
    return x


@program((5, 4), (2, 4))
def slice_copy_negative_end(x, y):
    x[1:-2].copy_(y)
    return x


@program((4, 6), (4, 3))
def slice_copy_non_zero_dim(x, y):
    x[:, 1:4].copy_(y)
    return x


@program((4, 3), (3,))
def select_assign(x, y):
    x[1] = y
    return x


@program((6,), (3,))
def strided_slice_assign(x, y):
    x[::2] = y
    return x


@program((4,), (3,))
def expand_read_only(x, y):
    return x.expand(3, 4).sum(0) + y.sum()


@program((4, 4))
def unfold_read_only(x):
    return x.unfold(1, 2, 2).sum(-1)


@program(make=lambda g: (torch.randn(5, generator=g), torch.tensor([0, 2, 0]), torch.randn(3, generator=g)))
def index_put_accumulate_1d(x, index, values):
    x.index_put_((index,), values, accumulate=True)
    return x


@program(
    make=lambda g: (
        torch.randn(4, 3, generator=g),
        torch.tensor([0, 3]),
        torch.tensor([2, 1]),
        torch.randn(2, generator=g),
    )
)
def index_put_2d_two_indices(x, rows, cols, values):
    x.index_put_((rows, cols), values)
    return x


@program(make=lambda g: (torch.randn(3, 4, generator=g), torch.tensor([[0, 1, 1, 0]])))
def scatter_add_into_row_slice(x, index):
    x[1:].scatter_add_(0, index.expand(2, 4)[:1], torch.ones(1, 4))
    return x


@program((3, 4))
def masked_fill_input(x):
    x.masked_fill_(x < 0, 0.0)
    return x


@program((4, 3), (2, 3))
def index_add_input(x, source):
    x.index_add_(0, torch.tensor([1, 3]), source)
    return x


@program((5,))
def cumsum_in_place(x):
    x.cumsum_(0)
    return x


@program((3, 4))
def relu_and_clamp_on_views(x):
    x[0].relu_()
    x[1:].clamp_(-0.5, 0.5)
    return x


@program((3, 4))
def div_with_rounding_on_view(x):
    x[:, :2].div_(0.3, rounding_mode="floor")
    return x


@program((3, 4), (3, 4))
def where_reads_after_write(x, y):
    x.mul_(2)
    return torch.where(x > y, x, y)


@program((2, 3, 4))
def permute_write(x):
    x.permute(2, 0, 1)[1].sub_(1)
    return x


@program((2, 3, 4))
def movedim_write(x):
    x.movedim(2, 0)[0].fill_(0.5)
    return x


@program((2, 3))
def unsqueeze_view_write(x):
    x.unsqueeze(0)[0, 1].mul_(-1)
    return x


@program((3, 1, 4))
def squeeze_view_write(x):
    x.squeeze(1)[2].zero_()
    return x


@program((4, 4))
def narrow_write(x):
    x.narrow(0, 1, 2).narrow(1, 1, 2).fill_(7.0)
    return x


@program((6, 4))
def chunk_write(x):
    chunks = x.chunk(3)
    chunks[1].mul_(0)
    return x, chunks[2]


@program((3,), (3,))
def out_variant_into_input(a, b):
    torch.mul(a, 2, out=b)
    return a + b


@program((4, 4), (4,))
def reads_between_writes(x, v):
    row = x[0]
    first = row.sum()
    row.add_(v)
    second = row.sum()
    x.mul_(2)
    return first, second, row.sum()


# --- the original value of a written input is still needed -------------------------------
# (IREE does not order such reads before writes into a tied buffer: no tie here.)


@program((64,))
def original_value_returned_after_write(x):
    old = x.clone()
    x.add_(1)
    return old


@program((64,))
def snapshot_then_zero(x):
    y = x * 1
    x.zero_()
    return y + x


@program((64,))
def shift_right_through_views(x):
    x[1:].copy_(x[:-1].clone())
    return x


@program((8, 4), (4,))
def read_row_then_overwrite_it(cache, row):
    old = cache[3] * 1
    cache[3] = row
    return old, cache.sum()


@program((64,), (64,))
def swap_through_copies(x, y):
    x.copy_(y.flip(0))
    y.copy_(x.flip(0))
    return x.sum()


@program((2,))
def constant_float_tensor_times_int(x):
    # torch-mlir folds full(3.0) * -2 wrongly when -2 stays an integer Scalar.
    t = torch.full((2,), 3.0)
    return t * -2 + x, torch.ones(2).add(5, alpha=2) - x


@program(make=lambda g: (torch.randn(4, 4, generator=g)[1:], torch.randn(4, 4, generator=g)))
def overwrite_input_that_starts_inside_its_storage(x1, x2):
    # x1 is tied and would be imported without copy, but it is not aligned like
    # IREE's buffers (this crashed IREE): it goes the copy way.
    x1[2].zero_()
    x1.copy_(x2.sum())
    return x2 + 0


@program((3, 2), (2,))
def written_intermediate_equal_to_another_output(x, row):
    # CSE merges `b` into `a`'s source; IREE 3.13 elided the copy the writes
    # need and returned `b` with them (purity-isolate-results).
    a = x * 2 + x.sum()
    a[0] = row
    a[1].fill_(7.0)
    a.index_put_((torch.tensor([2]),), torch.tensor(1.5), accumulate=True)
    b = x * 2 + x.sum()
    x.add_(1.5)
    return a, b


# --- models ------------------------------------------------------------------------------


def _adam_inputs(g):
    params = [torch.randn(4, 4, generator=g) for _ in range(3)]
    grads = [torch.randn(4, 4, generator=g) for _ in range(3)]
    return (
        params,
        grads,
        [torch.zeros(4, 4) for _ in range(3)],
        [torch.zeros(4, 4) for _ in range(3)],
        torch.tensor(0.0),
    )


@program(make=_adam_inputs)
def adam_over_parameters(params, grads, exp_avgs, exp_avg_sqs, step):
    beta1, beta2, lr, eps = 0.9, 0.999, 1e-2, 1e-8
    step.add_(1)
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        m_hat = m / (1 - beta1**step)
        v_hat = v / (1 - beta2**step)
        p.sub_(lr * m_hat / (v_hat.sqrt() + eps))
    return step


def _sgd_inputs(g):
    return (
        [torch.randn(4, 4, generator=g) for _ in range(4)],
        [torch.randn(4, 4, generator=g) for _ in range(4)],
        [torch.randn(4, 4, generator=g) for _ in range(4)],
    )


@program(make=_sgd_inputs)
def sgd_momentum_over_parameters(params, grads, momentum_buffers):
    for p, g, b in zip(params, grads, momentum_buffers):
        b.mul_(0.9).add_(g)
        p.add_(b, alpha=-0.1)


def _decode_inputs(g):
    return (
        torch.randn(16, 8, generator=g),  # key cache
        torch.randn(16, 8, generator=g),  # value cache
        torch.randn(8, generator=g),  # query
        torch.randn(8, generator=g),  # new key
        torch.randn(8, generator=g),  # new value
        torch.tensor(5),  # position
    )


@program(make=_decode_inputs)
def attention_decode_step(k_cache, v_cache, q, k, v, position):
    k_cache[5].copy_(k)
    v_cache.select(0, 5).copy_(v)
    position.add_(1)
    scores = (k_cache[:6] @ q) / 8**0.5
    weights = torch.softmax(scores, dim=0)
    return weights @ v_cache[:6]


# --- programs that crashed the process (memory-safety issue) ------------------


@program((3, 4), (3, 4))
def full_slice_copy_then_write_source(dst, src):
    # dst's final value was src's unchanged read: purity-expose-input-writes
    # kept a handle to that read after erasing it (segfault).
    dst[0:, :] = src[0:, :]
    src.add_(1)
    return src


@program(make=lambda g: (torch.zeros(5, dtype=torch.int64), torch.zeros(4)))
def arange_out(x, y):
    # arange.start_out is a dialect op: its write into `out` was dropped, then
    # the torch-backend stage segfaulted.
    torch.arange(2, 7, out=x)
    torch.arange(0.5, 2.5, 0.5, out=y)
    return x * 2, y + 1


@program((3, 3), (3, 3))
def copy_into_later_argument_from_viewed_source(src, dst):
    # src (viewed, never written) comes first: purity-functionalize built
    # dst's overwrite from src's read after erasing it (segfault).
    dst.copy_(src)
    return src.t().sum()


# --- as_strided on views: it starts where the view starts --------------------


def _arange_24(g):
    return (torch.arange(24.0).reshape(2, 3, 4),)


@program(make=_arange_24)
def as_strided_of_a_select(x):
    return torch.as_strided(x.select(1, 1), (2, 2), (12, 1))


@program(make=_arange_24)
def as_strided_of_a_narrow(x):
    return torch.as_strided(x.narrow(2, 1, 2), (2, 2), (12, 1)) * 2


@program(make=_arange_24)
def as_strided_of_a_slice_chain_written(x):
    window = torch.as_strided(x[1:][:, 1:], (2, 2), (4, 1))
    window.add_(100)
    return x.sum(0)


# --- expand outputs; writes through windows that do not overlap ---------------


@program((3, 4))
def expanded_output(x):
    return x.expand(2, 3, 4)


@program((1, 4), (3, 4))
def expand_as_and_broadcast_outputs(x, y):
    return x.expand_as(y), torch.broadcast_to(x, (2, 3, 4)), y * 2


@program((3,), (2,))
def meshgrid_outputs(x, y):
    return torch.meshgrid(x, y, indexing="ij")


@program((8,))
def write_through_unfold_windows_with_gaps(x):
    x.unfold(0, 2, 3).mul_(2)  # windows [0,1], [3,4], [6,7]
    return x.unfold(0, 3, 3).sum(1)


# --- outputs that view each other share storage, as in eager -----------------


@program((3, 2))
def outputs_viewing_one_clone(x):
    out = x.clone()
    return out[0], out[1:]


@program((4, 2))
def split_outputs_of_an_intermediate(x):
    return (x * 2).split(2)


@program((3, 2))
def intermediate_and_its_transpose(x):
    y = x + 1
    return y, y.t()


# IREE-WORKAROUND(partial-read-fusion): the view returned after a write
# through windows with gaps made IREE compute the written input only at the
# windows (found by `purity fuzz`: x's row 1 came back zero).
@program((3, 2))
def unfold_gaps_write_then_return_the_view(x):
    windows = x.unfold(0, 1, 2)
    windows.add_(1.5)
    return windows


@program((5, 4))
def unfold_gaps_write_then_compute_from_the_view(x):
    windows = x.unfold(1, 1, 3)
    windows.mul_(-2)
    return windows * 1, x.sum()



# --- reductions of a tensor whose elements are all one value -----------------
# IREE-WORKAROUND(uniform-reduction-input): IREE fused the fill into the
# reduction and summed one element (purity fuzz, case_e59b4958aba4); each
# program below gave a wrong answer without
# purity-materialize-uniform-reduction-inputs.


@program((2, 2))
def fill_then_diagonal_written_from_its_own_sum(x):
    x.fill_(3.0)
    diagonal = x.diagonal()
    diagonal.copy_(diagonal.sum())
    return diagonal * 2


@program((4, 4))
def product_of_a_scaled_filled_diagonal(x):
    x.fill_(2.0)
    return (x.diagonal() * 3).prod()


@program((3, 3), (3,))
def filled_diagonal_scanned_and_summed(x, y):
    x.fill_(0.5)
    return x.diagonal().cumsum(0), x.diagonal().sum() + y



# --- several sorts or top-ks in one program ---------------------------------
# IREE-WORKAROUND(shared-sort-destination): IREE ran two sorts of one shape
# in place in one index buffer; each program below gave a wrong answer
# without purity-separate-sort-destinations.


@program((6,))
def two_sorts_ranks(x):
    return x.argsort().argsort()


@program((5,), (5,))
def two_sorts_of_two_inputs(x, y):
    return x.sort().indices, y.sort().indices


@program((2, 5))
def two_sorts_of_one_tensor(x):
    return x.sort(1).indices, x.sort(1, descending=True).indices, x + 1


@program((7,), (7,))
def two_sorts_top_ks(x, y):
    return x.topk(3).indices, y.topk(3, largest=False).indices


@program((3, 4), dtype=torch.float64)
def two_sorts_float64_rows_and_columns(x):
    return x.sort(1), x.sort(0, descending=True)


@program(make=lambda g: (torch.randperm(1000, generator=g)[:8], torch.randperm(1000, generator=g)[:8]))
def two_sorts_of_integers(x, y):
    return x.sort().indices, y.argsort(descending=True)


E2E_NAMES = [name for name, _, _ in PROGRAMS]
