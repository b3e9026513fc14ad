"""Small read-only questions about Torch IR shared by tools and passes."""

from __future__ import annotations

import re

from torch_mlir.ir import Location, Module, Operation

_FILE_LOCATION = re.compile(r'"([^"]*)":([0-9]+):([0-9]+)')


def is_in_place_op_name(name: str) -> bool:
    """`torch.aten.add_.Tensor`, `torch.aten.zero_`: an ATen op whose base name ends in `_`."""
    parts = name.split(".")
    return len(parts) >= 3 and parts[0] == "torch" and parts[1] == "aten" and parts[2].endswith("_") and not parts[2].startswith("_")


def walk(operation: Operation):
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                yield op
                yield from walk(op.operation)


def in_place_ops(module: Module) -> list[Operation]:
    return [op for op in walk(module.operation) if is_in_place_op_name(op.operation.name)]


def source_location(location: Location) -> str | None:
    """'file:line' of the innermost file location in `location`."""
    match = _FILE_LOCATION.search(str(location))
    return f"{match.group(1)}:{match.group(2)}" if match else None
