"""Small read-only questions about Torch IR shared by tools and passes."""

from __future__ import annotations

import re

from torch_mlir.ir import Location, Module, Operation, StringAttr, Type

from .ops import METADATA_MUTATIONS, is_in_place

FILE_LOCATION = re.compile(r'"([^"]*)":([0-9]+):([0-9]+)')


def walk(operation: Operation):
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                yield op
                yield from walk(op.operation)


def aten_name(op: Operation) -> str:
    """The op's name, or for `torch.operator` the ATen op it stands for."""
    if op.name == "torch.operator":
        return StringAttr(op.attributes["name"]).value
    return op.name


def mutating_ops(module: Module) -> list[Operation]:
    """Data writes and metadata mutations, in program order."""
    return [
        op.operation
        for op in walk(module.operation)
        if is_in_place(aten_name(op.operation)) or aten_name(op.operation) in METADATA_MUTATIONS
    ]


def source_location(location: Location) -> str | None:
    """'file:line' of the innermost file location in `location`."""
    match = FILE_LOCATION.search(str(location))
    return f"{match.group(1)}:{match.group(2)}" if match else None


_NON_VALUE_KIND_BY_TYPE: dict[Type, str | None] = {}
_VALUE_TYPE_OF: dict[Type, Type] = {}


def non_value_kind(value) -> str | None:
    """"tensor" for `!torch.tensor`, "list" for `!torch.list<tensor>`, else None.
    Types are uniqued, so the answer is cached per type: printing a type is
    the costly part of asking."""
    type_ = value.type
    try:
        return _NON_VALUE_KIND_BY_TYPE[type_]
    except KeyError:
        text = str(type_)
        kind = "tensor" if text.startswith("!torch.tensor") else "list" if text == "!torch.list<tensor>" else None
        _NON_VALUE_KIND_BY_TYPE[type_] = kind
        return kind


def is_non_value(value) -> bool:
    return non_value_kind(value) == "tensor"


def value_type(non_value_type: Type) -> Type:
    """`!torch.tensor<[4],f32>` -> `!torch.vtensor<[4],f32>`."""
    try:
        return _VALUE_TYPE_OF[non_value_type]
    except KeyError:
        result = Type.parse(str(non_value_type).replace("!torch.tensor", "!torch.vtensor", 1), non_value_type.context)
        _VALUE_TYPE_OF[non_value_type] = result
        return result


def non_value_type(value_semantic_type: Type) -> Type:
    """`!torch.vtensor<[4],f32>` -> `!torch.tensor<[4],f32>`."""
    return Type.parse(str(value_semantic_type).replace("!torch.vtensor", "!torch.tensor", 1), value_semantic_type.context)
