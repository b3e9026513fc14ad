"""purity-tie-written-inputs: IREE's tie policy, where a written argument's final value may be stored in place.

Runs on value-boundary Torch IR (after purity-expose-input-writes), because
the rule reasons about Torch ops. A result with `purity.written_input = i`
is the final value of argument `i`; this pass gives the argument
`iree.abi.output = <result index> : index`, so IREE stores the result in the
argument's buffer and a write through a view (a `tensor.insert_slice` after
lowering) is done in place instead of copying the whole tensor. Only where
that is safe:

IREE-WORKAROUND(tied-argument-read-order): IREE 3.13 does not order other
reads of an argument before writes into its tied buffer (measured:
`old = x.clone(); x.add_(1); return old` returned the new values; an
overlapping `x[1:].copy_(x[:-1].clone())` failed at run time). So the tie is
added only where no read of the original value can come after a write into
the buffer:
- the original value is the base of one write, a `select_scatter` /
  `slice_scatter` / `index_put` (a row, slice or the elements at some
  indices written into it) or a `scatter_add` (with `index_put(accumulate=
  True)`, from `index_add_`: the scatter reads each element it adds to in
  the op that writes it; `index_add_` of 2 rows into 1 MiB: 337 µs with the
  copy, 16 µs tied), or a read marked `purity.guard_read`
  (purity-check-indices: the region the write replaces), and has no other
  use (a second scatter on it is out of place, `y = x.slice_scatter(v)`
  beside `x[5] = 7`: a read of all of x);
- or its elements are not read at all (`x.copy_(y)`, `x.fill_(v)`: only its
  sizes are);
  (in these two rules and the region rule below, a reshape of the argument,
  `view`, `reshape`, `flatten`, `unsqueeze` and the like with static sizes,
  is the argument: its uses count in its place, `x.view(-1)[5:10].mul_(2)`;
  ops whose values reach nothing, or only outputs viewing an input, which
  purity-elide-input-view-results leaves uncomputed, are no uses)
- or the update is pointwise (an optimizer step, `x.mul_(a).add_(g)`): every
  op from the argument to its final value is in `ops.POINTWISE_OPS` with the
  shape of the value it updates, writes a region into it (`select_scatter`
  and the like with it as the base: every other element stays where it
  was), or keeps every element's position (a reshape of static sizes, an
  identity permute: `x[mask] = 0` is traced as `where` over the flattened
  input; 1 MiB: 524 µs with the copy, 112 µs tied), and every read of the
  argument's original elements (through such reshapes too) leads to the
  final value, so each element is read before, or in the same dispatch as,
  the write of that element;
- or one region is updated pointwise (`x[:10].add_(1)`, `cache[pos].mul_(a)`):
  the argument is written once (a `slice_scatter` / `select_scatter`), its
  other element reads are `slice` / `select` of that same region (same dim,
  bounds, position value) whose values reach the written value through
  pointwise ops of the region's shape only (as above: `x[3, 4] = v` writes
  an element into row 3 and row 3 back), or guard reads. The write needs
  every read first, and each element is read before, or in the same
  dispatch as, its write. Before this rule such an update came back as a
  whole new tensor that the runtime copied into the argument (`x[:10].add_(1)`
  on a 32 MiB tensor: 23.8 ms, 11 µs tied).
A value written into two arguments is never tied (beyond IREE's aliasing).
IREE-WORKAROUND(scalar-tie-transfer): a rank-0 argument is never tied. IREE
3.13 stores a tied 0-d result (an optimizer's step counter, `step_t += 1`)
into the argument with a transfer (`stream.async.update`), which the
caller's memory imported through DLPack refuses, so the whole entry fell back
to host copies (the compiled Adam step: 25 inputs copied each call). Its
4 bytes come back in a buffer of their own instead. When it can go: tie
rank-0 arguments again and `test_training.py`'s optimizer tests still find
their entry `hand_over == "in place"`.
Otherwise the final value comes back in a buffer of its own and the runtime
copies it. When it can go: `test/e2e/test_programs.py`'s `clone_then_write`
style programs pass with every written argument tied.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import Operation, OpResult

from ... import contract
from ...contract.ir import tie_attr, written_input
from ...ir_helpers.functions import function_ops, result_attr, set_arg_attrs, terminator
from ...ir_helpers.torch_values import NotConstant, constant_of, same_values, sizes_of, static_sizes
from ...ops import POINTWISE_OPS
from ...passes.base import ModulePass


@dataclass(frozen=True)
class TieWrittenInputs(ModulePass):
    """Ties each written argument to its final value (iree.abi.output) where IREE keeps reads before the write."""

    name = "purity-tie-written-inputs"

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            _tie(function)


def _tie(function: Operation) -> None:
    block = function.regions[0].blocks[0]
    return_op = terminator(block)
    final_values: dict[int, tuple[int, object]] = {}  # argument -> (result index, final value)
    for index, value in enumerate(return_op.operands):
        written = written_input(function, index)
        if written is not None:
            final_values[written] = (index, value)
    # Outputs that view an input: purity-elide-input-view-results returns an
    # empty tensor there (the runtime makes the view), so nothing computes them.
    unread = frozenset(
        index
        for index in range(len(return_op.operands))
        if result_attr(function, index, contract.ALIASES_INPUT) is not None
    )
    unused = _unused_ops(block, unread)
    for argument_index, (result_index, final) in final_values.items():
        argument = block.arguments[argument_index]
        uses = _element_uses(argument, unused)
        shared = sum(1 for _, other in final_values.values() if other == final) > 1
        if static_sizes(argument.type) == []:
            continue  # IREE-WORKAROUND(scalar-tie-transfer), in the docstring
        if not shared and (
            _only_written_into(uses)
            or not uses  # elements never read (`x.copy_(y)`): only sizes are
            or _updated_pointwise(argument, final)
            or _region_updated_pointwise(uses)
        ):
            set_arg_attrs(function, argument_index, {contract.IREE_OUTPUT: tie_attr(result_index)})


# Ops writing into their operand 0 only where they write (scatter_add: adds
# its source at the indices, reading each element in the op that writes it).
_IN_PLACE_BASES = ("torch.aten.select_scatter", "torch.aten.slice_scatter", "torch.aten.scatter_add")
# index_put(self, indices, values, accumulate): with accumulate false, it
# replaces the elements at `indices` (a static-cache write at a tensor
# position); with accumulate true (`index_add_`), it adds to them, reading
# each in the op that writes it (IREE's scatter updates its destination in
# place, one index after the other).
_INDEX_PUTS = ("torch.aten.index_put", "torch.aten.index_put.hacked_twin", "torch.aten._index_put_impl")
# Reads of an argument's sizes (a dynamic dim's value) or of its sizes and
# dtype only (`full_like(x, 0.1)`: a foreach `lerp_` is traced as
# `addcmul(x, full_like(g - x, w), g - x)`), not of its elements.
_SIZE_READS = (
    "torch.aten.size.int",
    "torch.aten.size",
    "torch.aten.dim",
    "torch.aten.numel",
    "torch.aten.full_like",
    "torch.aten.zeros_like",
    "torch.aten.ones_like",
    "torch.aten.empty_like",
)


def _only_written_into(element_uses: list) -> bool:
    """The argument's original value is used as the base one region is
    written into, and otherwise only by guard reads of that region: nothing
    reads it after its tied buffer starts changing."""
    writes = [use for use in element_uses if use.operand_number == 0 and _writes_region_of_base(use.owner)]
    return _one_region_written([use.owner for use in writes]) and all(
        use in writes or contract.GUARD_READ in use.owner.attributes for use in element_uses
    )


def _one_region_written(writes: list) -> bool:
    """One write; or several replacing the same region (`y = x.index_put(i, a)`
    beside `x.index_put_(i, b)`; purity-check-indices made this too, before
    it restored guarded regions over the program's own write): each gives
    the original outside that region and its own values inside, whichever
    runs first in place. Not a
    scatter into another region (`y = x.slice_scatter(v)` beside `x[5] = 7`:
    out of place, a read of all of x), nor two accumulating writes (one
    would add to what the other added in place)."""
    if len(writes) <= 1:
        return len(writes) == 1
    first = writes[0]
    region = list(first.operands)[1:2] if first.name in _INDEX_PUTS else list(first.operands)[2:]
    return all(
        write.name == first.name
        and not _accumulates(write)
        and same_values(list(write.operands)[1:2] if write.name in _INDEX_PUTS else list(write.operands)[2:], region)
        for write in writes
    )


def _accumulates(write) -> bool:
    if write.name == "torch.aten.scatter_add":
        return True
    return write.name in _INDEX_PUTS and constant_of(write.operands[3]) is True


# A region's read -> the write of that kind of region. The read's operands
# after its base name the region as the write's do after its base and source.
_REGION_READS = {
    "torch.aten.slice.Tensor": "torch.aten.slice_scatter",
    "torch.aten.select.int": "torch.aten.select_scatter",
}


def _region_updated_pointwise(uses: list) -> bool:
    """The argument is written once, into one region (a slice or a row), with
    a value computed from that same region through pointwise ops of its
    shape (`x[:10].add_(1)`, `cache[pos].mul_(0.5)`), and otherwise only
    written into as `_only_written_into` allows: each element of the region
    is read before, or in the same dispatch as, its write, and the write
    needs every read of the region first."""
    writes = [use.owner for use in uses if use.operand_number == 0 and _writes_region_of_base(use.owner)]
    reads = [use.owner for use in uses if use.operand_number == 0 and use.owner.name in _REGION_READS]
    if len(writes) != 1 or not reads:
        return False
    (write,) = writes
    others = [use for use in uses if use.owner != write and use.owner not in reads]
    if any(contract.GUARD_READ not in use.owner.attributes for use in others):
        return False
    return all(
        _REGION_READS[read.name] == write.name
        and str(read.operands[0].type) == str(write.operands[0].type)  # the same reshape of the argument
        and same_values(list(read.operands)[1:], list(write.operands)[2:])
        and _updated_pointwise(read.results[0], write.operands[1])
        for read in reads
    )


def _unused_ops(block, unread_results: frozenset[int]) -> set[object]:
    """The ops of `block` whose results reach nothing but outputs in
    `unread_results`: value-semantic ops nothing needs, which the backend
    erases (purity-check-indices leaves the unguarded write it rebuilt
    guarded; values feeding only outputs that view an input). One
    backwards walk: every user of an op comes after it."""
    unused: set[object] = set()
    for op in reversed([op.operation for op in block.operations]):
        if not op.results or len(op.regions) > 0:
            continue
        if all(
            use.operand_number in unread_results if use.owner.name == "func.return" else use.owner.operation in unused
            for result in op.results
            for use in result.uses
        ):
            unused.add(op)
    return unused


# Reshapes of a value keep its elements in their order (row-major), so IREE
# keeps a reshaped argument in the argument's buffer: their uses count as the
# argument's (`x.view(-1)[5:10].mul_(2)` reads and writes a region of x).
_RESHAPES = (
    "torch.aten.view",
    "torch.aten.reshape",
    "torch.aten._unsafe_view",
    "torch.aten.flatten.using_ints",
    "torch.aten.unflatten.int",
    "torch.aten.unsqueeze",
    "torch.aten.squeeze.dim",
    "torch.aten.squeeze",
)


def _element_uses(argument, unused: set[object]) -> list:
    """The uses of the argument that read its elements, through reshapes of
    static sizes (their uses in their place); reads of sizes, and the
    `unused` ops (`_unused_ops`), left out."""
    found, pending = [], [argument]
    while pending:
        value = pending.pop()
        for use in value.uses:
            user = use.owner
            if _reads_sizes_only(user) or user.operation in unused:
                continue
            if user.name in _RESHAPES and use.operand_number == 0 and static_sizes(user.results[0].type) is not None:
                pending.append(user.results[0])
                continue
            found.append(use)
    return found


def _writes_region_of_base(user) -> bool:
    if user.name in _IN_PLACE_BASES:
        return True
    if user.name not in _INDEX_PUTS:
        return False
    try:
        return constant_of(user.operands[3]) in (False, True)
    except NotConstant:
        return False


def _reads_sizes_only(user) -> bool:
    """A read of sizes: `aten.size`, or a view whose only use is as the
    destination of a value-semantic `aten.copy` (the sizes it broadcasts to;
    static sizes fold it away, dynamic ones leave it in the IR)."""
    if user.name in _SIZE_READS:
        return True
    if user.name not in ("torch.aten.select.int", "torch.aten.slice.Tensor"):
        return False
    uses = list(user.results[0].uses)
    return bool(uses) and all(use.owner.name == "torch.aten.copy" and use.operand_number == 0 for use in uses)


def _updated_pointwise(argument, final) -> bool:
    """The argument's final value comes from it through pointwise ops (of
    the shape of what they update), reshapes of static sizes and identity
    permutes only, and each read of its original elements feeds that final
    value: every element of the final value is computed from the element at
    the same position, read before or in the dispatch that writes it."""
    if not isinstance(final, OpResult):
        return False
    # Dynamic dims (-1) compare equal: every value the final one is computed
    # from through pointwise ops has the argument's sizes, since a pointwise
    # result is at least as large as each operand and the final value is the
    # argument's.
    shape = sizes_of(argument.type)
    if shape is None:
        return False
    feeding_final = _producers(final)
    # (value, its sizes, whether it is the original elements: the argument or a reshape of it)
    pending, seen = [(argument, shape, True)], set()
    while pending:
        value, value_shape, original = pending.pop()
        for use in value.uses:
            user = use.owner
            if user.name in _SIZE_READS:
                continue
            if user.name == "func.return":
                if original:
                    return False  # the original value is returned as it was
                continue
            # A region written into the value keeps each other element where it was.
            pointwise = user.name in POINTWISE_OPS or (use.operand_number == 0 and _writes_region_of_base(user))
            reshaped = use.operand_number == 0 and _keeps_positions(user)
            result_shape = sizes_of(user.results[0].type) if user.results else None
            if not (pointwise and result_shape == value_shape) and not reshaped:
                if original or user.operation in feeding_final:
                    return False
                continue  # reads a derived value: in its own buffer, or the final value once written
            key = user.operation
            if key not in feeding_final:
                if original:
                    return False  # a read of the original that the final value does not wait for
                continue
            if key not in seen:
                seen.add(key)
                pending.append((user.results[0], result_shape, original and reshaped))
    return True


def _keeps_positions(op) -> bool:
    """A reshape of static sizes, or a permute that keeps every dim in place
    (`x[mask] = v` is traced through `permute(x, [0, 1])`): each element stays
    at its position in row-major order."""
    if op.name == "torch.aten.permute":
        try:
            dims = constant_of(op.operands[1])
        except NotConstant:
            return False
        return dims == list(range(len(dims)))
    return (
        op.name in _RESHAPES
        and static_sizes(op.operands[0].type) is not None
        and static_sizes(op.results[0].type) is not None
    )


def _producers(value) -> set[object]:
    """The ops `value` is computed from, its own included."""
    keys, pending = set(), [value]
    while pending:
        current = pending.pop()
        if not isinstance(current, OpResult):
            continue
        op = current.owner.operation
        if op in keys:
            continue
        keys.add(op)
        pending.extend(op.operands)
    return keys
