"""purity-expose-input-writes: the edge overwrite of a written argument becomes an extra result.

After purity-functionalize, a written argument is `!torch.tensor`, read once
through `torch.copy.to_vtensor` and overwritten once with
`torch.overwrite.tensor.contents` before the return. torch-mlir's backend
contract admits only value tensors at the function boundary, so this pass
rewrites each such argument to `!torch.vtensor`, drops the overwrite, and
returns the final value as an extra result (appended after the program's own
results, in argument order). The new result carries `purity.written_input = <argument index>`, which the
runtime reads to apply the write to the caller's tensor. The function gets
`purity.result_element_types`, the Torch element type of every result (the
builtin tensor types of later stages lose signedness: `si64` and `ui8`).
Whether the argument's buffer can take the final value in place (IREE's
`iree.abi.output`) is the target's business: `purity-tie-written-inputs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import Operation

from .. import contract
from ..contract.ir import element_types_attr
from ..ir_helpers.functions import function_ops, i64_attr, set_result_attrs, set_results, terminator
from ..ir_helpers.queries import is_non_value, value_type
from .base import LocatedPassError, ModulePass


@dataclass(frozen=True)
class ExposeInputWrites(ModulePass):
    """Turns each edge overwrite of a written argument into an extra result naming that argument."""

    name = "purity-expose-input-writes"

    def apply(self, module: Operation) -> None:
        self.for_each(function_ops(module), _expose)


class _NotEdgeForm(LocatedPassError):
    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(op.location, message)


def _expose(function: Operation) -> None:
    block = function.regions[0].blocks[0]
    return_op = terminator(block)
    final_values: dict[int, object] = {}
    for op in [o.operation for o in block.operations]:
        if op.name != "torch.overwrite.tensor.contents":
            continue
        target = op.operands[1]
        if target.owner != block or not hasattr(target, "arg_number"):
            raise _NotEdgeForm(
                op, "only overwrites of function arguments can be exposed (run purity-functionalize first)"
            )
        final_values[target.arg_number] = op.operands[0]
        op.erase()
    for argument in block.arguments:
        if not is_non_value(argument):
            continue
        for use in list(argument.uses):
            user = use.owner
            if user.name != "torch.copy.to_vtensor":
                raise _NotEdgeForm(user, f"'{user.name}' uses a non-value argument (run purity-functionalize first)")
            read = user.results[0]
            read.replace_all_uses_with(argument)
            # A final value that is an argument's unchanged read (`dst.copy_(src)`
            # with src never written) must not keep a handle to the erased read.
            for index, value in final_values.items():
                if value == read:
                    final_values[index] = argument
            user.erase()
        argument.set_type(value_type(argument.type))

    first_new_result = len(return_op.operands)
    written = sorted(final_values)
    results = list(return_op.operands) + [final_values[index] for index in written]
    set_results(function, return_op, results)
    function.attributes[contract.RESULT_ELEMENT_TYPES] = element_types_attr([v.type for v in results])
    for offset, argument_index in enumerate(written):
        result_index = first_new_result + offset
        set_result_attrs(function, result_index, {contract.WRITTEN_INPUT: i64_attr(argument_index)})
