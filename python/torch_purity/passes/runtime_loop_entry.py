"""purity-runtime-loop-entry: a while loop whose first test folded to true stays a while loop.

Runs in the linalg stage, between torch-mlir's `convert-torch-to-linalg`
(and the canonicalization after it) and its `convert-torch-to-scf`.
torch-mlir's TorchToSCF lowers a `torch.prim.Loop` whose initial condition
is the constant `true` as a for-loop from 0 to its trip count, dropping the
condition the body computes for the next iteration (it looks at the initial
condition only). The import of `while_loop` gives a trip count of INT64_MAX
and a first test computed from the carried values; where those are
constants (`while_loop(lambda i, x: i < 3, ..., (torch.zeros(()), x))`),
canonicalization folds the first test to `true`, and the compiled loop never
ended (measured: the call hung). Any constant true reaching TorchToSCF is
folded to one first, so the pass runs right before it.

The pass gives such a loop (initial condition the constant `true`, a body
condition that is not) the initial condition `torch_c.from_i1` of an
`arith.constant true`: the same value, but not a Torch constant, so the
loop is lowered while-like (`scf.while`). A loop whose body condition is
the constant `true` is a for-loop and is left alone.

TORCH-MLIR-WORKAROUND(for-like-while): remove the pass when
test_control_flow.py's `constant_first_test` program compiles and matches
eager without it on a new torch-mlir.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import BoolAttr, InsertionPoint, IntegerType, Operation, Type

from ..ir_helpers.functions import terminator
from ..ir_helpers.queries import walk
from ..ir_helpers.torch_values import NotConstant, constant_of
from .base import ModulePass


@dataclass(frozen=True)
class RuntimeLoopEntry(ModulePass):
    """Gives a while loop whose first test folded to true a non-constant initial condition (torch-mlir's lowering)."""

    name = "purity-runtime-loop-entry"

    def apply(self, module: Operation) -> None:
        for op in [op for op in walk(module) if op.name == "torch.prim.Loop"]:
            if _is_true(op.operands[1]) and not _is_true(terminator(op.regions[0].blocks[0]).operands[0]):
                _enter_at_run_time(op)


def _is_true(value) -> bool:
    try:
        return constant_of(value) is True
    except NotConstant:
        return False


def _enter_at_run_time(loop: Operation) -> None:
    with InsertionPoint(loop), loop.location:
        i1 = IntegerType.get_signless(1)
        true = Operation.create("arith.constant", results=[i1], attributes={"value": BoolAttr.get(True)}).result
        entry = Operation.create("torch_c.from_i1", results=[Type.parse("!torch.bool")], operands=[true])
    loop.operands[1] = entry.result
