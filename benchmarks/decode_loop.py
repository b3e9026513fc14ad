"""Runtime ints and dynamic sizes, measured side by side in one run: eager,
inductor, Purity.

    .venv/bin/python benchmarks/decode_loop.py [--steps 256] [--rounds 200]

Workloads:
- decode: `steps` decode steps with the position as a Python int, the row
  written into a KV cache in place, attention over `cache[:position + 1]`.
  Systems: eager, `torch.compile` (inductor), `torch_purity.compile`, and
  `torch.compile(backend="purity")`. Each system first runs the whole loop
  from position 0 on a fresh cache (checked against eager at every step):
  its total time includes every compile, and its compile count is the
  number of compiled entries (Purity) or graphs (Dynamo) it made.
- batch sweep: an MLP block with an in-place ReLU at batch sizes 2..64,
  `torch_purity.compile(..., dynamic=True)` against inductor with
  `dynamic=True`: total time over the sweep (with compiles) and entries.
Then the systems run round robin, one call each per round (decode: at a
position cycling through the loop's; sweep: a batch size cycling through
the sweep's), and the report gives each system's median µs per call and its
ratio to eager and to inductor: the median of the per-round ratios, with
their 10th-90th percentile spread. It also reports Purity's guard check
(the per-call test of an int or size against the entry's guard).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

import torch_purity
from torch_purity.dynamo_backend import purity_backend

DIM = 64


def decode_step(cache, row, query, position: int):
    cache[position] = row
    keys = cache[: position + 1]
    weights = torch.softmax(keys @ query / 8.0, dim=0)
    return weights @ keys


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(DIM, 4 * DIM)
        self.down = torch.nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        hidden = self.up(x)
        hidden.relu_()
        return x + self.down(hidden)


def _counting_purity():
    programs = []

    def backend(graph_module, example_inputs):
        run = purity_backend(graph_module, example_inputs)
        programs.append(run.purity_compiled)
        return run

    return backend, programs


def _compiles(name: str, purity_programs: list, through_dynamo: bool) -> str:
    """What a system compiled in its first run: Dynamo graphs, Purity entries."""
    if name == "eager":
        return "-"
    if name == "inductor":
        return f"{torch._dynamo.utils.counters['stats']['unique_graphs']} graphs"
    entries = f"{sum(len(program.cache) for program in purity_programs)} entries"
    return f"{entries} in {len(purity_programs)} graphs" if through_dynamo else entries


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _report(title: str, times: dict[str, list[float]], extra: dict[str, str]) -> None:
    print(f"\n{title}")
    print(f"  {'system':<26}{'median µs':>11}{'vs eager':>22}{'vs inductor':>24}  first run")
    for name, samples in times.items():
        median = statistics.median(samples) * 1e6
        cells = []
        for reference in ("eager", "inductor"):
            ratios = [a / b for a, b in zip(samples, times[reference])]
            cells.append(
                f"{statistics.median(ratios):.2f}x [{_percentile(ratios, 0.1):.2f}-{_percentile(ratios, 0.9):.2f}]"
            )
        print(f"  {name:<26}{median:>11.1f}{cells[0]:>22}{cells[1]:>24}  {extra.get(name, '')}")


def _round_robin(calls: dict[str, Callable[[int], object]], rounds: int, cycle: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in calls}
    for number in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            call(number % cycle)
            times[name].append(time.perf_counter() - start)
    return times


def decode(steps: int, rounds: int) -> None:
    torch.manual_seed(0)
    # Fresh tensors per step, as a model's projections are (a view into one
    # big tensor would be a new storage offset per step: a new entry each).
    rows = [torch.randn(DIM) for _ in range(steps)]
    queries = [torch.randn(DIM) for _ in range(steps)]
    torch._dynamo.reset()
    backend, dynamo_programs = _counting_purity()
    purity = torch_purity.compile(decode_step)
    systems = {
        "eager": decode_step,
        "inductor": torch.compile(decode_step),
        "purity (compile)": purity,
        "purity (torch.compile)": torch.compile(decode_step, backend=backend),
    }
    caches = {name: torch.zeros(steps, DIM) for name in systems}
    reference = torch.zeros(steps, DIM)
    extra = {}
    for name, system in systems.items():
        torch._dynamo.utils.counters.clear()
        cache = caches[name]
        address = cache.data_ptr()
        start = time.perf_counter()
        for position in range(steps):
            got = system(cache, rows[position], queries[position], position)
            if name == "eager":
                reference.copy_(cache)
            else:
                want = decode_step(reference.clone(), rows[position], queries[position], position)
                torch.testing.assert_close(got, want, msg=f"{name} at step {position}")
        total = time.perf_counter() - start
        assert cache.data_ptr() == address and torch.equal(cache, caches["eager"]), name
        programs = {"purity (compile)": [purity], "purity (torch.compile)": dynamo_programs}.get(name, [])
        compiles = _compiles(name, programs, through_dynamo=name == "purity (torch.compile)")
        extra[name] = f"{steps} steps in {total:.2f} s, {compiles}"
    calls = {
        name: (lambda p, s=system, c=caches[name]: s(c, rows[p], queries[p], p)) for name, system in systems.items()
    }
    times = _round_robin(calls, rounds, steps)
    _report(f"decode loop: {steps} steps, cache {steps}x{DIM}, position as an int", times, extra)
    entry = list(purity.cache.values())[-1]
    guard_start = time.perf_counter()
    for position in range(1000):
        entry.serves([None, None, None, 1 + position % (steps - 1)])
    guard = (time.perf_counter() - guard_start) / 1000 * 1e6
    print(f"  Purity's guard check on the position: {guard:.1f} µs per call ({entry.symbol_guard.readable()})")


def batch_sweep(rounds: int) -> None:
    torch.manual_seed(1)
    batches = [2, 3, 5, 8, 12, 16, 24, 32, 48, 64]
    model = Block()
    inputs = {batch: torch.randn(batch, DIM) for batch in batches}
    torch._dynamo.reset()
    with torch.no_grad():
        purity = torch_purity.compile(model, dynamic=True)
        systems = {"eager": model, "inductor": torch.compile(model, dynamic=True), "purity (dynamic=True)": purity}
        extra = {}
        for name, system in systems.items():
            torch._dynamo.utils.counters.clear()
            start = time.perf_counter()
            for batch in batches:
                torch.testing.assert_close(system(inputs[batch]), model(inputs[batch]), msg=f"{name} at {batch}")
            total = time.perf_counter() - start
            compiles = _compiles(name, [purity] if name.startswith("purity") else [], through_dynamo=False)
            extra[name] = f"{len(batches)} sizes in {total:.2f} s, {compiles}"
        calls = {name: (lambda i, s=system: s(inputs[batches[i]])) for name, system in systems.items()}
        times = _round_robin(calls, rounds, len(batches))
    _report(f"batch sweep: Linear-ReLU_-Linear block, batch sizes {batches}", times, extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=200)
    arguments = parser.parse_args()
    decode(arguments.steps, arguments.rounds)
    batch_sweep(arguments.rounds)


if __name__ == "__main__":
    main()
