"""purity-mark-unwritten-arguments: marks the arguments IREE has no way to write into.

Runs on linalg-on-tensors. IREE may store a result in an argument's buffer
although the argument is not tied to it (docs/architecture.md, IREE behaviours: a value-semantic
`tensor.insert_slice %b into %a` wrote into `%a`'s buffer). That happens where
the argument is the destination of an op that updates in place: the `outs`
of a linalg or tm_tensor op, the destination of `tensor.insert_slice`, or a
value IREE is free to forward (returned, passed to an unknown op). An
argument that is only ever read — an input (`ins`) of linalg/tm_tensor ops,
the source of an insert, an extract, or the source of a view-like tensor op
whose results are only read in turn — and is not tied to a result
(`iree.abi.output`) gets the unit attribute `purity.unwritten`.

The CPU runtime hands such an argument to IREE as the caller's own memory
instead of a copy: reading a 50 MB activation or an optimizer's gradients
costs nothing. Every other argument keeps being copied (or, when written and
tied with `iree.abi.output`, is written in place).

IREE-WORKAROUND(untied-argument-writes): the runtime copies every other
argument because IREE may write untied argument buffers; when IREE stops
doing so, every read-only input could cross without a copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import Operation, UnitAttr

from ... import contract
from ...ir_helpers.functions import arg_attr, function_ops, function_type, set_arg_attrs
from ...passes.base import ModulePass
from .linalg_builders import init_operands

# Ops whose result is a view or reshape of operand 0, or operand 0 itself
# (IREE's barrier, generic form): reading them reads the argument.
_VIEW_LIKE = (
    "tensor.extract_slice",
    "tensor.expand_shape",
    "tensor.collapse_shape",
    "tensor.cast",
    "tensor.reshape",
    "util.optimization_barrier",
)
# (op, operand number) pairs that only read.
_READ_OPERANDS = {("tensor.extract", 0), ("tensor.dim", 0), ("tensor.insert_slice", 0), ("tensor.pad", 0)}
_READ_ANY_OPERAND = ("tensor.concat",)


@dataclass(frozen=True)
class MarkUnwrittenArguments(ModulePass):
    """Marks arguments that are only read (purity.unwritten), so the runtime can pass them without a copy."""

    name = "purity-mark-unwritten-arguments"

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            arguments = function.regions[0].blocks[0].arguments
            for index in range(len(function_type(function).inputs)):
                # A tied argument is written, through its result (iree.abi.output).
                if arg_attr(function, index, contract.IREE_OUTPUT) is None and _only_read(arguments[index]):
                    set_arg_attrs(function, index, {contract.UNWRITTEN: UnitAttr.get(function.context)})


def _only_read(value) -> bool:
    for use in value.uses:
        user, number = use.owner, use.operand_number
        name = user.name
        if name in _VIEW_LIKE and number == 0:
            if not all(_only_read(result) for result in user.results):
                return False
        elif (name, number) in _READ_OPERANDS or name in _READ_ANY_OPERAND:
            continue
        elif _is_dps_input(user, number):
            continue
        else:
            return False
    return True


def _is_dps_input(op, operand_number: int) -> bool:
    inits = init_operands(op)
    return inits is not None and operand_number < min(inits)
