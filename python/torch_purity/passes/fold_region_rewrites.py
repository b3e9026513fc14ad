"""purity-fold-region-rewrites: a region read right after it was written is the written value.

Runs on functional Torch IR, after purity-functionalize. Functionalizing
in-place ops chained on a view (`cache[pos].mul_(a).sub_(b)`, `x[:4].add_(1)
.clamp_(0, 1)`) writes the view's region back into its base after every op
and reads it again for the next one:

    %w1 = select_scatter %x, %a, dim, pos
    %r  = select.int %w1, dim, pos           // what was just written: %a
    %w2 = select_scatter %w1, %b(%r), dim, pos

The pass folds the read of a region just written (same kind of region, same
dim, bounds and position: equal constants or the same SSA value) into the
written value, and a write over a region just written into a write into
the first write's base, erasing the first write when nothing else uses it.
The example becomes one read of the region and one write of it: IREE then
writes the row in place (purity-tie-written-inputs's region rule), where
the chain made it keep the intermediate base, a copy of the whole input.
Measured on a 4096×64 cache, `cache[pos].mul_(row).sub_(0.5)`: IREE
allocated and copied 1 MiB per call before.

Both folds are exact (value semantics): a `slice` of a `slice_scatter` with
the same arguments is its source, of the same type; a second write of the
same region leaves nothing of the first. Only `select`/`select_scatter`
and `slice`/`slice_scatter` pairs are folded.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import Operation, OpResult

from ..ir_helpers.functions import function_ops
from ..ir_helpers.torch_values import same_values
from .base import ModulePass

# The read of a region -> the write of that kind of region. A read's operands
# after its base (dim, position or bounds) match a write's after its base and
# source.
_WRITE_OF_READ = {
    "torch.aten.select.int": "torch.aten.select_scatter",
    "torch.aten.slice.Tensor": "torch.aten.slice_scatter",
}
_WRITES = frozenset(_WRITE_OF_READ.values())


@dataclass(frozen=True)
class FoldRegionRewrites(ModulePass):
    """Folds a read of a region just written into the written value, and a rewrite of it into one write."""

    name = "purity-fold-region-rewrites"

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            for region in function.regions:
                for block in region.blocks:
                    _fold_block(block)


def _fold_block(block) -> None:
    for op in [op.operation for op in block.operations]:
        for region in op.regions:
            for nested in region.blocks:
                _fold_block(nested)
        write = _same_region_write(op)
        if write is None:
            continue
        if op.name in _WRITES:
            op.operands[0] = write.operands[0]  # the region written before is overwritten whole
        else:
            op.results[0].replace_all_uses_with(write.operands[1])
            op.erase()
        if not any(True for result in write.results for _ in result.uses):
            write.erase()


def _same_region_write(op: Operation) -> Operation | None:
    """The write of the same region that produced `op`'s base, for a region
    read or write `op`; None otherwise."""
    kind = _WRITE_OF_READ.get(op.name, op.name if op.name in _WRITES else None)
    base = op.operands[0] if kind is not None else None
    if not isinstance(base, OpResult) or base.owner.name != kind:
        return None
    write = base.owner.operation
    if op.name in _WRITES:
        if not same_values(list(op.operands)[2:], list(write.operands)[2:]):
            return None
    elif not same_values(list(op.operands)[1:], list(write.operands)[2:]) or str(op.results[0].type) != str(
        write.operands[1].type
    ):
        return None
    return write
