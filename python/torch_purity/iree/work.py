"""How much work one call of a compiled program does, estimated from its
linalg-on-tensors text: what the CPU target's choice of runtime driver
(`targets.Target.driver_for`) weighs against the cost of waking a thread pool.

Per op that takes `ins(...)` and `outs(...)` (linalg ops, and IREE's and
torch-mlir's ops of that form), its operand tensor types give the estimate:
- a contraction or convolution (`matmul`, `matvec`, `conv`, `dot`, ...):
  the square root of the product of its operands' element counts, which is
  M*N*K for a matmul and within a factor sqrt(kh*kw) of the multiply-adds
  of a convolution;
- a scatter (`tm_tensor.scatter`, `iree_linalg_ext.scatter`): its updates
  (the rows written, not the tensor written into);
- any other op (a `linalg.generic`, a fill): its largest operand, the
  iteration space it walks.
Dynamic dims count as 1: a program of dynamic sizes is estimated at its
smallest.
"""

from __future__ import annotations

import math
import re

_OP = re.compile(r"\b((?:linalg|tm_tensor|iree_linalg_ext)\.[\w.]+)\b[^\n]*?\bins\(([^)]*)\)[^\n]*?\bouts\(([^)]*)\)")
_TENSOR = re.compile(r"tensor<([^>]*)>")
_CONTRACTIONS = ("matmul", "matvec", "vecmat", "conv", "dot", "contract")


def _elements(tensor_type: str) -> int:
    dims = tensor_type.split("x")[:-1]  # the last part is the element type
    return math.prod(int(d) if d.isdigit() else 1 for d in dims)


def estimated_work(linalg_text: str) -> int:
    """Element operations one call does, about (see the module's docstring)."""
    total = 0
    for match in _OP.finditer(linalg_text):
        name = match.group(1)
        ins = [_elements(t) for t in _TENSOR.findall(match.group(2))]
        outs = [_elements(t) for t in _TENSOR.findall(match.group(3))]
        operands = ins + outs
        if not operands:
            continue
        if "scatter" in name:
            total += ins[0] if ins else 0
        elif any(kind in name for kind in _CONTRACTIONS):
            total += int(math.sqrt(math.prod(operands)))
        else:
            total += max(operands)
    return total
