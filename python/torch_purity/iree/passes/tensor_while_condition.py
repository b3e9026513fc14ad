"""purity-tensor-while-condition: the condition of torch-mlir's `scf.while` carried as a tensor, for IREE.

Runs on linalg-on-tensors, first in the iree-abi stage. torch-mlir lowers a
while-like `torch.prim.Loop` (Purity's import of `while_loop`) to

    scf.while (%c = %first_test, %t = %init) : (i1, T...) -> (T...) {
      scf.condition(%c) %t
    } do {
    ^bb0(%t: T...):
      ... the body, then the next test %c2 ...
      scf.yield %c2, %t2 : i1, T...
    }

IREE 3.13's stream conversion of `scf.while` fails on it: a scalar loop
operand ("failed to legalize unresolved target materialization from ('i1')
to ('!stream.resource<*>', 'index')", any scalar type), and, once the
condition is a tensor, regions whose argument lists differ ("region
branch point has 4 operands, but region successor needs 6 inputs"). The
pass rewrites that form into one IREE compiles: the condition is a 0-d
`tensor<i8>` carried by both regions (the before region extracts and
tests it, and forwards every operand; the body combines its next test
with the one it entered under, so the canonicalizer cannot drop the
forwarded tensor as unused). Same semantics: the body runs while the last
test held. Other `scf.while` forms are left alone.

IREE-WORKAROUND(scalar-while-operands): remove the pass when
test_control_flow.py's while_loop programs compile and match eager without
it on a new IREE.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    Block,
    InsertionPoint,
    IntegerAttr,
    IntegerType,
    Operation,
    RankedTensorType,
    Value,
)

from ...ir_helpers.queries import walk
from ...passes.base import ModulePass


@dataclass(frozen=True)
class TensorWhileCondition(ModulePass):
    """Carries the condition of torch-mlir's scf.while as a tensor<i8> through both regions (IREE's scf.while)."""

    name = "purity-tensor-while-condition"

    def apply(self, module: Operation) -> None:
        for op in [op for op in walk(module) if op.name == "scf.while" and _torch_mlir_while_form(op)]:
            _rewrite(op)


def _torch_mlir_while_form(op: Operation) -> bool:
    before = op.regions[0].blocks[0]
    operations = list(before.operations)
    if len(operations) != 1 or operations[0].name != "scf.condition":
        return False
    condition = operations[0]
    arguments = list(before.arguments)
    return (
        len(arguments) >= 1
        and str(arguments[0].type) == "i1"
        and list(condition.operands) == arguments
        and not any(str(a.type) == "i1" for a in arguments[1:])
    )


def _i8_constant(value: int, loc) -> Value:
    i8 = IntegerType.get_signless(8)
    return Operation.create(
        "arith.constant", results=[i8], attributes={"value": IntegerAttr.get(i8, value)}, loc=loc
    ).result


def _as_tensor(scalar: Value, loc) -> Value:
    i8 = IntegerType.get_signless(8)
    widened = Operation.create("arith.extui", results=[i8], operands=[scalar], loc=loc).result
    return Operation.create(
        "tensor.from_elements", results=[RankedTensorType.get([], i8)], operands=[widened], loc=loc
    ).result


def _extract(tensor: Value, loc) -> Value:
    return Operation.create("tensor.extract", results=[IntegerType.get_signless(8)], operands=[tensor], loc=loc).result


def _rewrite(op: Operation) -> None:
    loc = op.location
    with op.context, loc:
        i8_tensor = RankedTensorType.get([], IntegerType.get_signless(8))
        carried_types = [v.type for v in op.results]
        with InsertionPoint(op):
            initial = _as_tensor(op.operands[0], loc)
            loop = Operation.create(
                "scf.while",
                results=[i8_tensor, *carried_types],
                operands=[initial, *list(op.operands)[1:]],
                regions=2,
                loc=loc,
            )
        before = Block.create_at_start(loop.regions[0], [i8_tensor, *carried_types])
        with InsertionPoint(before):
            tested = Operation.create(
                "arith.cmpi",
                results=[IntegerType.get_signless(1)],
                operands=[_extract(before.arguments[0], loc), _i8_constant(0, loc)],
                attributes={"predicate": IntegerAttr.get(IntegerType.get_signless(64), 1)},  # ne
                loc=loc,
            ).result
            Operation.create("scf.condition", operands=[tested, *before.arguments], loc=loc)

        old_after = op.regions[1].blocks[0]
        after = Block.create_at_start(loop.regions[1], [i8_tensor, *carried_types])
        for old, new in zip(old_after.arguments, list(after.arguments)[1:], strict=True):
            old.replace_all_uses_with(new)
        for inner in list(old_after.operations):
            inner.detach_from_parent()
            after.append(inner)
        old_yield = list(after.operations)[-1]
        with InsertionPoint(old_yield):
            still = Operation.create(
                "arith.andi",
                results=[IntegerType.get_signless(8)],
                operands=[
                    Operation.create(
                        "arith.extui", results=[IntegerType.get_signless(8)], operands=[old_yield.operands[0]]
                    ).result,
                    _extract(after.arguments[0], loc),
                ],
            ).result
            next_test = Operation.create("tensor.from_elements", results=[i8_tensor], operands=[still]).result
            Operation.create("scf.yield", operands=[next_test, *list(old_yield.operands)[1:]])
        old_yield.erase()
        for old, new in zip(op.results, list(loop.results)[1:], strict=True):
            old.replace_all_uses_with(new)
        op.erase()
