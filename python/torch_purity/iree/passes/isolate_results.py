"""purity-isolate-results: a returned tensor that is also updated in place gets a buffer of its own in IREE.

Runs on linalg-on-tensors, first in the iree-abi stage. When a function returns a value
that is also the destination of an in-place update (a `tm_tensor.scatter`
from `index_put_`, a `tensor.insert_slice` from a row write, ...), value
semantics require the update to work on a copy. IREE 3.13 inserts that copy
and then elides it while keeping the export of the returned value unordered
with the update (ElideAsyncCopies + ScheduleConcurrency), so the returned
tensor shows the write. Measured: `f0 = x*2 + x.sum(); f0[0] = 2;
f2 = x*2 + x.sum(); return f0, f2` returned `f2` with row 0 written, once CSE
had merged `f2` into `f0`'s source.

The pass passes every returned value that has other uses through
`util.optimization_barrier` (an IREE op, written here in generic form since
torch-mlir's context does not register IREE's dialects); a value of dynamic
shape through a copy computed by a dispatch instead (`fresh_copy`), since
IREE cannot resolve the dims of a barrier's result ("tensor.dim unexpected
during shape cleanup"). The barrier keeps the
returned value and the update's destination apart, so IREE orders the copy
before the update. Left alone: values whose only use is the return (no
update can touch them), and results tied to an argument's buffer
(`iree.abi.output`): there IREE orders the update correctly, and a barrier
would cost a whole-tensor copy into the argument (measured on a row write
followed by a read of the cache).

IREE-WORKAROUND(elided-copy-reorder): remove the pass when test_programs.py's
`returned_value_also_written` programs pass without it on a new IREE.

Second, a computed value that a `linalg.generic` reads through an indexing
map that is not a projected permutation (so it may read only some of the
value's elements: `unfold`'s windows with gaps, `(d0 * 2 + d2, d1)`) is read
there through a barrier. IREE 3.13 fused the value's elementwise producer
into that consumer and produced the value, for its other uses too (also
uses through reshapes of it), only at the elements the consumer reads:
after a write through `x.unfold(0, 1, 2)` whose view was returned, x's row 1
came back zero. Function arguments (and values already behind a barrier)
are whole already and left alone.
IREE-WORKAROUND(partial-read-fusion): remove this half when
test_fuzz.py's `case_be6807cdfb6c` and test_programs.py's `unfold_gaps_*`
programs pass without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    AffineMapAttr,
    ArrayAttr,
    BlockArgument,
    DenseI32ArrayAttr,
    InsertionPoint,
    Operation,
    OpResult,
    RankedTensorType,
)

from ...contract.ir import tied_result
from ...ir_helpers.functions import function_ops, function_type, terminator
from ...passes.base import ModulePass
from .linalg_builders import BARRIER, barrier, buffer_root, fresh_copy


@dataclass(frozen=True)
class IsolateResults(ModulePass):
    """Passes each returned value that has other uses through util.optimization_barrier (IREE's copy elision)."""
    # (and values read through non-permutation maps that have other uses: IREE's partial fusion)

    name = "purity-isolate-results"

    def apply(self, module: Operation) -> None:
        # The barrier belongs to IREE's util dialect, unknown to torch-mlir.
        module.context.allow_unregistered_dialects = True
        for function in function_ops(module):
            _read_whole_through_barriers(function)
            _isolate(function)


def _read_whole_through_barriers(function: Operation) -> None:
    block = function.regions[0].blocks[0]
    for op in [op.operation for op in block.operations if op.operation.name == "linalg.generic"]:
        maps = ArrayAttr(op.attributes["indexing_maps"])
        inputs = DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]
        for index in range(inputs):
            value = op.operands[index]
            if AffineMapAttr(maps[index]).value.is_projected_permutation:
                continue
            if not isinstance(value.type, RankedTensorType) or not RankedTensorType(value.type).has_static_shape:
                continue
            if isinstance(buffer_root(value), BlockArgument) or (
                isinstance(value, OpResult) and value.owner.name == BARRIER
            ):
                continue  # an argument is whole already
            with InsertionPoint(op), op.location:
                op.operands[index] = barrier(value)


def _isolate(function: Operation) -> None:
    block = function.regions[0].blocks[0]
    return_op = terminator(block)
    tied = _tied_result_indices(function)
    isolated: dict[object, object] = {}
    for index, value in enumerate(list(return_op.operands)):
        if index in tied or not isinstance(value, OpResult) or value.owner.name == BARRIER:
            continue
        if all(use.owner == return_op for use in value.uses):
            continue
        if value not in isolated:
            with InsertionPoint(return_op), return_op.location:
                copy = None if RankedTensorType(value.type).has_static_shape else fresh_copy(value)
                if copy is None:
                    copy = barrier(value)
            isolated[value] = copy
        return_op.operands[index] = isolated[value]


def _tied_result_indices(function: Operation) -> set[int]:
    results = (tied_result(function, index) for index in range(len(function_type(function).inputs)))
    return {result for result in results if result is not None}
