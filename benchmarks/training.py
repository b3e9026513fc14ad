"""Training steps, measured side by side in one run: eager, inductor, Purity.

    .venv/bin/python benchmarks/training.py [--quick] [--repeats N]

Workloads: a training step (forward, loss, backward) of an MLP with
BatchNorm1d and an in-place ReLU, and of a small CNN (Conv2d + BatchNorm2d);
an Adam step (foreach) over the MLP's parameters. Systems: eager PyTorch,
`torch.compile` with inductor, and `torch.compile(..., backend="purity")`.
Each system gets its own copy of the model, checked against eager once
(loss, every gradient, the running statistics) before it is timed; then the
systems run round robin, one step each per round, so drift hits all alike.
Prints per workload: median step time per system, the ratio to eager and
to inductor (median of the per-round ratios, with their 10th-90th
percentile spread), the first call's time (tracing and compiling), and the
bytes autograd keeps between forward and backward (every tensor packed for
the backward, unique storages; and the part that is not a parameter or the
input, which the caller holds anyway), Purity's against eager's.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

import torch_purity  # noqa: F401  (registers backend="purity")


class MLP(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(width, 2 * width, bias=False),
            torch.nn.BatchNorm1d(2 * width),
            torch.nn.ReLU(inplace=True),
            torch.nn.Linear(2 * width, 10),
        )

    def forward(self, x):
        return self.layers(x)


class CNN(torch.nn.Module):
    def __init__(self, channels: int, size: int) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(channels)
        self.fc = torch.nn.Linear(channels * size * size, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


@dataclass
class Workload:
    name: str
    model: torch.nn.Module
    batch: torch.Tensor
    kind: str  # "train" (forward + backward) or "adam" (an optimizer step)


def workloads(quick: bool) -> list[Workload]:
    torch.manual_seed(0)
    width, size = (64, 8) if quick else (256, 16)
    return [
        Workload("mlp_batchnorm_train", MLP(width), torch.randn(64, width), "train"),
        Workload("cnn_batchnorm_train", CNN(8, size), torch.randn(16, 3, size, size), "train"),
        Workload("adam_step", MLP(width), torch.randn(64, width), "adam"),
    ]


def _compiler(system: str) -> Callable:
    if system == "eager":
        return lambda f: f
    if system == "inductor":
        return lambda f: torch.compile(f)
    return lambda f: torch.compile(f, backend="purity")


def make_step(workload: Workload, system: str) -> tuple[Callable[[], None], torch.nn.Module]:
    """A step for `system` on its own copy of the model."""
    model = copy.deepcopy(workload.model)
    compile_ = _compiler(system)
    x = workload.batch
    if workload.kind == "train":
        forward = compile_(model)

        def train_step() -> None:
            for p in model.parameters():
                p.grad = None
            forward(x).square().mean().backward()

        return train_step, model
    model(x).square().mean().backward()  # gradients for the optimizer to apply
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    step = compile_(optimizer.step)
    return step, model


def check_against_eager(workload: Workload, steps: dict[str, Callable], models: dict[str, torch.nn.Module]) -> None:
    for step in steps.values():
        step()
    reference = models["eager"]
    for system, model in models.items():
        pairs = list(zip(model.named_parameters(), reference.named_parameters()))
        for (name, ours), (_, eager) in pairs:
            torch.testing.assert_close(ours, eager, atol=1e-4, rtol=1e-3, msg=f"{workload.name} {system}: {name}")
            if eager.grad is not None:
                torch.testing.assert_close(
                    ours.grad, eager.grad, atol=1e-4, rtol=1e-3, msg=f"{workload.name} {system}: grad of {name}"
                )
        for (name, ours), (_, eager) in zip(model.named_buffers(), reference.named_buffers()):
            torch.testing.assert_close(ours, eager, atol=1e-4, rtol=1e-3, msg=f"{workload.name} {system}: {name}")


def saved_bytes(workload: Workload, system: str) -> tuple[int, int]:
    """Bytes autograd keeps for the backward after one forward: all of it,
    and the part that is neither a parameter nor the input."""
    model = copy.deepcopy(workload.model)
    forward = _compiler(system)(model)
    forward(workload.batch)  # compile outside the measured forward
    packed: dict[int, torch.Tensor] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        packed[tensor.untyped_storage().data_ptr()] = tensor
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        forward(workload.batch)
    held = {p.untyped_storage().data_ptr() for p in model.parameters()}
    held.add(workload.batch.untyped_storage().data_ptr())
    total = sum(t.untyped_storage().nbytes() for t in packed.values())
    transient = sum(t.untyped_storage().nbytes() for ptr, t in packed.items() if ptr not in held)
    return total, transient


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * (len(ordered) - 1) + 0.5))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds (a smoke run)")
    parser.add_argument("--repeats", type=int, default=None, help="rounds of timing (default 200, quick 10)")
    args = parser.parse_args()
    repeats = args.repeats or (10 if args.quick else 200)
    systems = ["eager", "inductor", "purity"]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {repeats} rounds round robin")
    for workload in workloads(args.quick):
        steps, models, first_call = {}, {}, {}
        for system in systems:
            torch._dynamo.reset()
            step, model = make_step(workload, system)
            start = time.perf_counter()
            step()
            first_call[system] = time.perf_counter() - start
            steps[system], models[system] = step, model
        # The first calls above stepped each model once; re-copy so all start equal for the check.
        for system in systems:
            models[system].load_state_dict(models["eager"].state_dict())
        check_against_eager(workload, steps, models)
        samples: dict[str, list[float]] = {s: [] for s in systems}
        for _ in range(repeats):
            for system in systems:
                start = time.perf_counter()
                steps[system]()
                samples[system].append(time.perf_counter() - start)
        print(f"\n{workload.name}")
        for system in systems:
            vs_eager = [s / e for s, e in zip(samples[system], samples["eager"])]
            vs_inductor = [s / i for s, i in zip(samples[system], samples["inductor"])]
            print(
                f"  {system:9s} median {statistics.median(samples[system]) * 1e3:8.3f} ms"
                f"  vs eager {statistics.median(vs_eager):5.2f}x"
                f" [{percentile(vs_eager, 0.1):.2f}-{percentile(vs_eager, 0.9):.2f}]"
                f"  vs inductor {statistics.median(vs_inductor):5.2f}x"
                f" [{percentile(vs_inductor, 0.1):.2f}-{percentile(vs_inductor, 0.9):.2f}]"
                f"  first call {first_call[system]:.2f} s"
            )
        if workload.kind == "train":
            for system in ("eager", "purity"):
                total, transient = saved_bytes(workload, system)
                print(
                    f"  saved for backward ({system}): {total / 1024:.1f} KiB, "
                    f"{transient / 1024:.1f} KiB beyond parameters and input"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
