"""purity-copy-overlapping-slice-sources: a slice copied into its own tensor is copied out first.

Runs on linalg-on-tensors. `x[1:] = x[:-1].clone()` becomes, once the clone
is gone from value semantics, `tensor.insert_slice (tensor.extract_slice %x)
into %x`. IREE 3.13 writes that in place as a buffer copy between
overlapping ranges of one buffer, which its command-buffer validation
rejects (INVALID_ARGUMENT, "source and target ranges overlap within the same
buffer"; seen on the CPU and the GPU). The pass copies such a source into a
fresh tensor with a dispatch (`fresh_copy`) before it is inserted, so IREE
copies from a buffer of its own. It applies when the insertion's source and
destination live in the same buffer (`buffer_root`: through slices,
reshapes and earlier insertions). The cost is one more copy of the
slice, not of the tensor.

IREE-WORKAROUND(overlapping-buffer-copy): remove the pass when
`x[1:] = x[:-1].clone()` programs (test_programs.py) pass without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import InsertionPoint, Operation

from ...ir_helpers.functions import function_ops
from ...passes.base import ModulePass
from .linalg_builders import buffer_root, fresh_copy, insert_slices


@dataclass(frozen=True)
class CopyOverlappingSliceSources(ModulePass):
    """Copies the source of a slice insertion that reads its own destination into a fresh tensor first."""

    name = "purity-copy-overlapping-slice-sources"

    def apply(self, module: Operation) -> None:
        for insert in insert_slices(function_ops(module)):
            if buffer_root(insert.operands[0]) == buffer_root(insert.operands[1]):
                with InsertionPoint(insert), insert.location:
                    copied = fresh_copy(insert.operands[0])
                if copied is not None:
                    insert.operands[0] = copied
