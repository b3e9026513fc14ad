"""purity-synthesize-bases: inputs that overlap in memory become views of one synthetic base.

The importer records, per tensor argument, `purity.storage_group`,
`purity.sizes`, `purity.strides` and `purity.storage_offset`. Arguments of one
storage group whose elements overlap (the same tensor passed twice, a tensor
and one of its rows, overlapping slices, a tensor and its transpose), where
the data of at least one of them is written, are merged: a new
argument, the synthetic base, is a 1-d `!torch.tensor` over the storage from
its first element to the last element any member reaches, and each member's
uses are replaced by a view of the base (marked `purity.regenerates_input =
<member>`): a contiguous member is a slice of the base reshaped (lowering to
extract/insert_slice), a permuted one (a transpose) that slice permuted, any
other `torch.aten.as_strided(base, sizes, strides, offset)` (lowering to
gathers). purity-functionalize then sees
one root: a write through any member is seen through the others, and the base
is overwritten once at the edge.

Members that do not overlap (`x[0:2]` and `x[2:4]`, interleaved columns) are
not merged: no synthetic base where none is needed. Read-only overlap is left
alone too. But a written argument of the storage group inside a base's span
(from element 0 to the last element its members reach) joins that base even
when it overlaps no member: the base is written back whole, which would
otherwise undo that argument's own write.

Attributes for the runtime: the base argument (appended after the others)
carries `purity.synthetic_base_of = array<i64: members>` and its size; each
member keeps its argument, now unused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir.dialects.torch import AtenAsStridedOp, AtenPermuteOp, AtenSliceTensorOp, AtenViewOp
from torch_mlir.ir import (
    DenseI64ArrayAttr,
    FunctionType,
    InsertionPoint,
    IntegerAttr,
    Location,
    Operation,
    StringAttr,
    Type,
    TypeAttr,
)

from .. import contract
from .. import ops as op_catalog
from ..contract.ir import input_layout
from ..ir_helpers.functions import arg_attr, function_ops, i64_attr, set_arg_attrs
from ..ir_helpers.queries import aten_name
from ..ir_helpers.torch_values import int_constant, int_list_constant
from ..ir_helpers.types import element_type_text
from ..layout import Layout, inverse_permutation, overlap
from .base import LocatedPassError, ModulePass


@dataclass(frozen=True)
class SynthesizeBases(ModulePass):
    """Merges overlapping arguments, one of them written, into one synthetic base that regenerates each as a view."""

    name = "purity-synthesize-bases"

    def apply(self, module: Operation) -> None:
        self.for_each(function_ops(module), _synthesize)


def _written_arguments(block) -> set[int]:
    """Arguments whose data is written, through any chain of views or in-place
    results. (A metadata mutation alone changes one tensor's view of the
    storage, not what the others see: it needs no base.)"""
    aliases: dict[object, int] = {arg: arg.arg_number for arg in block.arguments}
    written: set[int] = set()
    for op in block.operations:
        op = op.operation
        name = aten_name(op)
        if not len(op.operands) or op.operands[0] not in aliases:
            if name == "torch.overwrite.tensor.contents" and len(op.operands) == 2 and op.operands[1] in aliases:
                written.add(aliases[op.operands[1]])
            continue
        source = aliases[op.operands[0]]
        if op_catalog.is_in_place(name):
            written.add(source)
        if (
            name in op_catalog.VIEW_OPS
            or name in op_catalog.MULTI_OUTPUT_VIEWS
            or name == "torch.prim.ListUnpack"
            or op_catalog.is_in_place(name)
            or name in op_catalog.METADATA_MUTATIONS
        ):
            for result in op.results:
                aliases[result] = source
    return written


def _groups_to_merge(function: Operation) -> list[list[int]]:
    block = function.regions[0].blocks[0]
    by_storage: dict[int, list[int]] = {}
    for argument in block.arguments:
        group = arg_attr(function, argument.arg_number, contract.STORAGE_GROUP)
        if group is not None and input_layout(function, argument.arg_number) is not None:
            by_storage.setdefault(IntegerAttr(group).value, []).append(argument.arg_number)
    shared = [members for members in by_storage.values() if len(members) > 1]
    if not shared:
        return []
    written = _written_arguments(block)
    merged: list[list[int]] = []
    for members in shared:
        parent = {m: m for m in members}

        def find(m: int, parent: dict[int, int] = parent) -> int:
            while parent[m] != m:
                m = parent[m]
            return m

        layouts = {m: input_layout(function, m) for m in members}
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                if overlap(layouts[a], layouts[b]):
                    parent[find(a)] = find(b)
        components: dict[int, list[int]] = {}
        for m in members:
            components.setdefault(find(m), []).append(m)
        bases = [c for c in components.values() if len(c) > 1 and any(m in written for m in c)]
        merged.extend(_close_over_base_span(bases, [m for m in members if m in written], layouts))
    return merged


def _close_over_base_span(bases: list[list[int]], written: list[int], layouts: dict) -> list[list[int]]:
    """A base spans the storage from element 0 to its members' last element,
    and is written back whole: a written argument of the same storage inside
    that span (`b[:1]` beside a base of `b[1:]` and its `as_strided` view)
    joins it, else the base's write-back would undo that argument's own
    write. (An argument only read there keeps its own: the write-back leaves
    its elements as they were.)"""
    bases = [list(b) for b in bases]
    changed = True
    while changed:
        changed = False
        for base in bases:
            length = max(layouts[m].extent()[1] for m in base)
            for m in written:
                low, high = layouts[m].extent()
                if m in base or low == high or low >= length:
                    continue
                other = next((b for b in bases if m in b), None)
                if other is not None:
                    base.extend(other)
                    bases.remove(other)
                else:
                    base.append(m)
                changed = True
                break
            if changed:
                break
    return [sorted(b) for b in bases]


def _synthesize(function: Operation) -> None:
    groups = _groups_to_merge(function)
    if not groups:
        return
    block = function.regions[0].blocks[0]
    first_op = block.operations[0]
    context = function.context
    for members in groups:
        elements = {element_type_text(block.arguments[m].type) for m in members}
        if len(elements) != 1:
            raise LocatedPassError(
                function.location,
                f"inputs {members} share storage with different dtypes ({', '.join(sorted(elements))})",
            )
        length = max(input_layout(function, m).extent()[1] for m in members)
        base_type = Type.parse(f"!torch.tensor<[{length}],{elements.pop()}>", context)
        base = block.add_argument(base_type, Location.unknown(context))
        base_index = base.arg_number
        function.attributes["function_type"] = TypeAttr.get(
            FunctionType.get(
                [a.type for a in block.arguments],
                FunctionType(TypeAttr(function.attributes["function_type"]).value).results,
                context=context,
            )
        )
        set_arg_attrs(
            function,
            base_index,
            {
                contract.INPUT_NAME: StringAttr.get("synthetic-base:" + ",".join(str(m) for m in members), context),
                contract.SIZES: DenseI64ArrayAttr.get([length], context),
                contract.STRIDES: DenseI64ArrayAttr.get([1], context),
                contract.STORAGE_OFFSET: i64_attr(0),
                contract.SYNTHETIC_BASE_OF: DenseI64ArrayAttr.get(members, context),
            },
        )
        for member in members:
            argument = block.arguments[member]
            layout = input_layout(function, member)
            with InsertionPoint(first_op), Location.unknown(context):
                view = _regenerate(base, layout, argument.type, base_type)
            view.attributes[contract.REGENERATES_INPUT] = i64_attr(member)
            argument.replace_all_uses_with(view.result)


def _regenerate(base, layout: Layout, member_type: Type, base_type: Type) -> Operation:
    """The member as a view of the base: a slice reshaped when the member is
    contiguous (lowers to insert_slice / extract_slice), as_strided otherwise."""
    count = int(np.prod(layout.sizes, dtype=np.int64))
    # A member that is a permutation of a contiguous block (a transpose) is a
    # slice, reshaped, then permuted: no as_strided, whose gathers IREE 3.13
    # miscompiled in fuzzed programs (IREE-WORKAROUND(gather-after-scatter);
    # also cheaper, so this would stay).
    order = sorted(range(len(layout.sizes)), key=lambda d: (-layout.strides[d], d))
    sizes = tuple(layout.sizes[d] for d in order)
    strides = tuple(layout.strides[d] for d in order)
    if Layout(sizes, strides, 0).is_contiguous_from_start():
        element = element_type_text(base_type)
        context = base_type.context
        piece = AtenSliceTensorOp(
            Type.parse(f"!torch.tensor<[{count}],{element}>", context),
            base,
            int_constant(0),
            int_constant(layout.offset),
            int_constant(layout.offset + count),
            int_constant(1),
        ).result
        if list(order) == list(range(len(order))):
            return AtenViewOp(member_type, piece, int_list_constant(list(layout.sizes))).operation
        block_type = Type.parse(f"!torch.tensor<[{','.join(str(d) for d in sizes)}],{element}>", context)
        block = AtenViewOp(block_type, piece, int_list_constant(list(sizes))).result
        inverse = inverse_permutation(order)
        return AtenPermuteOp(member_type, block, int_list_constant(inverse)).operation
    return AtenAsStridedOp(
        member_type,
        base,
        int_list_constant(list(layout.sizes)),
        int_list_constant(list(layout.strides)),
        int_constant(layout.offset),
    ).operation
