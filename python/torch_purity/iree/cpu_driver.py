"""Which IREE runtime driver runs a CPU program, decided per program from the
sizes of the linalg ops in its linalg-on-tensors text.

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
The pool's cost is per dispatch and its gain per element, so the choice
weighs the work of an average op: a program goes to the pool where the
mean, over its linalg ops, of each op's largest operand or result (the
op's iteration space) is at least POOL_MEAN_ELEMENTS elements. The
programs of the table: BatchNorm's 23 ops average 103k elements at 262k
and 410k at 1M, the update's 7 ops 187k at 262k and 749k at 1M; the
benchmark's BatchNorm 5.0M, its attention decode step 66k (two products
over 512k among 16 ops). One large op among many small ones keeps the
calling thread, where the pool's per-dispatch cost would outweigh that
op's gain (reasoned from the table, not measured on a whole model). Ops that write a few rows
into a large tensor (`tensor.insert_slice`, `tensor.scatter`: a KV-cache
write) are not linalg ops and do not count; dynamic sizes count as none.

Before this choice every CPU program ran on the calling thread; the pool
had lost whenever it was forced for everything: SGD over 50×256×256
parameters (54 dispatches of 65k elements) took 6.26 ms on the pool
against 2.85 ms on the calling thread (2026-12-04), 2494 against 2453 µs
even without program-order scheduling (2026-12-05).

`PURITY_IREE_CPU_DRIVER=local-sync|local-task` overrides the choice for
every program (`Target.runtime_driver` reads it when a program is
compiled, for measurements and tests)."""

from __future__ import annotations

import math
import re

POOL = "local-task"
CALLING_THREAD = "local-sync"
POOL_MEAN_ELEMENTS = 1 << 18

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


def linalg_op_elements(linalg_text: str) -> list[int]:
    """Per linalg op, the most elements one of its operands or results holds
    (0 where all its sizes are dynamic)."""
    sizes = []
    for line in linalg_text.splitlines():
        if _LINALG_OP.search(line):
            static = (_static_elements(t) for t in _TENSOR.findall(line))
            sizes.append(max((e for e in static if e is not None), default=0))
    return sizes


def cpu_driver(linalg_text: str) -> str:
    """The driver for this CPU program: the pool where its linalg ops span
    POOL_MEAN_ELEMENTS elements or more on average, the calling thread
    otherwise."""
    sizes = linalg_op_elements(linalg_text)
    return POOL if sizes and sum(sizes) >= POOL_MEAN_ELEMENTS * len(sizes) else CALLING_THREAD
