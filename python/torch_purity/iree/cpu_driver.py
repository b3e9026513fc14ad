"""Which IREE runtime driver runs a CPU program, decided per program from the
largest linalg op in its linalg-on-tensors text.

`local-sync` runs every dispatch on the calling thread; `local-task` hands
them to IREE's worker pool (one worker per core here). The pool costs about
35 µs per dispatch (scheduling in program order,
IREE-WORKAROUND(stream-program-order) in targets.py, and waking workers)
and gains only where one dispatch has enough work to split. Measured on this
project's 2-core AMD EPYC (KVM) machine, `torch_purity.compile`, the two
drivers' copies of one program timed in shuffled rounds (pool / calling
thread, median of the per-round ratios):

| program                                   | elements | pool / thread | thread, µs |
|-------------------------------------------|----------|---------------|------------|
| BatchNorm in training mode (16×64×256×1)  | 262k     | 1.25          | 254        |
| the same, 16×64×1024×1                    | 1M       | 0.67          | 1014       |
| the same, 16×64×4096×1                    | 4M       | 0.61          | 5220       |
| pointwise update `p.mul_(0.9).add_(g)`    | 262k     | 1.23          | 338        |
| the same                                  | 1M       | 0.93          | 1458       |
| the same                                  | 4M       | 1.00          | 6664       |

In benchmarks/compare_systems.py, run whole with each driver forced
(2026-12-06): only BatchNorm over 64×256×28×28 gained (1.47x inductor on the
calling thread, 1.24x on the pool); every other workload lost, up to 2-3x
for the one-row KV writes and the decode steps, whose dispatches are small.
So a program goes to the pool where one of its linalg ops spans at least
POOL_ELEMENTS elements (an operand or result of that size, the op's
iteration space); other programs, and programs whose largest sizes are
dynamic, stay on the calling thread. Ops that write a few rows into a large
tensor (`tensor.insert_slice`, `tensor.scatter`: a KV-cache write) are not
linalg ops and do not count.

Before this choice every CPU program ran on the calling thread; the pool
had lost whenever it was forced for everything: SGD over 50×256×256
parameters (54 dispatches of 65k elements) took 6.26 ms on the pool
against 2.85 ms on the calling thread (2026-12-04), 2494 against 2453 µs
even without program-order scheduling (2026-12-05).

`PURITY_IREE_CPU_DRIVER=local-sync|local-task` overrides the choice for
every program (read when a program is compiled, for measurements and
tests)."""

from __future__ import annotations

import math
import os
import re

POOL = "local-task"
CALLING_THREAD = "local-sync"
POOL_ELEMENTS = 1 << 20

# A linalg op's first line: `%5 = linalg.generic {...} ins(%3 : tensor<64x256xf32>) outs(...)`;
# `linalg.yield` and `linalg.index` sit inside a region and name no tensor.
_LINALG_OP = re.compile(r"(?<![\w.])linalg\.(?!yield\b|index\b)\w+")
_TENSOR = re.compile(r"tensor<([^>]*)>")


def _static_elements(tensor_type: str) -> int | None:
    """`64x256xf32` -> 16384; `f32` -> 1; None with a dynamic size."""
    *sizes, _element = tensor_type.split("x")
    if any(not size.isdigit() for size in sizes):
        return None
    return math.prod(int(size) for size in sizes)


def largest_linalg_op_elements(linalg_text: str) -> int:
    """The most elements any linalg op's operand or result holds (dynamic sizes count as none)."""
    largest = 0
    for line in linalg_text.splitlines():
        if not _LINALG_OP.search(line):
            continue
        for tensor_type in _TENSOR.findall(line):
            elements = _static_elements(tensor_type)
            if elements is not None and elements > largest:
                largest = elements
    return largest


def cpu_driver(linalg_text: str) -> str:
    """The driver for this CPU program: the pool where a linalg op spans at
    least POOL_ELEMENTS elements, the calling thread otherwise."""
    forced = os.environ.get("PURITY_IREE_CPU_DRIVER")
    if forced:
        return forced
    return POOL if largest_linalg_op_elements(linalg_text) >= POOL_ELEMENTS else CALLING_THREAD
