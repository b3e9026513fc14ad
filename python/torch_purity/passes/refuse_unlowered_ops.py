"""purity-refuse-unlowered-ops: a Torch op torch-mlir did not lower to linalg is an error at its own location.

Runs in the linalg stage, after torch-mlir's conversions (`convert-torch-to-
tmtensor`, `-linalg`, `-scf`, `-arith`, `-tensor`) and before its backend
type conversion. An op none of those conversions handles (`aten.copysign`,
`aten.view.dtype`, `aten.diagonal_copy`, ...) stays in the
Torch dialect; torch-mlir's type conversion then fails on the first
`torch.constant.int` feeding it ("failed to legalize operation
'torch.constant.int'"), whose location names no op, so neither the user nor
the eager fallback (driver/segments.py) learns which op it was.

This pass reports every ATen op (`torch.aten.*`, `torch.prims.*`) still
present as an error at the op's location, which names the ATen op and the
user's line, and fails. Other Torch-dialect ops are left to the passes after
it (the backend type conversion turns a `torch.vtensor.literal` into an
`arith.constant`, and constants and lists remain only as operands). A module
with no ATen op left is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import Operation

from ..ir_helpers.queries import walk
from .base import LocatedPassError, ModulePass

_ATEN_OPS = ("torch.aten.", "torch.prims.")


@dataclass(frozen=True)
class RefuseUnloweredOps(ModulePass):
    """Reports each ATen op left after torch-mlir's conversions to linalg at its own location."""

    name = "purity-refuse-unlowered-ops"

    def apply(self, module: Operation) -> None:
        names = ((op, op.operation.name) for op in walk(module))
        left = [op for op, name in names if name.startswith(_ATEN_OPS)]
        self.for_each(left, _refuse)


def _refuse(op) -> None:
    operands = ", ".join(str(value.type) for value in op.operands)
    raise LocatedPassError(
        op.location,
        f"torch-mlir has no lowering of '{op.operation.name}' to linalg-on-tensors for operands ({operands})",
    )
