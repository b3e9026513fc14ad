"""Cost of an eager-fallback boundary (driver/segments.py).

One program, `stages` pointwise updates of a tensor, written three ways and
timed round robin in one run (one call of each per round, median per
system, differences computed round by round, p10-p90 spread):

- eager: the program in PyTorch, with a custom op (eager only) between stages;
- purity, one segment: the same program without the custom op, which
  Purity compiles whole;
- purity, segmented: with the custom op (`torch.library.custom_op`, writing
  its argument in place), which Purity runs in eager: `stages - 1` boundaries;
- the custom op alone, called `stages - 1` times in eager;
- the steps called directly: the segmented entry's compiled steps and the
  custom op, called one after the other from a plain loop.

Per boundary, two figures: (segmented - one segment - custom op alone) /
boundaries, what a boundary costs in all (one more compiled call and the
fusion the split prevents: each stage becomes a pass over the tensor of its
own), and (segmented - steps called directly) / boundaries, what the fallback's
own orchestration adds (rebuilding views, handing tensors over). Two sizes
(1k and 1M floats): a boundary that copied would cost more at the larger
size.

    .venv/bin/python benchmarks/fallback_boundary.py [--rounds 300] [--stages 4]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch

import torch_purity
from torch_purity import EagerFallbackWarning


@torch.library.custom_op("purity_bench::touch_", mutates_args=("x",))
def touch_(x: torch.Tensor) -> None:
    """A custom op Purity cannot compile: writes one element of its argument."""
    x[0] += 0.0


def program(stages: int, custom: bool):
    def run(x):
        for stage in range(stages):
            x.mul_(0.999).add_(0.5)
            if custom and stage < stages - 1:
                touch_(x)
        return x[:8].sum()

    return run


def _timed(function, argument) -> float:
    start = time.perf_counter()
    function(argument)
    return time.perf_counter() - start


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 10], ordered[(len(ordered) * 9) // 10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--stages", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore", EagerFallbackWarning)
    boundaries = args.stages - 1
    print(f"{args.stages} stages, {boundaries} boundaries, {args.rounds} rounds, round robin, torch threads 1")
    for size in (1 << 10, 1 << 20):
        eager = program(args.stages, custom=True)
        whole = torch_purity.compile(program(args.stages, custom=False))
        segmented = torch_purity.compile(eager)
        x = torch.rand(size)
        whole(x.clone())
        segmented(x.clone())  # compile outside the timing
        entry = next(iter(segmented.cache.values()))
        assert len(entry.eager_ops) == boundaries, entry.eager_ops
        steps = entry.segments.steps

        def steps_directly(t, steps=steps):
            for step in steps:
                if hasattr(step, "program"):
                    step.program(t)
                else:
                    touch_(t)

        systems = {
            "eager": eager,
            "purity, one segment": whole,
            "purity, segmented": segmented,
            "custom op alone": lambda t: [touch_(t) for _ in range(boundaries)],
            "steps called directly": steps_directly,
        }
        samples: dict[str, list[float]] = {name: [] for name in systems}
        for _ in range(args.rounds):
            for name, function in systems.items():
                samples[name].append(_timed(function, x))
        per_boundary = [
            (s - w - c) / boundaries
            for s, w, c in zip(samples["purity, segmented"], samples["purity, one segment"], samples["custom op alone"])
        ]
        orchestration = [
            (s - d) / boundaries for s, d in zip(samples["purity, segmented"], samples["steps called directly"])
        ]
        print(f"\n{size} floats ({size * 4 / 1024:.0f} KiB):")
        for name, values in samples.items():
            print(f"  {name:>20}: median {statistics.median(values) * 1e6:8.1f} µs")
        for label, values in (("cost per boundary", per_boundary), ("orchestration per boundary", orchestration)):
            low, high = _percentiles(values)
            print(
                f"  {label:>26}: median {statistics.median(values) * 1e6:7.1f} µs "
                f"(p10-p90 {low * 1e6:.1f} to {high * 1e6:.1f} µs)"
            )


if __name__ == "__main__":
    main()
