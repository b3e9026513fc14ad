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
)

from ...contract.ir import tied_result
from ...ir_helpers.functions import function_ops
from ...passes.base import ModulePass
from .linalg_builders import BARRIER

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
            ops = [op.operation for op in function.regions[0].blocks[0].operations]
            # (Found first, changed after: an op's operands change its hash and identity checks below.)
            pairs = [
                (earlier, later)
                for later_index, later in enumerate(ops)
                for earlier in _rewritable(ops, later_index, tied)
            ]
            if pairs:
                module.context.allow_unregistered_dialects = True  # (IREE's barrier)
            for earlier, later in pairs:
                _chain(earlier, later)


def _rewritable(ops: list[Operation], index: int, tied: list[BlockArgument]) -> list[Operation]:
    """[the earlier insertion that `ops[index]` should be written on top of], or []."""
    later = ops[index]
    if later.name != _INSERT or not any(later.operands[1] == argument for argument in tied):
        return []
    for earlier_index in range(index - 1, -1, -1):
        earlier = ops[earlier_index]
        if earlier.name == _INSERT and earlier.operands[1] == later.operands[1] and _same_region(earlier, later):
            users_before = all(
                any(use.owner == ops[k] for k in range(earlier_index + 1, index)) for use in earlier.results[0].uses
            )
            return [earlier] if users_before else []
    return []


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
    return Operation.create(BARRIER, results=[offset.type], operands=[offset]).results[0]
