"""purity-split-scalar-dispatches: caps how many rank-0 computations IREE gathers into one dispatch.

Runs on linalg-on-tensors, in the iree-abi stage. IREE 3.13 gathers the
rank-0 (scalar) `linalg.generic`s that follow one another in a function into
a single dispatch, however many and however unrelated they are; the
dispatch then takes one binding per tensor it reads or writes. Its CPU
runtime refuses an executable whose dispatch needs more than 64 bindings
("dispatch requiring 150 bindings exceeds limit of 64", on local-sync and
local-task alike, when the module is loaded): a `foreach` Adam step over 50
parameters computes each parameter's bias corrections from its own 0-d step
counter, and IREE made one dispatch of all 500 scalar ops, 50 counters in
and 100 values out. Any optimizer step over more than about 20 parameters
failed.

The pass passes every `max_run`-th rank-0 generic's result, in block order,
through `util.optimization_barrier` (an IREE op, in generic form), which IREE
does not gather into a scalar dispatch: each run of scalar ops between two
barriers becomes a dispatch of its own, far below the binding limit. The
values and their order are unchanged; the cost is one more small dispatch
per `max_run` scalar ops.

IREE-WORKAROUND(scalar-dispatch-bindings): remove the pass when
test_training.py's optimizer step over 60 parameters passes without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import InsertionPoint, Operation, RankedTensorType

from ...ir_helpers.functions import function_ops
from ...passes.base import ModulePass
from .linalg_builders import barrier


@dataclass(frozen=True)
class SplitScalarDispatches(ModulePass):
    """Passes every max_run-th rank-0 linalg.generic result through a barrier, so no dispatch gathers too many."""

    name = "purity-split-scalar-dispatches"
    max_run: int = 8  # rank-0 generics between two barriers (each reads and writes a few bindings)

    def apply(self, module: Operation) -> None:
        # The barrier belongs to IREE's util dialect, unknown to torch-mlir.
        module.context.allow_unregistered_dialects = True
        for function in function_ops(module):
            self._split(function)

    def _split(self, function: Operation) -> None:
        run = 0
        for op in [o.operation for o in function.regions[0].blocks[0].operations]:
            if op.name != "linalg.generic" or len(op.results) != 1 or not _is_rank_zero(op.results[0].type):
                continue
            run += 1
            if run < self.max_run:
                continue
            run = 0
            result = op.results[0]
            uses = list(result.uses)
            with InsertionPoint.after(op), op.location:
                kept = barrier(result)
            for use in uses:
                use.owner.operands[use.operand_number] = kept


def _is_rank_zero(value_type) -> bool:
    return isinstance(value_type, RankedTensorType) and RankedTensorType(value_type).rank == 0
