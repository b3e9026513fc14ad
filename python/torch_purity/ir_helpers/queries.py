"""Small read-only questions about Torch IR shared by tools and passes."""

from __future__ import annotations

import math
import re

from torch_mlir.ir import Location, Operation, RankedTensorType, StringAttr, Type, Value

FILE_LOCATION = re.compile(r'"([^"]*)":([0-9]+):([0-9]+)')


def walk(operation: Operation):
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                yield op
                yield from walk(op.operation)


def values_used(op: Operation) -> list[Value]:
    """The op's operands and those of the ops nested in its regions."""
    return [*op.operands, *(value for inner in walk(op) for value in inner.operation.operands)]


def static_elements(value: Value) -> int | None:
    """How many elements a ranked tensor value of static shape holds; None otherwise."""
    if not isinstance(value.type, RankedTensorType):
        return None
    tensor_type = RankedTensorType(value.type)
    return math.prod(tensor_type.shape) if tensor_type.has_static_shape else None


def aten_name(op: Operation) -> str:
    """The op's name, or for `torch.operator` the ATen op it stands for."""
    if op.name == "torch.operator":
        return StringAttr(op.attributes["name"]).value
    return op.name


def source_location(location: Location) -> str | None:
    """'file:line' of the innermost file location in `location`."""
    match = FILE_LOCATION.search(str(location))
    return f"{match.group(1)}:{match.group(2)}" if match else None


def aten_op_of_location(location: Location) -> str | None:
    """The ATen op a location names (`loc("aten.add_.Tensor"(...))`, the
    importer's NameLoc for the user's line), or None."""
    text = str(location)
    if text.startswith('loc("aten.') or text.startswith('loc("prims.'):
        return text.split('"')[1]
    return None


def non_value_kind(value) -> str | None:
    """ "tensor" for `!torch.tensor`, "list" for `!torch.list<tensor>`, else None."""
    return _kind_of_type_text(str(value.type))


def _kind_of_type_text(text: str) -> str | None:
    return "tensor" if text.startswith("!torch.tensor") else "list" if text == "!torch.list<tensor>" else None


def is_non_value(value) -> bool:
    return non_value_kind(value) == "tensor"


def value_type(non_value_type: Type) -> Type:
    """`!torch.tensor<[4],f32>` -> `!torch.vtensor<[4],f32>`."""
    return Type.parse(str(non_value_type).replace("!torch.tensor", "!torch.vtensor", 1), non_value_type.context)


class TypeQueries:
    """The questions above, memoized per type for one pass run: types are
    uniqued, and printing a type is the costly part of asking. Short-lived on
    purpose: the cached types keep their context alive."""

    def __init__(self) -> None:
        self._kinds: dict[Type, str | None] = {}
        self._value_types: dict[Type, Type] = {}

    def non_value_kind(self, value) -> str | None:
        type_ = value.type
        try:
            return self._kinds[type_]
        except KeyError:
            kind = self._kinds[type_] = _kind_of_type_text(str(type_))
            return kind

    def is_non_value(self, value) -> bool:
        return self.non_value_kind(value) == "tensor"

    def value_type(self, non_value_type: Type) -> Type:
        try:
            return self._value_types[non_value_type]
        except KeyError:
            result = self._value_types[non_value_type] = value_type(non_value_type)
            return result


def non_value_type(value_semantic_type: Type) -> Type:
    """`!torch.vtensor<[4],f32>` -> `!torch.tensor<[4],f32>`."""
    return Type.parse(
        str(value_semantic_type).replace("!torch.vtensor", "!torch.tensor", 1), value_semantic_type.context
    )
