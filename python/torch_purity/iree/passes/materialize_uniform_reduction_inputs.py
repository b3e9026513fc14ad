"""purity-materialize-uniform-reduction-inputs: a reduction of equal elements reads them from memory.

Runs on linalg-on-tensors, in the iree-abi stage. IREE 3.13 fuses
elementwise producers into the reduction that consumes them. When every
producer of the reduced tensor computes the same value for every element (a
`linalg.fill` with a value known only at run time, a generic yielding a
constant, elementwise ops on those), the fused reduction's body reads none of
its inputs (`%acc + 3.0`), and IREE's CPU code for such a body runs wrong: a
sum of a 5-element fill of 3.0 gave 3.0, of a 1000-element fill of 1.0 gave
63.0, a product of a 4-element fill of 2.0 gave 2.0. A program that fills a
tensor and then sums a view of it hit this (`x.fill_(3); d = x.diagonal();
d.copy_(d.sum())` left x all 3; found by `purity fuzz`).

The pass finds each reduction `linalg.generic` whose body reads its inputs
but none of whose read inputs varies from element to element: a value
varies when it is a function argument or the result of an op the pass does
not know, a non-splat constant, a read through a reshape of a varying value,
or the result of an elementwise generic whose yielded values depend on
`linalg.index` or on a varying operand's element. Each such input it passes
through `util.optimization_barrier` (an IREE op, in generic form), which
IREE does not fuse across (splat constants too: IREE reduced the ones
measured right, a sum of a splat and of a splat times 2, but canonicalizes
constants and fills into one another, and a wrong sum costs more than a
buffer): the uniform tensor is computed into a buffer by
a dispatch of its own and the reduction reads its elements, which IREE
compiles right. Other users of the value still fuse with its producers. The
cost is one buffer of the reduced tensor's size, in programs that reduce a
tensor whose elements they know to be equal.

IREE-WORKAROUND(uniform-reduction-input): remove the pass when
`test/Passes/IREE/purity-materialize-uniform-reduction-inputs.mlir`'s cases,
compiled by iree-compile without it, give the sums eager gives
(test/e2e/test_programs.py's `fill_then_diagonal_written_from_its_own_sum`
and the fuzz regression case_e59b4958aba4 fail without the pass).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    ArrayAttr,
    BlockArgument,
    DenseElementsAttr,
    DenseI32ArrayAttr,
    InsertionPoint,
    Operation,
    OpResult,
    Value,
)

from ...ir_helpers.functions import function_ops, terminator
from ...passes.base import ModulePass
from .linalg_builders import barrier

# Ops whose result's elements are those of operand 0, rearranged.
_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.cast")


@dataclass(frozen=True)
class MaterializeUniformReductionInputs(ModulePass):
    """Passes a reduction's inputs through a barrier where all their elements are one value."""

    name = "purity-materialize-uniform-reduction-inputs"

    def apply(self, module: Operation) -> None:
        # The barrier belongs to IREE's util dialect, unknown to torch-mlir.
        module.context.allow_unregistered_dialects = True
        for function in function_ops(module):
            varies = _Variation()
            for op in [o.operation for o in function.regions[0].blocks[0].operations]:
                if op.name == "linalg.generic" and _is_reduction(op):
                    _materialize_uniform_inputs(op, varies)


def _materialize_uniform_inputs(reduction: Operation, varies: _Variation) -> None:
    read = _read_inputs(reduction)
    if not read or any(varies(reduction.operands[i]) for i in read):
        return
    for index in read:
        value = reduction.operands[index]
        with InsertionPoint(reduction), reduction.location:
            kept = barrier(value)
        reduction.operands[index] = kept


class _Variation:
    """Whether a tensor's elements may differ from one another once IREE
    fuses its elementwise producers. Memoized, and walked with a stack of
    its own: an elementwise chain may be longer than Python's recursion
    limit."""

    def __init__(self) -> None:
        self._known: dict[Value, bool] = {}

    def __call__(self, value: Value) -> bool:
        pending = [value]
        while pending:
            current = pending[-1]
            if current in self._known:
                pending.pop()
                continue
            unknown = [v for v in _followed_operands(current) if v not in self._known]
            if unknown:
                pending.extend(unknown)
                continue
            self._known[current] = self._compute(current)
            pending.pop()
        return self._known[value]

    def _compute(self, value: Value) -> bool:
        """With the variation of `_followed_operands(value)` known."""
        if not isinstance(value, OpResult):
            return True
        op = value.owner
        if op.name == "linalg.fill" or op.name == "tensor.empty":
            return False
        if op.name == "arith.constant":
            return not _is_splat(op)
        if op.name in _RESHAPES:
            return self._known[op.operands[0]]
        if _is_elementwise_generic(op):
            return self._elementwise_varies(op, value.result_number)
        return True

    def _elementwise_varies(self, generic: Operation, result_number: int) -> bool:
        body = generic.regions[0].blocks[0]
        varying: set[Value] = {
            argument for argument, operand in zip(body.arguments, generic.operands) if self._known[operand]
        }
        for inner in body.operations:
            inner = inner.operation
            if len(inner.regions) > 0:
                return True  # uses inside nested regions are not followed
            if inner.name == "linalg.index" or any(operand in varying for operand in inner.operands):
                varying.update(inner.results)
        return terminator(body).operands[result_number] in varying


def _followed_operands(value: Value) -> list[Value]:
    """The operands whose variation decides `value`'s."""
    if not isinstance(value, OpResult):
        return []
    op = value.owner
    if op.name in _RESHAPES:
        return [op.operands[0]]
    if _is_elementwise_generic(op):
        return list(op.operands)
    return []


def _is_elementwise_generic(op: Operation) -> bool:
    return op.name == "linalg.generic" and not _is_reduction(op)


def _read_inputs(generic: Operation) -> list[int]:
    """The indices of the `ins` operands whose elements the body reads."""
    inputs = DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])[0]
    arguments = generic.regions[0].blocks[0].arguments
    return [i for i in range(inputs) if _is_used(arguments[i])]


def _is_used(argument: BlockArgument) -> bool:
    return any(True for _ in argument.uses)


def _is_reduction(generic: Operation) -> bool:
    return any(str(kind).endswith("reduction>") for kind in ArrayAttr(generic.attributes["iterator_types"]))


def _is_splat(constant: Operation) -> bool:
    try:
        return DenseElementsAttr(constant.attributes["value"]).is_splat
    except ValueError:  # a scalar or a resource: not a splat tensor
        return False
