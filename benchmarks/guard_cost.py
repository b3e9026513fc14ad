"""Cost of the compiled callable's call-time guard (the input signature:
shapes, dtypes, strides, storage offsets, storage sharing; for captured
state, re-reading the path to each captured tensor and its layout) beside
the cost of a whole call, measured in the same run.

    .venv/bin/python benchmarks/guard_cost.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import torch_purity
from torch_purity.iree.runtime import SignatureRepeat, input_signature


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

    # Captured state: an MLP of 4 Linear layers closed over (8 captured tensors).
    model = torch.nn.Sequential(*(torch.nn.Linear(64, 64) for _ in range(4)))
    with torch.no_grad():
        captured = torch_purity.compile(lambda x: model(x))
        x = torch.randn(8, 64)
        captured(x)
        entry, leaves = captured.entry_for(x)
        guard = median_microseconds(lambda: (input_signature(leaves), entry.still_valid(leaves)), args.calls)
        call = median_microseconds(lambda: captured(x), args.calls)
    label = f"{len(entry.captured)} captured tensors"
    print(f"{label:>18}: guard {guard:6.1f} µs, whole call {call:7.1f} µs, guard share {guard / call:5.1%}")

    # An optimizer step's 150 tensors (SGD with momentum over 50 parameters),
    # new gradients each call: the signature walk and the cache lookup
    # against the check that the call repeats the last one's signature.
    params = [torch.randn(256, 256) for _ in range(50)]
    buffers = [torch.zeros(256, 256) for _ in range(50)]
    fresh_grads = [[torch.randn(256, 256) for _ in range(50)] for _ in range(2)]
    leaves_per_call = [[*params, *grads, *buffers, 0.1] for grads in fresh_grads]
    cache = {input_signature(leaves_per_call[0], requiring_grad=[]): None}
    repeat = SignatureRepeat.of(leaves_per_call[0])
    rounds = iter(range(10**9))

    def walk_and_lookup() -> None:
        leaves = leaves_per_call[next(rounds) % 2]
        assert input_signature(leaves, requiring_grad=[]) in cache

    def repeat_check() -> None:
        assert repeat.holds(leaves_per_call[next(rounds) % 2])

    walk = median_microseconds(walk_and_lookup, args.calls)
    check = median_microseconds(repeat_check, args.calls)
    print(f"{'150 tensors':>18}: signature walk + lookup {walk:6.1f} µs, repeat check {check:6.1f} µs")


if __name__ == "__main__":
    main()
