"""Vendor kernels: ops Purity hands to PyTorch's own kernel by choice.

Inductor does not generate code for a convolution: it calls oneDNN (an
"extern kernel"). IREE does generate one, and on the CPU its code is several
times slower than oneDNN (docs/architecture.md, "Vendor kernels", has the
figures). So, compiling for the CPU, a large float32 2-d convolution runs
PyTorch's `aten.convolution` between compiled segments, through the same
machinery as the eager fallback (driver/segments.py): the program is split
at it, the rest compiled. Unlike a fallback this is a choice, not a failure,
so no EagerFallbackWarning is raised.

The split is taken only where it cannot cost more than it saves:
- not for training entries (the compiled segments run inference) nor for
  entries with runtime ints or dynamic dims (a segment is compiled for
  static sizes), where IREE's code runs instead;
- not where the program changes a tensor's metadata in place, which the
  segments cannot hand over;
- not for a small convolution (under `MIN_FLOPS`), where a segment
  boundary (tens of µs) costs more than oneDNN saves;
- not where the program writes more than `MAX_WRITTEN_BYTES` of its
  inputs: a split program keeps a copy of every input it writes, to
  restore on failure, and a copy of a whole cache per call is a cost eager
  does not have.

`torch_purity.compile(..., vendor_kernels=False)` (torch.compile option
`vendor_kernels`) compiles every op with IREE, as a saved program needs.
"""

from __future__ import annotations

import math

import torch
import torch.fx as fx

from ..iree.targets import get_target
from .segments import changes_metadata, written_placeholders

# Below this many floating-point operations a convolution stays in IREE's
# code: measured on Conv2d(C, C, 3) + ReLU (docs/architecture.md), the split
# cost 8% more at 1.2 MFLOP and 10% less at 4.7 MFLOP.
MIN_FLOPS = 4_000_000
# A split program copies the inputs it writes on every call.
MAX_WRITTEN_BYTES = 64 * 1024

REASON = "a vendor kernel (PyTorch's convolution, oneDNN) by choice: faster than IREE's code for it on the CPU"


def vendor_kernel_nodes(graph: fx.GraphModule, target: str) -> dict[fx.Node, str]:
    """The nodes of `graph` (a trace_to_aten graph of an inference entry
    with static sizes) to run with PyTorch's kernel, each with why."""
    if get_target(target).device_type != "cpu" or not torch.backends.mkldnn.is_available():
        return {}
    chosen = {node: REASON for node in graph.graph.nodes if _convolution_flops(node) >= MIN_FLOPS}
    if not chosen:
        return {}
    if any(changes_metadata(node) for node in graph.graph.nodes):
        return {}
    placeholders = [node for node in graph.graph.nodes if node.op == "placeholder"]
    written = sum(_bytes(placeholders[i]) for i in written_placeholders(graph, placeholders))
    if written > MAX_WRITTEN_BYTES:
        return {}
    return chosen


def _convolution_flops(node: fx.Node) -> int:
    """Multiply-adds x 2 of a float32 2-d convolution node (not transposed),
    0 for any other node."""
    if node.op != "call_function" or node.target is not torch.ops.aten.convolution.default:
        return 0
    values = [argument.meta.get("val") if isinstance(argument, fx.Node) else None for argument in node.args[:2]]
    result = node.meta.get("val")
    transposed = node.args[6] if len(node.args) > 6 else node.kwargs.get("transposed", False)
    if transposed or not all(isinstance(v, torch.Tensor) for v in [*values, result]):
        return 0
    source, weight = values
    if source.dtype != torch.float32 or source.device.type != "cpu" or source.dim() != 4 or weight.dim() != 4:
        return 0
    # Each output element sums over (input channels per group) x kernel window.
    return 2 * result.numel() * math.prod(weight.shape[1:])


def _bytes(node: fx.Node) -> int:
    value = node.meta.get("val")
    return value.numel() * value.element_size() if isinstance(value, torch.Tensor) else 0
