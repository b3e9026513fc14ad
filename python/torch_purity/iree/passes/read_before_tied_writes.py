"""purity-read-before-tied-writes: what is read from a tied argument before a write into it is computed first.

Runs on linalg-on-tensors, in the iree-abi stage. An argument tied to a
result (`iree.abi.output`) is written in place: by each op that takes it,
or a value living in its buffer (a view or reshape of it, an earlier write
into it), as a destination (the `outs` of a linalg or tm_tensor op, the
destination of `tensor.insert_slice`). A value computed before such a write
from the elements the buffer held then, and used after the write, must keep
what it read. IREE 3.13 forms dispatches by fusing a producer into its
consumer, so that value is computed in the consumer's dispatch, after the
write; IREE then copies the whole argument each call to keep the elements
it reads. Measured: `cache.index_copy_(2, pos, k); q @ cache.transpose(-1, -2)`
with the tensor position checked (purity-check-indices reads the row the
write replaces before it, and writes it back after every check if one
failed): the row's gather was fused into the `where` after the checks, and
IREE copied the 8 KiB cache in and back on every call.

The pass passes each such value through `util.optimization_barrier` (an
IREE op, in generic form) right after the op computing it, replacing its
uses after the write: IREE computes it in a dispatch of its own, before the
write, and the argument is written in place. A value read from the
argument is followed through the ops computing from it (`gather -> where`),
so every value crossing the write carries what was read before it; values
the write itself reads are left to it (in its own dispatch), and so are
uses by the return or a barrier, which nothing is fused into (a barrier
before the return made IREE store a result with a transfer, which memory
imported through DLPack refuses: PERMISSION_DENIED). Values of
dynamic shape are left alone (IREE cannot resolve the dims of a barrier's
result; IREE's copy keeps them right).

IREE-WORKAROUND(fused-read-after-tied-write): remove the pass when the
`row_written_at_a_tensor_position_then_read` case of
test/e2e/test_whole_tensor_copies.py finds no copy without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    BlockArgument,
    InsertionPoint,
    Operation,
    OpResult,
    RankedTensorType,
    Value,
)

from ...contract.ir import tied_result
from ...ir_helpers.functions import function_ops, function_type
from ...ir_helpers.queries import walk
from ...passes.base import ModulePass
from .linalg_builders import BARRIER, barrier, init_operands

# Ops whose result is operand 0's buffer, whole. (A slice, `tensor.extract_slice`,
# is a read of some of its elements: IREE folds it into the dispatches using it.)
_VIEWS = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.cast", BARRIER)


# Users no producer is fused into: the return (a returned value is computed
# where its op is; a barrier there would make IREE store it with a transfer,
# which DLPack memory refuses) and a barrier.
_NOT_FUSING = ("func.return", BARRIER)


@dataclass(frozen=True)
class ReadBeforeTiedWrites(ModulePass):
    """Computes values read from a tied argument before a write into it in dispatches before that write."""

    name = "purity-read-before-tied-writes"

    def apply(self, module: Operation) -> None:
        # The barrier belongs to IREE's util dialect, unknown to torch-mlir.
        module.context.allow_unregistered_dialects = True
        for function in function_ops(module):
            block = function.regions[0].blocks[0]
            position = {op.operation: number for number, op in enumerate(block.operations)}
            # Found first, changed after: an op's hash changes with its operands.
            later_uses: dict[Value, dict[tuple[Operation, int], None]] = {}
            for index in range(len(function_type(function).inputs)):
                if tied_result(function, index) is not None:
                    _find_reads_first(block, block.arguments[index], position, later_uses)
            for value, uses in later_uses.items():
                _read_through_barrier(value, list(uses))


def _find_reads_first(block, argument: BlockArgument, position: dict, later_uses: dict) -> None:
    """Adds to `later_uses` the uses, after a write into the argument's
    buffer, of values computed before it from what the buffer held."""
    in_buffer: set[Value] = {argument}  # values living in the argument's buffer
    carried: dict[Value, None] = {}  # values computed from what the buffer held, in order
    for op in _ops_after(argument, block, position):
        if any(op.operands[d] in in_buffer for d in _destinations(op)):
            for value in carried:
                for use in _uses_after(value, position[op], position, block):
                    later_uses.setdefault(value, {})[use] = None
            in_buffer.update(op.results)
        elif op.name in _VIEWS and op.operands and op.operands[0] in in_buffer:
            in_buffer.update(op.results)
        elif _reads_any(op, in_buffer, carried):
            carried.update((result, None) for result in op.results if isinstance(result.type, RankedTensorType))


def _ops_after(argument: BlockArgument, block, position: dict) -> list[Operation]:
    """The ops of `block` using the argument, or using what such ops compute,
    in block order: the only ops that can read or write what it holds (one
    walk along uses, not a scan of the block per argument: an optimizer step
    has hundreds of tied arguments)."""
    found: set[Operation] = set()
    pending = [argument]
    while pending:
        for use in pending.pop().uses:
            op = _top_level(use.owner.operation, block)
            if op not in found:
                found.add(op)
                pending.extend(op.results)
    return sorted(found, key=position.__getitem__)


def _destinations(op: Operation) -> list[int]:
    """The operand numbers whose buffers the op's results take (in result order)."""
    if op.name == "tensor.insert_slice":
        return [1]
    return init_operands(op) or []


def _reads_any(op: Operation, in_buffer: set[Value], carried: dict[Value, None]) -> bool:
    operands = [*op.operands, *(operand for nested in walk(op) for operand in nested.operation.operands)]
    return any(operand in in_buffer or operand in carried for operand in operands)


def _uses_after(value: Value, write: int, position: dict, block) -> list[tuple[Operation, int]]:
    """The uses of `value` (user, operand number) by ops after operation
    number `write` that a producer may be fused into. None for a barrier's
    result, and for values living in an argument's buffer (a write into
    another tied argument: a barrier there would cost a copy)."""
    if not RankedTensorType(value.type).has_static_shape or value.owner.name == BARRIER:
        return []
    if isinstance(_buffer_of(value), BlockArgument):
        return []
    return [
        (use.owner.operation, use.operand_number)
        for use in value.uses
        if use.owner.name not in _NOT_FUSING and position[_top_level(use.owner.operation, block)] > write
    ]


def _read_through_barrier(value: Value, uses: list[tuple[Operation, int]]) -> None:
    """The uses read `value` through a barrier built right after its op."""
    with InsertionPoint.after(value.owner), value.owner.location:
        kept = barrier(value)
    for user, number in uses:
        user.operands[number] = kept


def _top_level(op: Operation, block) -> Operation:
    """The op of `block` that is `op` or holds it in a region."""
    while op.block != block:
        op = op.parent.operation
    return op


def _buffer_of(value: Value) -> Value:
    """The value whose buffer `value` takes: followed through views and destinations."""
    while isinstance(value, OpResult):
        op = value.owner
        if op.name in _VIEWS:
            value = op.operands[0]
            continue
        destinations = _destinations(op)
        if not destinations or value.result_number >= len(destinations):
            break
        value = op.operands[destinations[value.result_number]]
    return value
