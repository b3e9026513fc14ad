"""purity-decompose-strided: as_strided, as_strided_scatter and diagonal_scatter as ops torch-mlir lowers.

torch-mlir lowers select_scatter and slice_scatter to tensor.insert_slice but
has no lowering for `torch.aten.diagonal_scatter`, `torch.aten.as_strided_scatter`
or `torch.aten.as_strided` on value tensors, which purity-functionalize emits
for reads and writes through `diagonal` and `as_strided`. For static shapes:

    as_strided(base)  = view(index_select(view(base, [N]), 0, POSITIONS), sizes)

with POSITIONS the flat base element of each view element, and each scatter
becomes a gather plus a select over the flattened base:

    flat   = view(base, [N])
    picked = index_select(view(src, [M]), 0, GATHER)   // GATHER: constant [N]
    result = view(where(WRITTEN, picked, flat), sizes(base))  // WRITTEN: constant [N] x i1

where, for each element of the (contiguous) base, WRITTEN says whether the
view covers it and GATHER which element of `src` lands there (for
overlapping as_strided views, the last one, as a sequential copy would leave
it). All of view, index_select and where.self lower to linalg.

The constants have one entry per element of the base. Dynamic shapes or
non-constant view arguments are reported as errors at the op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch_mlir.dialects.torch import AtenIndexSelectOp, AtenViewOp, AtenWhereSelfOp, ValueTensorLiteralOp
from torch_mlir.ir import DenseElementsAttr, InsertionPoint, IntegerType, Location, Operation, Type, Value

from ..ir_helpers.queries import walk
from ..ir_helpers.torch_values import NotConstant, constant_of, int_constant, int_list_constant, static_sizes
from .base import LocatedPassError, ModulePass

_STRIDED = ("torch.aten.diagonal_scatter", "torch.aten.as_strided_scatter", "torch.aten.as_strided")


@dataclass(frozen=True)
class DecomposeStrided(ModulePass):
    """Rewrites as_strided, as_strided_scatter and diagonal_scatter into view, index_select and where."""

    name = "purity-decompose-strided"

    def apply(self, module: Operation) -> None:
        self.for_each([o.operation for o in walk(module) if o.operation.name in _STRIDED], _replace)


def _replace(op: Operation) -> None:
    with InsertionPoint(op), op.location:
        replacement = _decompose(op)
    op.results[0].replace_all_uses_with(replacement)
    op.erase()


class _Unsupported(LocatedPassError):
    def __init__(self, message: str) -> None:
        super().__init__(Location.current, message)


def _view_geometry(op: Operation, base_sizes: list[int]) -> tuple[list[int], list[int], int]:
    view_arguments = op.operands[1:] if op.name == "torch.aten.as_strided" else op.operands[2:]
    try:
        arguments = [constant_of(v) for v in view_arguments]
    except NotConstant:
        raise _Unsupported(f"'{op.name}' with non-constant view arguments is not supported") from None
    if op.name == "torch.aten.diagonal_scatter":
        view = torch.empty(base_sizes, device="meta").diagonal(*arguments)
        return list(view.shape), list(view.stride()), view.storage_offset()
    size, stride, storage_offset = arguments
    return list(size), list(stride), 0 if storage_offset is None else storage_offset


def _decompose(op: Operation) -> Value:
    base = op.operands[0]
    base_sizes = static_sizes(base.type)
    result_sizes = static_sizes(op.results[0].type)
    if base_sizes is None or result_sizes is None:
        raise _Unsupported(f"'{op.name}' on tensors with dynamic shape is not supported")
    sizes, strides, offset = _view_geometry(op, base_sizes)
    total = int(np.prod(base_sizes, dtype=np.int64))
    covered = int(np.prod(sizes, dtype=np.int64))
    reach = offset + sum((s - 1) * st for s, st in zip(sizes, strides)) + 1 if covered else 0
    if covered and (offset < 0 or reach > total):
        raise _Unsupported(f"'{op.name}' reaches outside its base ({reach} > {total} elements)")
    positions = (
        np.ascontiguousarray(torch.arange(total).as_strided(sizes, strides, offset).reshape(-1).numpy())
        if covered
        else np.zeros(0, dtype=np.int64)
    )

    context = op.context
    element = str(base.type).split(",")[-1].rstrip(">")

    def flat(length: int, torch_element: str = element) -> Type:
        return Type.parse(f"!torch.vtensor<[{length}],{torch_element}>", context)

    def literal(values: np.ndarray, torch_element: str, bits: int) -> Value:
        attr = DenseElementsAttr.get(values, type=IntegerType.get_signless(bits, context))
        return ValueTensorLiteralOp(attr, results=[flat(len(values), torch_element)]).result

    flat_base = AtenViewOp(flat(total), base, int_list_constant([total])).result
    if op.name == "torch.aten.as_strided":
        picked = AtenIndexSelectOp(flat(covered), flat_base, int_constant(0), literal(positions, "si64", 64)).result
        return AtenViewOp(op.results[0].type, picked, int_list_constant(result_sizes)).result
    if covered == 0:
        return base
    gather = np.zeros(total, dtype=np.int64)
    gather[positions] = np.arange(covered, dtype=np.int64)
    written = np.zeros(total, dtype=np.bool_)
    written[positions] = True
    flat_src = AtenViewOp(flat(covered), op.operands[1], int_list_constant([covered])).result
    picked = AtenIndexSelectOp(flat(total), flat_src, int_constant(0), literal(gather, "si64", 64)).result
    merged = AtenWhereSelfOp(flat(total), literal(written, "i1", 1), picked, flat_base).result
    return AtenViewOp(base.type, merged, int_list_constant(base_sizes)).result
