"""purity-separate-sort-destinations: every sort gets destination tensors of its own.

Runs on linalg-on-tensors, in the iree-abi stage. torch-mlir lowers `sort`
and `topk` (a sort, then a slice) to `tm_tensor.sort`, which updates its
`outs` operands in place: the values to sort and an iota of indices (a
`linalg.generic` without inputs). Two sorts of tensors of one shape then
start from one iota (torch-mlir's
CSE, or IREE's, merges the identical generics), and IREE 3.13 runs both
in place in that one buffer without the copy value semantics need: the
second sort starts from the first one's permutation, or from zeros.
Measured: `x.argsort().argsort()` (ranks) returned `arange(n)`;
`(x.sort().indices, y.sort().indices)` gave the second as all zeros;
`(x.topk(2).indices, y.topk(2).indices)` gave the second wrong.

The pass gives each sort operand that is made by an op without inputs (the
iota, a fill), or that other ops use too, a copy of its own
(`distinct_copy`: a dispatch that neither folding nor CSE removes, tagged
per copy). A `util.optimization_barrier` instead does not help (IREE still
places both sorts in one buffer), nor does an identity copy (folded away),
nor a distinct attribute on a cloned iota (IREE merges identical dispatches
without operands). Left alone: a computed value that only its sort uses.
The cost is one more pass over each copied operand.

IREE-WORKAROUND(shared-sort-destination): remove the pass when
test_programs.py's `two_sorts_*` programs pass without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import DenseI32ArrayAttr, InsertionPoint, Operation, OpResult

from ...ir_helpers.functions import function_ops
from ...passes.base import ModulePass
from .linalg_builders import distinct_copy

SORT = "tm_tensor.sort"
_PRODUCERS_WITHOUT_INPUTS = ("linalg.generic", "linalg.fill")


@dataclass(frozen=True)
class SeparateSortDestinations(ModulePass):
    """Gives each tm_tensor.sort operand that is shared, or made without inputs, a copy of its own."""

    name = "purity-separate-sort-destinations"

    def apply(self, module: Operation) -> None:
        sorts = [op for function in function_ops(module) for op in _nested_ops(function) if op.name == SORT]
        tag = 0
        for op in sorts:
            for index in range(len(op.operands)):  # a sort's operands are all `outs`
                value = op.operands[index]
                if not _shared(value, op):
                    continue
                with InsertionPoint(op), op.location:
                    copy = distinct_copy(value, tag)
                tag += 1
                if copy is not None:
                    op.operands[index] = copy


def _nested_ops(op: Operation):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from _nested_ops(child.operation)


def _shared(value, consumer: Operation) -> bool:
    """Whether IREE may place `value` in a buffer another op uses too: made
    without inputs (CSE merges such producers), or used elsewhere."""
    if isinstance(value, OpResult) and value.owner.name in _PRODUCERS_WITHOUT_INPUTS:
        owner = value.owner
        if owner.name == "linalg.fill" or list(DenseI32ArrayAttr(owner.attributes["operandSegmentSizes"]))[0] == 0:
            return True
    return any(use.owner != consumer for use in value.uses)
