"""purity-refuse-unlowered-ops: a Torch op torch-mlir did not lower to linalg is an error at its own location.

Runs in the linalg stage, after torch-mlir's conversions (`convert-torch-to-
tmtensor`, `-linalg`, `-scf`, `-arith`, `-tensor`) and before its backend
type conversion. An op none of those conversions handles (`aten.copysign`,
`aten.diag_embed`, a `torch.vtensor.literal` of booleans, ...) stays in the
Torch dialect; torch-mlir's type conversion then fails on the first
`torch.constant.int` feeding it ("failed to legalize operation
'torch.constant.int'"), whose location names no op, so neither the user nor
the eager fallback (driver/segments.py) learns which op it was.

This pass reports every op of the Torch dialect still present (constants
and list constructions excepted: they remain only because such an op uses
them) as an error at the op's location, which names the ATen op and the
user's line, and fails. A module with none left is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import Operation

from ..ir_helpers.queries import walk
from .base import LocatedPassError, ModulePass

# Ops of the Torch dialect that remain only as operands of an unlowered op.
_OPERAND_ONLY = ("torch.constant.", "torch.prim.ListConstruct", "torch.prim.TupleConstruct")


@dataclass(frozen=True)
class RefuseUnloweredOps(ModulePass):
    """Reports each Torch op left after torch-mlir's conversions to linalg at its own location."""

    name = "purity-refuse-unlowered-ops"

    def apply(self, module: Operation) -> None:
        names = ((op, op.operation.name) for op in walk(module))
        left = [op for op, name in names if name.startswith("torch.") and not name.startswith(_OPERAND_ONLY)]
        self.for_each(left, _refuse)


def _refuse(op) -> None:
    operands = ", ".join(str(value.type) for value in op.operands)
    raise LocatedPassError(
        op.location,
        f"torch-mlir has no lowering of '{op.operation.name}' to linalg-on-tensors for operands ({operands})",
    )
