"""purity-expose-input-writes: the edge overwrite of a written argument becomes a result tied to it.

After purity-functionalize, a written argument is `!torch.tensor`, read once
through `torch.copy.to_vtensor` and overwritten once with
`torch.overwrite.tensor.contents` before the return. torch-mlir's backend
contract admits only value tensors at the function boundary, so this pass
rewrites each such argument to `!torch.vtensor`, drops the overwrite, and
returns the final value as an extra result (appended after the program's own
results, in argument order):

- the new result carries `purity.written_input = <argument index>`, which the
  runtime reads to apply the write to the caller's tensor;
- the argument carries `iree.abi.output = <result index> : index`, which ties
  the result to the argument's buffer in IREE, so that a write through a view
  (a `tensor.insert_slice` after lowering) is done in place instead of copying
  the whole tensor; but only where that is safe. IREE 3.13 does not order
  other reads of the argument before writes into its tied buffer (measured:
  `old = x.clone(); x.add_(1); return old` returned the new values), so the
  tie is added only where no read of the original value can come after a
  write into the buffer:
  - every use of the original value is as the base of a `select_scatter` /
    `slice_scatter` (a row or slice written into it); or
  - the update is pointwise (an optimizer step, `x.mul_(a).add_(g)`): every
    op from the argument to its final value is in `ops.POINTWISE_OPS` with the
    argument's shape, and every read of the argument leads to the final
    value, so each element is read before, or in the same dispatch as, the
    write of that element.
  Otherwise the final value comes back in a buffer of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import IndexType, IntegerAttr, Operation, OpResult

from ..ir_queries import is_non_value, value_type
from ..ops import POINTWISE_OPS
from .base import LocatedPassError, ModulePass
from .check_indices import GUARD_READ
from .function_attrs import function_ops, i64_attr, set_arg_attrs, set_result_attrs, set_results
from .torch_builders import static_sizes


@dataclass(frozen=True)
class ExposeInputWrites(ModulePass):
    """Turns each edge overwrite of a written argument into an extra result tied to that argument."""

    name = "purity-expose-input-writes"

    def apply(self, module: Operation) -> None:
        self.for_each(function_ops(module), _expose)


class _NotEdgeForm(LocatedPassError):
    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(op.location, message)


def _expose(function: Operation) -> None:
    block = function.regions[0].blocks[0]
    return_op = block.operations[len(block.operations) - 1].operation
    final_values: dict[int, object] = {}
    for op in [o.operation for o in block.operations]:
        if op.name != "torch.overwrite.tensor.contents":
            continue
        target = op.operands[1]
        if target.owner != block or not hasattr(target, "arg_number"):
            raise _NotEdgeForm(op, "only overwrites of function arguments can be exposed (run purity-functionalize first)")
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
    for offset, argument_index in enumerate(written):
        result_index = first_new_result + offset
        set_result_attrs(function, result_index, {"purity.written_input": i64_attr(argument_index)})
        argument, final = block.arguments[argument_index], final_values[argument_index]
        # One value stored into two tied buffers is beyond IREE's aliasing.
        shared = sum(1 for other in final_values.values() if other == final) > 1
        if not shared and (_only_written_into(argument) or _updated_pointwise(argument, final)):
            set_arg_attrs(function, argument_index, {"iree.abi.output": IntegerAttr.get(IndexType.get(function.context), result_index)})


_IN_PLACE_BASES = ("torch.aten.select_scatter", "torch.aten.slice_scatter")


def _only_written_into(argument) -> bool:
    """Every use of the argument's original value is as the base a region is
    written into: nothing reads it after its tied buffer starts changing."""
    uses = list(argument.uses)
    return bool(uses) and all(
        (use.owner.name in _IN_PLACE_BASES and use.operand_number == 0) or GUARD_READ in use.owner.attributes
        for use in uses
    )


def _updated_pointwise(argument, final) -> bool:
    """The argument's final value comes from it through pointwise ops of its
    shape only, and each of its reads feeds that final value."""
    if not isinstance(final, OpResult):
        return False
    shape = static_sizes(argument.type)
    if shape is None:
        return False
    feeding_final = _producers(final)
    pending, seen = [argument], set()
    while pending:
        value = pending.pop()
        for use in value.uses:
            user = use.owner
            if user.name == "func.return":
                if value == argument:
                    return False  # the original value is returned as it was
                continue
            if user.name not in POINTWISE_OPS or static_sizes(user.results[0].type) != shape:
                if value == argument or user.operation in feeding_final:
                    return False
                continue  # reads a derived value: in its own buffer, or the final value once written
            key = user.operation
            if key not in feeding_final:
                if value == argument:
                    return False  # a read of the original that the final value does not wait for
                continue
            if key not in seen:
                seen.add(key)
                pending.append(user.results[0])
    return True


def _producers(value) -> set[object]:
    """The ops `value` is computed from, its own included."""
    keys, pending = set(), [value]
    while pending:
        current = pending.pop()
        if not isinstance(current, OpResult):
            continue
        op = current.owner.operation
        if op in keys:
            continue
        keys.add(op)
        pending.extend(op.operands)
    return keys

