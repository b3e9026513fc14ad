"""Whether a CPU program is compiled with IREE's data tiling
(`--iree-dispatch-creation-data-tiling`), decided per program from the
matrix products in its linalg-on-tensors text.

Data tiling relays out a product's operands into tiles its kernel reads in
order (a pack dispatch per operand, every call: the operands are the
caller's tensors, not constants). Measured on this project's 2-core AMD EPYC
(KVM) machine, `torch_purity.compile(a @ b)`, 200 shuffled rounds, data
tiling against without, median of the per-round ratios:

| product (M×K @ K×N)       | ratio | without, µs |
|---------------------------|-------|-------------|
| 512×512 @ 512×512         | 0.67  | 5722        |
| 64×256 @ 256×512          | 0.80  | 382         |
| 64×256 @ 512×256ᵀ+bias     | 0.92  | 321         |
| 4×(256×64 @ 64×256)       | 0.91  | 618         |
| 256×256 @ 256×256         | 0.96  | 524         |
| 128×128 @ 128×128         | 1.06  | 107         |
| 8×(128×64 @ 64×128)       | 1.09  | 302         |
| 64×64 @ 64×64             | 1.09  | 49          |
| 1×256 @ 256×256           | 1.28  | 57          |
| 8×512 @ 512×512ᵀ+bias      | 1.61  | 118         |
| 2048×256 @ 256×1          | 1.53  | 205         |

Large products with both result sides ≥ 64 gain about 10 µs per million
multiply-adds; a narrow one (a side under 64, as a decode step's
matrix-vector products) or a small one loses about 0.25 µs per thousand
operand elements, the packing. The flag holds for the whole program, so the
gain of the large products is weighed against the packing of the others
(`gain_microseconds`): the MLP training step of benchmarks/compare_systems.py
(two 64×256×512 products, three narrow ones) ran 5% faster with it; the
attention decode step (matrix-vector products only) would run 1.7x slower
and keeps the default.

`PURITY_IREE_DATA_TILING=on|off` overrides the choice (for measurements
and tests); the default is this estimate. Only the CPU target takes it."""

from __future__ import annotations

import math
import os
import re

FLAG = "--iree-dispatch-creation-data-tiling=true"

# Linear fits of the table above (µs).
_GAIN_PER_WIDE_MAC = 10e-6
_COST_PER_PACKED_ELEMENT = 0.25e-3
_WIDE_SIDE = 64
_WIDE_MACS = 4_000_000  # per matrix (per batch element)

# `linalg.matmul ins(%a, %b : tensor<64x256xf32>, tensor<256x512xf32>) outs(%c : tensor<64x512xf32>)`,
# with or without `indexing_maps = [...]` (transposed operands) before `ins`.
_PRODUCT = re.compile(
    r"linalg\.(?P<op>batch_matmul|matmul|batch_matvec|batch_vecmat|matvec|vecmat)\b[^\n]*?"
    r"ins\([^:\n]*:\s*tensor<(?P<a>[^>]*)>,\s*tensor<(?P<b>[^>]*)>\)\s*"
    r"outs\([^:\n]*:\s*tensor<(?P<out>[^>]*)>\)"
)


def _dims(tensor_type: str) -> list[int] | None:
    """`64x256xf32` -> [64, 256]; None for a dynamic size."""
    *sizes, _element = tensor_type.split("x")
    if any(not size.isdigit() for size in sizes):
        return None
    return [int(size) for size in sizes]


def gain_microseconds(linalg_text: str) -> float | None:
    """The estimated time data tiling saves per call (negative: it costs);
    None where a product has a dynamic size (the default is kept)."""
    gain = 0.0
    for product in _PRODUCT.finditer(linalg_text):
        a, b, out = (_dims(product.group(k)) for k in ("a", "b", "out"))
        if a is None or b is None or out is None:
            return None
        op = product.group("op")
        batch = out[0] if op.startswith("batch_") else 1
        a_elements, b_elements, out_elements = math.prod(a), math.prod(b), math.prod(out)
        if not (a_elements and b_elements and out_elements):
            continue
        # Each operand holds K per result row (or column) and batch element,
        # transposed or not: a·b = out·batch·K².
        reduction = math.isqrt(a_elements * b_elements // (out_elements * batch))
        multiply_adds = out_elements * reduction
        wide = op.endswith("matmul") and min(out[-2:]) >= _WIDE_SIDE
        if wide and multiply_adds // batch >= _WIDE_MACS:
            gain += _GAIN_PER_WIDE_MAC * multiply_adds
        else:
            gain -= _COST_PER_PACKED_ELEMENT * (a_elements + b_elements)
    return gain


def data_tiling_flags(linalg_text: str, device_type: str) -> tuple[str, ...]:
    """The data-tiling flag where it is estimated to win (CPU only)."""
    if device_type != "cpu":
        return ()
    forced = os.environ.get("PURITY_IREE_DATA_TILING", "").lower()
    if forced in ("on", "1"):
        return (FLAG,)
    if forced in ("off", "0"):
        return ()
    gain = gain_microseconds(linalg_text)
    return (FLAG,) if gain is not None and gain > 0 else ()
