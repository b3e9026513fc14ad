"""Vendor kernels: ops Purity hands to PyTorch's own kernel by choice.

Inductor does not generate code for a convolution or, on the CPU, for a
matrix product: it calls oneDNN and MKL ("extern kernels"). IREE does
generate them, and on the CPU its convolution is several times slower than
oneDNN, and its products run on one core where MKL uses every thread
(docs/architecture.md, "Vendor kernels", has the figures). So, compiling
for the CPU, these run PyTorch's own kernel between compiled segments,
through the same machinery as the eager fallback (driver/segments.py): the
program is split at them, the rest compiled. Unlike a fallback this is a
choice, not a failure, so no EagerFallbackWarning is raised:
- a large float32 2-d convolution (`MIN_FLOPS`), in inference and in
  training entries;
- in training entries, a large float32 matrix product (`aten.mm`,
  `aten.addmm`; `MIN_MATMUL_FLOPS`): its backward's products then run in
  MKL too, through autograd. (In an inference entry the forward's product
  alone does not pay for the segment boundary: left to IREE.)

A training entry with vendor kernels splits its forward graph: each
compiled segment is a training program of its own (its own joint graph,
forward and backward), the vendor op between them runs with autograd, and
autograd joins them, as it joins eager ops. Where such a split cannot be
compiled (a segment writing in place a tensor that requires grad, which a
training program refuses), the entry is compiled whole instead.

The split is taken only where it cannot cost more than it saves:
- not for entries with runtime ints or dynamic dims (a segment is compiled
  for static sizes), where IREE's code runs instead;
- not where the program changes a tensor's metadata in place, which the
  segments cannot hand over;
- not for a small op (under `MIN_FLOPS` or `MIN_MATMUL_FLOPS`), where a
  segment boundary (tens of µs) costs more than the vendor kernel saves;
- not where the program writes more than `MAX_WRITTEN_BYTES` of its
  inputs (all it writes counts, though a split program copies only what
  its steps before a compiled last one write, to restore on failure): a
  copy of a whole cache per call is a cost eager does not have.

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
# The same for a training entry's matrix product (its forward's flops; the
# backward's products are as large). Measured on the MLP training step of
# benchmarks/compare_systems.py (Linear(w, 2w) + BatchNorm1d + ReLU +
# Linear(2w, 10), batch 64) through torch.compile, split against whole:
# 1.07x at w=256 (16.8 MFLOP), 0.93x at w=384 (37.7), 0.82x at w=512 (67).
MIN_MATMUL_FLOPS = 32_000_000
# A split program may copy the inputs it writes on every call (its steps before a compiled last one).
MAX_WRITTEN_BYTES = 64 * 1024

REASON = "a vendor kernel (PyTorch's convolution, oneDNN) by choice: faster than IREE's code for it on the CPU"
MATMUL_REASON = (
    "a vendor kernel (PyTorch's matrix product, MKL, and its backward's) by choice: "
    "faster than IREE's code for it on the CPU"
)


def vendor_kernel_nodes(graph: fx.GraphModule, target: str, training: bool = False) -> dict[fx.Node, str]:
    """The nodes of `graph` (a trace_to_aten graph of an entry with static
    sizes; of a training entry's forward, or its joint graph to find
    whether its forward has any) to run with PyTorch's kernel, each with why."""
    if get_target(target).device_type != "cpu" or not torch.backends.mkldnn.is_available():
        return {}
    chosen = {node: REASON for node in graph.graph.nodes if _convolution_flops(node) >= MIN_FLOPS}
    if training:
        chosen.update({node: MATMUL_REASON for node in graph.graph.nodes if _matmul_flops(node) >= MIN_MATMUL_FLOPS})
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


def _matmul_flops(node: fx.Node) -> int:
    """Multiply-adds x 2 of a float32 product of two matrices (`aten.mm`,
    `aten.addmm`) on the CPU, 0 for any other node."""
    if node.op != "call_function" or node.target not in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default):
        return 0
    operands = node.args[1:3] if node.target is torch.ops.aten.addmm.default else node.args[:2]
    values = [argument.meta.get("val") if isinstance(argument, fx.Node) else None for argument in operands]
    if not all(isinstance(v, torch.Tensor) and v.dim() == 2 for v in values):
        return 0
    left, right = values
    if left.dtype != torch.float32 or right.dtype != torch.float32 or left.device.type != "cpu":
        return 0
    return 2 * left.shape[0] * left.shape[1] * right.shape[1]
