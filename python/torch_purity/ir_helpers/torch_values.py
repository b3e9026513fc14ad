"""Building and reading Torch-dialect constants and static shapes, for passes."""

from __future__ import annotations

from torch_mlir.dialects.torch import ConstantBoolOp, ConstantIntOp, ConstantNoneOp, PrimListConstructOp
from torch_mlir.ir import Block, IntegerAttr, IntegerType, Location, Type, Value


class NotConstant(Exception):
    """The value is not built from torch constants."""


def sizes_of(tensor_type: Type) -> list[int] | None:
    """A Torch tensor type's sizes, -1 for each dynamic one; None when unranked."""
    text = str(tensor_type)
    start = text.find("<[")
    if start < 0:
        return None
    dims = text[start + 2 : text.index("]", start)]
    if not dims:
        return []
    return [int(d) if d.lstrip("-").isdigit() else -1 for d in dims.split(",")]


def static_sizes(tensor_type: Type) -> list[int] | None:
    sizes = sizes_of(tensor_type)
    return None if sizes is None or any(s < 0 for s in sizes) else sizes


def constant_of(value: Value) -> object:
    """The Python value of a torch constant (int/float/bool/none/list of them); raises if not constant."""
    owner = value.owner
    if isinstance(owner, Block):
        raise NotConstant
    owner = owner.operation
    name = owner.name
    if name == "torch.constant.none":
        return None
    if name in ("torch.constant.int", "torch.constant.float", "torch.constant.bool"):
        attr = owner.attributes["value"]
        text = str(attr)
        if name == "torch.constant.bool":
            return text == "true"
        if name == "torch.constant.int":
            return IntegerAttr(attr).value
        return float(text.split(":")[0])
    if name == "torch.prim.ListConstruct":
        return [constant_of(operand) for operand in owner.operands]
    raise NotConstant


def same_values(first: list[Value], second: list[Value]) -> bool:
    """Operand lists naming the same values: the same SSA values or equal constants."""
    if len(first) != len(second):
        return False
    for one, other in zip(first, second, strict=True):
        if one == other:
            continue
        try:
            if constant_of(one) != constant_of(other):
                return False
        except NotConstant:
            return False
    return True


def int_constant(value: int) -> Value:
    context = Location.current.context
    return ConstantIntOp(
        IntegerAttr.get(IntegerType.get_signless(64, context), value), results=[Type.parse("!torch.int", context)]
    ).result


def none_constant() -> Value:
    context = Location.current.context
    return ConstantNoneOp(results=[Type.parse("!torch.none", context)]).result


def bool_constant(value: bool) -> Value:
    context = Location.current.context
    return ConstantBoolOp(
        IntegerAttr.get(IntegerType.get_signless(1, context), int(value)), results=[Type.parse("!torch.bool", context)]
    ).result


def int_type(anchor: Value) -> Type:
    return Type.parse("!torch.int", anchor.context)


def int_list_constant(values: list[int]) -> Value:
    context = Location.current.context
    return PrimListConstructOp(Type.parse("!torch.list<int>", context), [int_constant(v) for v in values]).result
