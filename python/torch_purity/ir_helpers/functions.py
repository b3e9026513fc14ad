"""func.func helpers: the functions of a module, argument and result attributes, results."""

from __future__ import annotations

from torch_mlir.dialects.func import ReturnOp
from torch_mlir.ir import (
    ArrayAttr,
    DictAttr,
    FunctionType,
    InsertionPoint,
    IntegerAttr,
    IntegerType,
    Module,
    Operation,
    StringAttr,
    TypeAttr,
)


def function_ops(module: Operation) -> list[Operation]:
    return [
        op.operation
        for op in module.regions[0].blocks[0].operations
        if op.operation.name == "func.func" and len(op.operation.regions[0].blocks) > 0
    ]


def terminator(block) -> Operation:
    """The block's last op (a function body's `func.return`)."""
    return block.operations[len(block.operations) - 1].operation


def main_function(module: Module, name: str = "main") -> Operation:
    """The module's public entry, `func.func @main` (the only public function
    the importer makes), or another function by name."""
    functions = function_ops(module.operation)
    for function in functions:
        if StringAttr(function.attributes["sym_name"]).value == name:
            return function
    raise ValueError(f"the module has no func.func @{name}")


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr.get(IntegerType.get_signless(64), value)


def dict_entries(attr) -> dict[str, object]:
    dictionary = DictAttr(attr)
    return {dictionary[i].name: dictionary[i].attr for i in range(len(dictionary))}


def _set_indexed_attrs(function: Operation, key: str, count: int, index: int, new: dict[str, object]) -> None:
    existing = list(ArrayAttr(function.attributes[key])) if key in function.attributes else []
    while len(existing) < count:
        existing.append(DictAttr.get({}))
    entries = dict_entries(existing[index])
    entries.update(new)
    existing[index] = DictAttr.get(entries)
    function.attributes[key] = ArrayAttr.get(existing)


def function_type(function: Operation) -> FunctionType:
    return FunctionType(TypeAttr(function.attributes["function_type"]).value)


def set_arg_attrs(function: Operation, index: int, new: dict[str, object]) -> None:
    _set_indexed_attrs(function, "arg_attrs", len(function_type(function).inputs), index, new)


def set_result_attrs(function: Operation, index: int, new: dict[str, object]) -> None:
    _set_indexed_attrs(function, "res_attrs", len(function_type(function).results), index, new)


def arg_attr(function: Operation, index: int, name: str):
    if "arg_attrs" not in function.attributes:
        return None
    entries = dict_entries(ArrayAttr(function.attributes["arg_attrs"])[index])
    return entries.get(name)


def result_attr(function: Operation, index: int, name: str):
    if "res_attrs" not in function.attributes:
        return None
    entries = dict_entries(ArrayAttr(function.attributes["res_attrs"])[index])
    return entries.get(name)


def set_results(function: Operation, return_op: Operation, results: list) -> None:
    """Replaces `return_op` (erased) by a return of `results`, and the
    function's type by the block's argument types and those results."""
    with InsertionPoint(return_op), return_op.location:
        ReturnOp(results)
    return_op.erase()
    arguments = function.regions[0].blocks[0].arguments
    function.attributes["function_type"] = TypeAttr.get(
        FunctionType.get([a.type for a in arguments], [v.type for v in results], context=function.context)
    )
