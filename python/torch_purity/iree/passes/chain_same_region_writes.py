"""purity-chain-same-region-writes: a second write of one region of a tied argument goes on top of the first.

Runs on linalg-on-tensors, first in the iree-abi stage. purity-check-indices
restores a region the program wrote (`cache[pos] = row`) after every index
check, on top of the program's own write: `where(ok, now, before)` written
into the written tensor at the same place. Both writes lower to
`tensor.insert_slice` at the same offsets, and MLIR's insert-after-insert
fold (in torch-mlir's canonicalizer here, in IREE's again later) makes the
second write into the first one's destination: the argument's original
value. The argument is then the base of two writes, the program's (which
the program reads: attention over the cache) and the restore (the final
value, tied to the argument), and IREE copies the whole argument on every
call to keep both. Measured: a 4096×64 cache written at an int position
and read after, beside an embedding lookup's check: a 1 MiB allocation and
copy per call (`scheduled_buffers`). A write at a tensor position is a
scatter, which nothing folds, and was not copied.

For a `tensor.insert_slice` into a tied argument that writes the same
region (same offsets, sizes and strides) as an earlier insertion into that
argument, the pass makes the earlier insertion's result its destination,
the unfolded form (equal in value: the second write replaces every element
of the first). Its first offset passes through `util.optimization_barrier`
(an IREE op, in generic form; a constant offset is made a value first), so
IREE's canonicalizer cannot fold the two together again. Left alone: the
earlier write's value used after the second write (writing it in place
would then clobber what is still read; the fold's form, with IREE's copy,
keeps it right), and insertions nested in control flow.

IREE-WORKAROUND(folded-region-restore): the fold is MLIR's and correct;
what IREE lacks is writing two versions of one argument without a copy.
Remove the pass when the `row_at_an_int_position_read_beside_a_check`
case of test/e2e/test_whole_tensor_copies.py finds no copy without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    BlockArgument,
    DenseI32ArrayAttr,
    DenseI64ArrayAttr,
    IndexType,
    InsertionPoint,
    IntegerAttr,
    Operation,
    ShapedType,
    Value,
)

from ...contract.ir import tied_result
from ...ir_helpers.functions import function_ops
from ...passes.base import ModulePass
from .linalg_builders import barrier

_INSERT = "tensor.insert_slice"


@dataclass(frozen=True)
class ChainSameRegionWrites(ModulePass):
    """Puts a second write of one region of a tied argument on top of the first (a fold put both on the argument)."""

    name = "purity-chain-same-region-writes"

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            tied = [
                argument
                for argument in function.regions[0].blocks[0].arguments
                if tied_result(function, argument.arg_number) is not None
            ]
            if not tied:
                continue
            # (Found first, changed after: an op's operands change its hash and identity checks below.)
            pairs = _rewritable(function.regions[0].blocks[0], tied)
            for earlier, later in pairs:
                _chain(earlier, later)


def _rewritable(block, tied: list[BlockArgument]) -> list[tuple[Operation, Operation]]:
    """(earlier, later) insertions into a tied argument of one region, the
    later to be written on top of the earlier: the nearest earlier insertion
    of that region into that argument, whose every user comes before the
    later one. One pass over the block: a program may write hundreds of
    tied arguments."""
    ops = [op.operation for op in block.operations]
    position = {op: number for number, op in enumerate(ops)}
    inserts: dict[Value, list[Operation]] = {}  # destination -> insertions into it, in order
    pairs = []
    for number, later in enumerate(ops):
        if later.name != _INSERT:
            continue
        destination = later.operands[1]
        earlier_ones = inserts.setdefault(destination, [])
        if any(destination == argument for argument in tied):
            earlier = next((op for op in reversed(earlier_ones) if _same_region(op, later)), None)
            if earlier is not None and all(
                position[earlier] < position.get(use.owner.operation, -1) < number for use in earlier.results[0].uses
            ):
                pairs.append((earlier, later))
        earlier_ones.append(later)
    return pairs


def _same_region(first: Operation, second: Operation) -> bool:
    attributes = ("static_offsets", "static_sizes", "static_strides")
    if any(str(first.attributes[name]) != str(second.attributes[name]) for name in attributes):
        return False
    first_positions, second_positions = list(first.operands)[2:], list(second.operands)[2:]
    return len(first_positions) == len(second_positions) and all(
        a == b for a, b in zip(first_positions, second_positions, strict=True)
    )


def _chain(earlier: Operation, later: Operation) -> None:
    offsets = list(DenseI64ArrayAttr(later.attributes["static_offsets"]))
    segments = list(DenseI32ArrayAttr(later.attributes["operandSegmentSizes"]))
    dynamic = ShapedType.get_dynamic_size()
    with InsertionPoint(later), later.location:
        if offsets[0] == dynamic:  # the first offset is operand 2
            later.operands[2] = _opaque(later.operands[2])
            later.operands[1] = earlier.results[0]
            return
        index = IndexType.get()
        constant = Operation.create(
            "arith.constant", results=[index], attributes={"value": IntegerAttr.get(index, offsets[0])}
        )
        operands = list(later.operands)
        rebuilt = Operation.create(
            _INSERT,
            results=[later.results[0].type],
            operands=[operands[0], earlier.results[0], _opaque(constant.results[0]), *operands[2:]],
            attributes={
                "static_offsets": DenseI64ArrayAttr.get([dynamic, *offsets[1:]]),
                "static_sizes": later.attributes["static_sizes"],
                "static_strides": later.attributes["static_strides"],
                "operandSegmentSizes": DenseI32ArrayAttr.get([1, 1, segments[2] + 1, *segments[3:]]),
            },
        )
    later.results[0].replace_all_uses_with(rebuilt.results[0])
    later.erase()


def _opaque(offset):
    """`offset` as a value no fold can see through."""
    return barrier(offset)
