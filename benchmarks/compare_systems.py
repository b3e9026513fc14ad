"""Workloads x systems, measured side by side in one run.

    .venv/bin/python benchmarks/compare_systems.py [--quick] [--out benchmarks/results]

Workloads: a KV-cache one-row write at 1k, 16k and 128k rows x 256; an
attention decode step (KV write + attention over a 2048 context); SGD with
momentum and Adam over 50 parameters of 256x256; BatchNorm in training mode
(64x256x28x28). Systems: eager PyTorch, torch.compile with inductor, the
standard torch-mlir path (torch.export + torch-mlir's FX importer + IREE's
torch input, written inputs copied back), and Purity. Every system is checked
against eager once (outputs and inputs after the call) before it is timed.
Prints medians and ratios vs eager and vs inductor, Purity's compile time per
stage, and writes results.csv and results.png to --out. --quick uses smaller
sizes and fewer repetitions (a smoke run, not figures to report).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree

import torch_purity
from torch_purity.checking import clone_preserving_aliasing, compare

# ----------------------------------------------------------------------------
# Workloads
# ----------------------------------------------------------------------------


def kv_cache_write(cache, row, position: int):
    cache[position].copy_(row)
    return row.sum()


def attention_decode(k_cache, v_cache, q, k, v, position: int):
    k_cache[position].copy_(k)
    v_cache[position].copy_(v)
    scores = (k_cache @ q) * (1.0 / math.sqrt(q.shape[0]))
    return torch.softmax(scores, dim=0) @ v_cache


def sgd_momentum(params, grads, buffers, lr: float, momentum: float):
    for p, g, b in zip(params, grads, buffers):
        b.mul_(momentum).add_(g)
        p.add_(b, alpha=-lr)
    return params[0].sum()


def adam(params, grads, exp_avgs, exp_avg_sqs, step: int):
    beta1, beta2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
    bias1, bias2 = 1 - beta1**step, 1 - beta2**step
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        p.addcdiv_(m, (v / bias2).sqrt().add_(eps), value=-lr / bias1)
    return params[0].sum()


def batch_norm_training(x, running_mean, running_var, weight, bias):
    return F.batch_norm(x, running_mean, running_var, weight, bias, training=True, momentum=0.1)


@dataclass
class Workload:
    name: str
    program: Callable
    make_inputs: Callable[[], tuple]
    repeats: int


def workloads(quick: bool) -> list[Workload]:
    params = 5 if quick else 50
    rows_list = (256, 1024, 8192) if quick else (1024, 16384, 131072)
    result = [
        Workload(
            f"kv_write_{rows // 1024}k" if rows >= 1024 else f"kv_write_{rows}",
            kv_cache_write,
            (lambda rows=rows: (torch.zeros(rows, 256), torch.randn(256), 7)),
            20 if quick else 200,
        )
        for rows in rows_list
    ]
    result.append(
        Workload(
            "attention_decode_2048",
            attention_decode,
            lambda: (
                torch.randn(2048, 256),
                torch.randn(2048, 256),
                torch.randn(256),
                torch.randn(256),
                torch.randn(256),
                100,
            ),
            20 if quick else 100,
        )
    )
    matrices = lambda: [torch.randn(256, 256) for _ in range(params)]  # noqa: E731
    result.append(
        Workload(
            f"sgd_momentum_{params}x256x256",
            sgd_momentum,
            lambda: (matrices(), matrices(), matrices(), 0.01, 0.9),
            5 if quick else 30,
        )
    )
    result.append(
        Workload(
            f"adam_{params}x256x256",
            adam,
            lambda: (
                matrices(),
                matrices(),
                [torch.zeros(256, 256) for _ in range(params)],
                [torch.zeros(256, 256) for _ in range(params)],
                3,
            ),
            5 if quick else 30,
        )
    )
    batch = 4 if quick else 64
    result.append(
        Workload(
            f"batch_norm_{batch}x256x28x28",
            batch_norm_training,
            lambda: (
                torch.randn(batch, 256, 28, 28),
                torch.zeros(256),
                torch.ones(256),
                torch.randn(256),
                torch.randn(256),
            ),
            3 if quick else 10,
        )
    )
    return result


# ----------------------------------------------------------------------------
# Systems
# ----------------------------------------------------------------------------


def build_eager(program, inputs):
    return program, {}


def build_inductor(program, inputs):
    torch._dynamo.reset()
    compiled = torch.compile(program)
    compiled(*clone_preserving_aliasing(inputs))  # compile outside the timing
    return compiled, {}


def build_purity(program, inputs):
    compiled = torch_purity.compile(program)
    entry, _ = compiled.entry_for(*inputs)
    return compiled, dict(entry.seconds)


class _ExportedModule(torch.nn.Module):
    def __init__(self, program, constants: dict[int, object], structure):
        super().__init__()
        self.program, self.constants, self.structure = program, constants, structure

    def forward(self, *tensors):
        leaves = list(tensors)
        for index, value in sorted(self.constants.items()):
            leaves.insert(index, value)
        return self.program(*pytree.tree_unflatten(leaves, self.structure))


def build_torch_mlir_iree(program, inputs):
    """The standard path: torch.export functionalizes, torch-mlir imports
    (written user inputs as mutable arguments with an edge overwrite), IREE
    compiles from its torch input, and the runtime copies inputs in and
    written inputs back."""
    import iree.compiler as iree_compiler
    import iree.runtime as iree_runtime
    from torch_mlir.fx import export_and_import

    from torch_purity.iree.targets import get_target

    leaves, structure = pytree.tree_flatten(list(inputs))
    constants = {i: v for i, v in enumerate(leaves) if not isinstance(v, torch.Tensor)}
    tensor_positions = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]
    module = _ExportedModule(program, constants, structure)
    example = tuple(leaves[i].clone() for i in tensor_positions)
    mlir_module = export_and_import(
        module, *example, output_type="torch", func_name="main", experimental_support_mutation=True
    )
    text = str(mlir_module)
    flags = get_target("cpu").compile_flags
    vmfb = iree_compiler.compile_str(text, input_type="torch", extra_args=flags)
    config = iree_runtime.Config("local-task")
    context = iree_runtime.SystemContext(config=config)
    context.add_vm_module(iree_runtime.VmModule.copy_buffer(config.vm_instance, vmfb))
    main = context.modules.module["main"]
    signature = [line for line in text.splitlines() if "func.func @main" in line][0]
    written = [i for i in range(len(tensor_positions)) if f"%arg{i}: !torch.tensor<" in signature]

    def run(*args):
        flat = pytree.tree_leaves(list(args))
        tensors = [flat[i] for i in tensor_positions]
        device_arrays = [iree_runtime.asdevicearray(config.device, t.detach().numpy()) for t in tensors]
        results = main(*device_arrays)
        with torch.no_grad():
            for index in written:
                tensors[index].copy_(torch.from_numpy(np.asarray(device_arrays[index].to_host())))
        results = results if isinstance(results, (list, tuple)) else [results]
        outputs = [torch.from_numpy(np.array(r.to_host())) for r in results]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return run, {}


SYSTEMS: dict[str, Callable] = {
    "eager": build_eager,
    "inductor": build_inductor,
    "torch-mlir+iree": build_torch_mlir_iree,
    "purity": build_purity,
}


# ----------------------------------------------------------------------------
# Measuring
# ----------------------------------------------------------------------------


@dataclass
class Result:
    workload: str
    system: str
    median_us: float | None = None
    error: str | None = None
    compile_seconds: dict[str, float] = field(default_factory=dict)


def measure(workload: Workload, system: str) -> Result:
    result = Result(workload.name, system)
    inputs = workload.make_inputs()
    try:
        start = time.perf_counter()
        callable_, stages = SYSTEMS[system](workload.program, inputs)
        result.compile_seconds = stages or {"total": time.perf_counter() - start}
        report = compare(workload.program, callable_, inputs, atol=1e-4, rtol=1e-4)
        if not report.ok:
            result.error = "differs from eager: " + "; ".join(report.problems)[:200]
            return result
        arguments = clone_preserving_aliasing(inputs)
        callable_(*arguments)  # warm
        samples = []
        for _ in range(workload.repeats):
            start = time.perf_counter()
            callable_(*arguments)
            samples.append(time.perf_counter() - start)
        result.median_us = statistics.median(samples) * 1e6
    except Exception as error:  # a system failing a workload is a result, not a crash
        result.error = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    return result


def write_outputs(results: list[Result], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    by_key = {(r.workload, r.system): r for r in results}
    with open(out / "results.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["workload", "system", "median_us", "vs_eager", "vs_inductor", "error"])
        for r in results:
            eager, inductor = by_key.get((r.workload, "eager")), by_key.get((r.workload, "inductor"))
            vs_eager = r.median_us / eager.median_us if r.median_us and eager and eager.median_us else None
            vs_inductor = r.median_us / inductor.median_us if r.median_us and inductor and inductor.median_us else None
            writer.writerow([r.workload, r.system, r.median_us, vs_eager, vs_inductor, r.error or ""])
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r.workload for r in results))
    systems = [s for s in SYSTEMS if any(r.system == s for r in results)]
    figure, axis = plt.subplots(figsize=(12, 5))
    width = 0.8 / len(systems)
    for index, system in enumerate(systems):
        values = [by_key[(n, system)].median_us or float("nan") for n in names]
        axis.bar([i + index * width for i in range(len(names))], values, width, label=system)
    axis.set_yscale("log")
    axis.set_ylabel("median time per call (µs, log scale)")
    axis.set_xticks([i + width * (len(systems) - 1) / 2 for i in range(len(names))])
    axis.set_xticklabels(names, rotation=20, ha="right")
    axis.legend()
    axis.set_title("Purity vs eager, inductor and torch-mlir+IREE (CPU)")
    figure.tight_layout()
    figure.savefig(out / "results.png", dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--workloads", nargs="*", help="names to run (default: all)")
    parser.add_argument("--systems", nargs="*", default=list(SYSTEMS))
    args = parser.parse_args()
    torch.manual_seed(0)
    results: list[Result] = []
    for workload in workloads(args.quick):
        if args.workloads and workload.name not in args.workloads:
            continue
        for system in args.systems:
            result = measure(workload, system)
            results.append(result)
            shown = f"{result.median_us:12.1f} µs" if result.median_us is not None else f"  FAILED: {result.error}"
            print(f"{workload.name:>26} {system:>16} {shown}", flush=True)
    print()
    print(f"{'workload':>26} {'purity µs':>11} {'vs eager':>9} {'vs inductor':>12} {'vs torch-mlir':>14}")
    by_key = {(r.workload, r.system): r for r in results}
    for name in dict.fromkeys(r.workload for r in results):
        purity = by_key.get((name, "purity"))
        if not purity or purity.median_us is None:
            continue

        def ratio(system: str, name: str = name, purity: Result = purity) -> str:
            other = by_key.get((name, system))
            return f"{purity.median_us / other.median_us:.2f}x" if other and other.median_us else "-"

        ratios = f"{ratio('eager'):>9} {ratio('inductor'):>12} {ratio('torch-mlir+iree'):>14}"
        print(f"{name:>26} {purity.median_us:11.1f} {ratios}")
    print("\nPurity compile time per stage (s):")
    for r in results:
        if r.system == "purity" and r.compile_seconds:
            print(f"  {r.workload:>26}: " + ", ".join(f"{k} {v:.2f}" for k, v in r.compile_seconds.items()))
    write_outputs(results, Path(args.out))
    print(f"\nwrote {args.out}/results.csv and {args.out}/results.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
