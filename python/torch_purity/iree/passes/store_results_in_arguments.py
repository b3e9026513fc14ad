"""purity-store-results-in-arguments: every result is written, by a dispatch, into memory the caller passes.

Runs on linalg-on-tensors, after `purity-dispatch-argument-writes`. The runtime
hands torch's memory to IREE through DLPack and never takes memory back
from IREE: IREE 3.13's CUDA allocator exports only buffers it imported, so
a result IREE allocates on the GPU cannot become a torch tensor without
copies through the host. And IREE writes into imported memory only with
dispatches: imports allow READ|WRITE access, while its transfers (buffer
copies, fills) need DISCARD_WRITE and fail with PERMISSION_DENIED. So:

1. Each tensor result not tied to an argument gets a storage argument of its
   type, appended after all others and tied to it (`iree.abi.output`,
   `purity.result_storage` = the result's index). The runtime passes a fresh
   torch tensor there, IREE computes the result into it, and that tensor is
   the output: no copy, on the CPU and the GPU alike. Results that are views
   of an input (`purity.aliases_input`) are left as they are: the runtime
   never reads them, it returns a view of the caller's tensor.
2. Each result, stored or tied to an input, that IREE would produce with a
   transfer or in a buffer of its own followed by a copy goes through a
   generic that copies it into its argument while reading the argument
   (`copy_reading_destination`), so a dispatch writes it. Left alone: a
   value computed by a `linalg.generic` (other than a copy), returned once
   and otherwise read only by elementwise generics (IREE fuses them into one
   dispatch that stores it straight into the argument: an optimizer's
   momentum buffer, read by the parameter's update); and a chain of slice
   writes and scatters (`index_put` at a tensor position: a static KV
   cache's row) into the tied input itself (written in place by their own
   dispatches, see `purity-dispatch-argument-writes`), through reshapes of
   it; and reshapes of such a generic's value into a tied input, each value
   of the chain used once (`x[mask] = 0`, computed over the flattened
   input: IREE folds the reshape into the storing dispatch). Wrapped: returned arguments, fills,
   copies, transposes and other named ops (a transposed result was seen
   written with a copy), scatters into anything but the tied input, other reshapes, constants, values also read by
   a reduction or another op (SGD: a parameter also summed was computed into
   IREE's own buffer, then copied), or returned twice. A wrapper costs one
   pass over its result. Should IREE still write an argument with a
   transfer, the runtime's first call finds out (docs/architecture.md, 5).

IREE-WORKAROUND(dlpack-discard-write, cuda-export): storage arguments exist
because IREE's CUDA allocator cannot export its buffers to torch; the copies
through `copy_reading_destination` because DLPack imports lack DISCARD_WRITE.
Both can go when IREE exports CUDA buffers and imports with DISCARD_WRITE.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    ArrayAttr,
    BlockArgument,
    FunctionType,
    InsertionPoint,
    Operation,
    OpResult,
    RankedTensorType,
    TypeAttr,
)

from ... import contract
from ...contract.ir import tie_attr, tied_result
from ...ir_helpers.functions import (
    function_ops,
    function_type,
    i64_attr,
    result_attr,
    set_arg_attrs,
    terminator,
)
from ...passes.base import ModulePass
from .linalg_builders import copy_reading_destination


@dataclass(frozen=True)
class StoreResultsInArguments(ModulePass):
    """Gives each untied result a storage argument and makes a dispatch write every result into its argument."""

    name = "purity-store-results-in-arguments"

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            _store_results(function)


def _store_results(function: Operation) -> None:
    block = function.regions[0].blocks[0]
    return_op = terminator(block)
    signature = function_type(function)
    destinations: dict[int, int] = {}  # result index -> argument it is written into
    for index in range(len(signature.inputs)):
        output = tied_result(function, index)
        if output is not None:
            destinations[output] = index
    tied_to_inputs = set(destinations)
    inputs = list(signature.inputs)
    stored = []
    for result_index, result_type in enumerate(signature.results):
        if result_index in destinations or not isinstance(result_type, RankedTensorType):
            continue
        if result_attr(function, result_index, contract.ALIASES_INPUT) is not None:
            continue  # an output that is a view of an input: the runtime makes it from the input
        block.add_argument(result_type, function.location)
        inputs.append(result_type)
        destinations[result_index] = len(inputs) - 1
        stored.append(result_index)
    function.attributes["function_type"] = TypeAttr.get(FunctionType.get(inputs, list(signature.results)))
    for result_index in stored:
        set_arg_attrs(
            function,
            destinations[result_index],
            {
                contract.IREE_OUTPUT: tie_attr(result_index),
                contract.RESULT_STORAGE: i64_attr(result_index),
            },
        )
    for result_index, argument_index in sorted(destinations.items()):
        value = return_op.operands[result_index]
        argument = block.arguments[argument_index]
        if _written_by_its_own_dispatch(value, argument if result_index in tied_to_inputs else None):
            continue
        with InsertionPoint(return_op), return_op.location:
            kept = copy_reading_destination(value, argument)
        if kept is not None:
            return_op.operands[result_index] = kept


# Ops writing a region of a destination they take as an operand (in place
# when that is a tied input: one dispatch writes only the region), and that
# destination: a slice insertion's `dest`, a scatter's `outs` (index_put).
_REGION_WRITES = {
    "tensor.insert_slice": lambda op: op.operands[1],
    "tm_tensor.scatter": lambda op: op.operands[len(op.operands) - 1],
}


# Reshapes keep their operand's buffer: a region written into a reshaped
# tied input (`x.view(-1)[5:10].mul_(2)`) is still written in place.
_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")


def _written_by_its_own_dispatch(value, tied_input: BlockArgument | None) -> bool:
    """Whether IREE computes `value` straight into its destination argument:
    a chain of slice writes and scatters (index_put) into its own tied input
    (through reshapes of it), or a `linalg.generic`
    (not a copy) returned once whose other users are elementwise generics,
    which IREE fuses with it into one dispatch that stores both. A value also
    read by a reduction or another op was seen computed into a buffer of
    IREE's own and then copied (SGD: a parameter also summed)."""
    if not isinstance(value, OpResult):
        return False
    owner, returned = value.owner, value
    if owner.name in (*_REGION_WRITES, *_RESHAPES) and tied_input is not None:
        writes = 0
        while isinstance(value, OpResult) and value.owner.name in (*_REGION_WRITES, *_RESHAPES):
            if value.owner.name in _RESHAPES:
                value = value.owner.operands[0]
            else:
                writes += 1
                value = _REGION_WRITES[value.owner.name](value.owner)
        if writes > 0:
            return value == tied_input
        # Only reshapes: of a generic's value, each used once (`x[mask] = 0`,
        # computed on the flattened input), IREE folds them into the
        # dispatch that stores the value; of the input itself, it copies.
        return _reshaped_once(returned) and _computed_by_generic(value)
    if owner.name != "linalg.generic" or _is_copy(owner):
        return False
    returns = 0
    for use in value.uses:
        if use.owner.name == "func.return":
            returns += 1
        elif not _elementwise_feeding_elementwise(use.owner):
            return False
    return returns == 1


def _reshaped_once(value) -> bool:
    """`value` is a chain of reshapes in which every value but the returned
    one has a single use."""
    value = value.owner.operands[0]
    while True:
        if len(list(value.uses)) != 1:
            return False
        if not (isinstance(value, OpResult) and value.owner.name in _RESHAPES):
            return True
        value = value.owner.operands[0]


def _computed_by_generic(value) -> bool:
    return isinstance(value, OpResult) and value.owner.name == "linalg.generic" and not _is_copy(value.owner)


def _elementwise_feeding_elementwise(user) -> bool:
    """An elementwise generic whose results only elementwise generics (or the
    return) read. One feeding a reduction is fused into it, and the value it
    reads was then computed into IREE's own buffer and copied, as for a
    value read by the reduction itself (`param.sum()` accumulated through a
    conversion to float64, IREE-WORKAROUND(f32-sum-precision))."""
    if user.name != "linalg.generic" or not _is_elementwise(user):
        return False
    return all(
        use.owner.name == "func.return" or (use.owner.name == "linalg.generic" and _is_elementwise(use.owner))
        for result in user.results
        for use in result.uses
    )


def _is_copy(generic) -> bool:
    """Yielding an operand's elements unchanged, which IREE makes a transfer."""
    body = generic.regions[0].blocks[0]
    yielded = terminator(body).operands
    return all(isinstance(v, BlockArgument) for v in yielded)


def _is_elementwise(generic) -> bool:
    return all(str(kind).endswith("parallel>") for kind in ArrayAttr(generic.attributes["iterator_types"]))
