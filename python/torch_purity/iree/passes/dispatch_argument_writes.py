"""purity-dispatch-argument-writes: slice writes into arguments become dispatches that read what they overwrite.

Runs on linalg-on-tensors. A row or slice write into an argument is a
`tensor.insert_slice` whose destination is the argument (through earlier
insertions and reshapes), or a result of control flow (`scf.while`,
`scf.if`), which is an operand's buffer when a loop runs no iteration or a
branch yields its operand. IREE writes it in place into the argument's
buffer when it can: always for an argument tied to its result
(`iree.abi.output`, a KV-cache row), and for others whose value is not used
afterwards. It does so with a transfer (a buffer copy, or a fill when the
source is a splat). IREE 3.13 runs transfers only on buffers that allow
DISCARD_WRITE access, and buffers imported through DLPack (how the runtime
hands torch's memory to IREE, on the CPU and on the GPU) allow READ|WRITE
only: the call fails with PERMISSION_DENIED (measured on a one-row KV-cache
write). A dispatch that reads its destination binds it read-write, which
such a buffer allows.

The pass rewrites each such insertion into

    %old = tensor.extract_slice %dest[...]
    %new = linalg.generic ins(%source) outs(%old) { source's bits, read against old's }
    tensor.insert_slice %new into %dest[...]

(`copy_reading_destination`). The payload yields the source exactly, yet
reads the destination. IREE fuses the generic with the insertion into one
dispatch that writes only the slice, in place: the cost stays the bytes
written (a 128k-row cache costs what a 1k-row cache does). Element types
other than integers and IEEE floats (complex) are left alone.

IREE-WORKAROUND(dlpack-discard-write): remove the pass when IREE imports
DLPack memory with DISCARD_WRITE access (the KV-cache e2e tests then pass
without it, with `hand_over == "in place"`).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import BlockArgument, DenseI32ArrayAttr, InsertionPoint, Operation, OpResult

from ...ir_helpers.functions import function_ops
from ...passes.base import ModulePass
from .linalg_builders import buffer_root, copy_reading_destination, insert_slices


@dataclass(frozen=True)
class DispatchArgumentWrites(ModulePass):
    """Turns slice writes into arguments into dispatches reading their destination (no transfers into DLPack memory)."""

    name = "purity-dispatch-argument-writes"

    def apply(self, module: Operation) -> None:
        for insert in insert_slices(function_ops(module)):
            if _may_be_argument(buffer_root(insert.operands[1])):
                _read_destination(insert)


# Control flow whose result may be an operand's buffer: a loop that runs no
# iteration returns its initial values, a branch may yield an argument.
_CONTROL_FLOW = ("scf.while", "scf.for", "scf.if")


def _may_be_argument(root) -> bool:
    return isinstance(root, BlockArgument) or (isinstance(root, OpResult) and root.owner.name in _CONTROL_FLOW)


def _read_destination(insert: Operation) -> None:
    source, destination = insert.operands[0], insert.operands[1]
    segments = list(DenseI32ArrayAttr(insert.attributes["operandSegmentSizes"]))
    with InsertionPoint(insert), insert.location:
        old = Operation.create(
            "tensor.extract_slice",
            results=[source.type],
            operands=[destination, *list(insert.operands)[2:]],
            attributes={
                "static_offsets": insert.attributes["static_offsets"],
                "static_sizes": insert.attributes["static_sizes"],
                "static_strides": insert.attributes["static_strides"],
                "operandSegmentSizes": DenseI32ArrayAttr.get([1, *segments[2:]]),
            },
        ).results[0]
        kept = copy_reading_destination(source, old)
    if kept is None:
        old.owner.erase()
        return
    insert.operands[0] = kept
