"""Cost of the compiled callable's call-time guard (the input signature:
shapes, dtypes, strides, storage offsets, storage sharing) beside the cost of
a whole call, measured in the same run.

    .venv/bin/python benchmarks/guard_cost.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import torch_purity
from torch_purity.iree.runtime import input_signature


def write_row(cache, row, other):
    cache[3].copy_(row)
    return other + 1


def median_microseconds(function, calls: int) -> float:
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    compiled = torch_purity.compile(write_row)
    for label, inputs in (
        ("3 distinct inputs", (torch.zeros(1024, 64), torch.randn(64), torch.randn(64))),
        ("2 of 3 aliased", (lambda cache: (cache, cache[5], torch.randn(64)))(torch.zeros(1024, 64))),
    ):
        compiled(*inputs)  # compile outside the timing
        guard = median_microseconds(lambda inputs=inputs: input_signature(list(inputs)), args.calls)
        call = median_microseconds(lambda inputs=inputs: compiled(*inputs), args.calls)
        print(f"{label:>18}: guard {guard:6.1f} µs, whole call {call:7.1f} µs, guard share {guard / call:5.1%}")


if __name__ == "__main__":
    main()
