"""purity-elide-input-view-results: results handed out as views of inputs return an empty tensor.

Runs on linalg-on-tensors, first in the iree-abi stage. A result marked
`purity.aliases_input` (an output that is a view of an input: `x.mul_(2);
return x`, `cache.index_copy_(0, pos, row); return cache`) is never read by
the runtime: it returns a view of the caller's tensor, with the layout the
result's attributes give. Yet IREE computes every returned value, and such
a value is the input's new contents, which lives in the input's tied
buffer: to return it as a result of its own, IREE 3.13 copied the whole
input into a new buffer on every call (measured on a 128k-row KV cache,
32 MiB: a one-row write took 17 ms returning the cache against 29 µs
without; `x.mul_(1.0001); return x` 7.5 ms against 1.1 ms).

The pass returns `tensor.empty() : tensor<0xT>` there instead (T the
result's element type, which the runtime does not read either) and erases
what only that result used, so IREE computes nothing for it. The function's
result type changes accordingly; `purity.result_element_types` is left as it
is.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import FunctionType, InsertionPoint, Operation, OpResult, RankedTensorType, TypeAttr, UnitAttr

from ... import contract
from ...ir_helpers.functions import function_ops, function_type, result_attr, terminator
from ...passes.base import ModulePass

# Ops that may do something beyond producing their results: never erased.
_EFFECTFUL = ("func.call",)


@dataclass(frozen=True)
class ElideInputViewResults(ModulePass):
    """Returns an empty tensor for each result the runtime makes as a view of an input (purity.aliases_input)."""

    name = "purity-elide-input-view-results"

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            _elide(function)


def _elide(function: Operation) -> None:
    return_op = terminator(function.regions[0].blocks[0])
    signature = function_type(function)
    results = list(signature.results)
    replaced = []
    for index, result_type in enumerate(results):
        if result_attr(function, index, contract.ALIASES_INPUT) is None or not isinstance(
            result_type, RankedTensorType
        ):
            continue
        with InsertionPoint(return_op), return_op.location:
            empty_type = RankedTensorType.get([0], RankedTensorType(result_type).element_type)
            empty = Operation.create("tensor.empty", results=[empty_type]).results[0]
        replaced.append(return_op.operands[index])
        return_op.operands[index] = empty
        results[index] = empty_type
    if not replaced:
        return
    function.attributes["function_type"] = TypeAttr.get(FunctionType.get(list(signature.inputs), results))
    _erase_unused_producers(function.regions[0].blocks[0], replaced)


def _erase_unused_producers(block, values: list) -> None:
    """Erases the ops of `block` producing `values` that no longer have a
    use, then their operands' producers the same way.

    The bindings give each handle its own Python object, and erasing through
    one leaves the others dangling: so the walk goes backwards over handles
    taken once, visiting each op once, after every op that could use it, and
    marks the producers it may erase with an attribute instead of keeping
    handles to them. (Following operands with handles crashed the process
    when two results shared a producer.)"""
    for value in values:
        _mark(value)
    for op in reversed([op.operation for op in block.operations]):
        if _MARK not in op.attributes:
            continue
        del op.attributes[_MARK]
        if op.name in _EFFECTFUL or any(True for result in op.results for _ in result.uses):
            continue
        operands = list(op.operands)
        op.erase()
        for operand in operands:
            _mark(operand)


_MARK = "purity.elide_if_unused"


def _mark(value) -> None:
    if isinstance(value, OpResult):
        value.owner.attributes[_MARK] = UnitAttr.get()
