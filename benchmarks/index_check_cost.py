"""Cost of the index bounds checks (purity-check-indices) per call, measured
round robin in one run: each workload compiled with the checks (as Purity
always compiles) and without them (the pass removed from the pipeline, for
this measurement only), one call of each per round.

    .venv/bin/python benchmarks/index_check_cost.py [--rounds 3000]

Prints per workload the median µs per call of both, the overhead of the
checks (ratio of medians - 1) and the spread of the per-round ratio
(10th-90th percentile). Target: at most 10% of a call.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F

# The unchecked variant is built by editing the stage list in this process.
os.environ["PURITY_LOWER_IN_PROCESS"] = "1"

import torch_purity  # noqa: E402
from torch_purity.driver import lowering  # noqa: E402
from torch_purity.pipeline import STAGES, Stage  # noqa: E402


def embedding_lookup(weight, ids):
    return F.embedding(ids, weight)


def decode_step(cache, row, ids, weight):
    """A KV-cache row written in place at a fixed position, and a token embedding."""
    cache[5].copy_(row)
    return F.embedding(ids, weight).sum(0)


def kv_write_at_tensor_position(cache, position, row):
    cache.index_copy_(0, position, row)
    return cache[:8].sum(0)


def gather_rows(x, index):
    return x[index] * 2


WORKLOADS = [
    (
        "embedding 16 ids, 32000x64 table",
        embedding_lookup,
        lambda: (torch.randn(32000, 64), torch.randint(0, 32000, (16,))),
    ),
    (
        "decode step: KV row write (1k rows) + embedding",
        decode_step,
        lambda: (torch.zeros(1024, 64), torch.randn(64), torch.randint(0, 32000, (4,)), torch.randn(32000, 64)),
    ),
    (
        "KV write by index_copy_ (1k rows)",
        kv_write_at_tensor_position,
        lambda: (torch.zeros(1024, 64), torch.tensor([7]), torch.randn(1, 64)),
    ),
    (
        "advanced indexing x[idx], 4096x64",
        gather_rows,
        lambda: (torch.randn(4096, 64), torch.randint(-4096, 4096, (64,))),
    ),
]


def compile_without_checks(function, inputs):
    checked_stages = lowering.STAGES
    lowering.STAGES = tuple(Stage(s.name, tuple(p for p in s.work if p != "purity-check-indices")) for s in STAGES)
    try:
        compiled = torch_purity.compile(function)
        compiled(*inputs)
        return compiled
    finally:
        lowering.STAGES = checked_stages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3000)
    args = parser.parse_args()
    print(f"{'workload':<48} {'checked µs':>10} {'unchecked µs':>12} {'overhead':>9} {'spread (p10-p90)':>18}")
    for label, function, make_inputs in WORKLOADS:
        inputs = make_inputs()
        checked = torch_purity.compile(function)
        checked(*inputs)
        unchecked = compile_without_checks(function, inputs)
        assert checked.cache[next(iter(checked.cache))].convention.index_checks is not None
        assert unchecked.cache[next(iter(unchecked.cache))].convention.index_checks is None
        torch.testing.assert_close(checked(*inputs), unchecked(*inputs))
        times: dict[str, list[float]] = {"checked": [], "unchecked": []}
        for _ in range(args.rounds):
            for name, compiled in (("checked", checked), ("unchecked", unchecked)):
                start = time.perf_counter()
                compiled(*inputs)
                times[name].append(time.perf_counter() - start)
        ratios = sorted(c / u for c, u in zip(times["checked"], times["unchecked"]))
        median_checked = statistics.median(times["checked"]) * 1e6
        median_unchecked = statistics.median(times["unchecked"]) * 1e6
        low, high = ratios[len(ratios) // 10] - 1, ratios[(9 * len(ratios)) // 10] - 1
        print(
            f"{label:<48} {median_checked:>10.1f} {median_unchecked:>12.1f} "
            f"{median_checked / median_unchecked - 1:>+9.1%} {f'{low:+.0%} .. {high:+.0%}':>18}"
        )


if __name__ == "__main__":
    main()
