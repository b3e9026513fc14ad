"""Purity on an NVIDIA GPU: writes in place into CUDA tensors, every e2e program
against eager on the same GPU, and the benchmark workloads timed.

Two steps, so the GPU machine needs only torch (with CUDA), numpy and IREE's
runtime, not torch-mlir or IREE's compiler:

    .venv/bin/python benchmarks/gpu_check.py prepare [--bundle .gpu-bundle]
    python3 benchmarks/gpu_check.py run [--bundle .gpu-bundle] [--out benchmarks/results/gpu]

`prepare` (where the whole stack is installed; no GPU needed) compiles each
program for the `cuda` target and saves it (CompiledProgram.save). `run` (on
the GPU machine) loads each with torch_purity.load and checks:

- in place: a KV-cache row write into a CUDA tensor is written by IREE into
  the caller's memory (IREE was handed the tensor's own address, the tensor
  was not reallocated, the other rows are untouched), and its time does not
  grow with the cache (1k, 16k, 128k rows);
- the e2e programs (test/e2e/programs.py) and the decode-step module: outputs,
  inputs after the call and output aliasing against eager, on two data sets;
- the workloads of compare_systems.py: median time per call of eager, Purity
  and, while --inductor-seconds last, torch.compile with inductor, each
  checked against eager first; and how each input crossed to IREE.

Writes gpu_results.json and gpu_results.csv to --out and prints a summary.
benchmarks/gpu_check.sh runs both steps on one machine that has the GPU and
the whole stack. `--target cpu` / `--device cpu` run the same steps on the
CPU (a dry run of this script).
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "test" / "e2e"), str(ROOT / "benchmarks")]

import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402

import torch_purity  # noqa: E402
from torch_purity import PurityError  # noqa: E402
from torch_purity.checking import clone_preserving_aliasing, compare  # noqa: E402

KV_WORKLOADS = ("kv_write_1k", "kv_write_16k", "kv_write_128k")
MODULE_POSITION = 3


def _first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).strip().splitlines()[0][:300] if str(error).strip() else ''}"


# ----------------------------------------------------------------------------
# prepare
# ----------------------------------------------------------------------------


def prepare(bundle: Path, target: str) -> int:
    from programs import PROGRAMS
    from test_modules_and_runtime import StaticKVCache

    from compare_systems import workloads

    manifest: dict[str, object] = {"target": target, "programs": {}, "workloads": {}, "modules": {}}

    def save(kind: str, name: str, program, inputs) -> None:
        start = time.perf_counter()
        try:
            torch_purity.compile(program, *inputs, target=target).save(bundle / kind / name)
            manifest[kind][name] = "saved"
        except PurityError as error:
            manifest[kind][name] = f"not compiled: {_first_line(error)}"
        print(f"{kind:>9} {name:>45}: {manifest[kind][name][:80]} ({time.perf_counter() - start:.1f} s)", flush=True)

    for name, program, make_inputs in PROGRAMS:
        save("programs", name, program, make_inputs(0))
    for workload in workloads(quick=False):
        save("workloads", workload.name, workload.program, workload.make_inputs())
    torch.manual_seed(0)
    save("modules", "static_kv_cache", StaticKVCache(), (torch.randn(8), MODULE_POSITION))
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=1))
    saved = sum(v == "saved" for kind in ("programs", "workloads", "modules") for v in manifest[kind].values())
    print(f"saved {saved} programs for '{target}' under {bundle}")
    return 0


# ----------------------------------------------------------------------------
# run
# ----------------------------------------------------------------------------


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_us(function, arguments, repeats: int, device: torch.device) -> float:
    function(*arguments)
    _synchronize(device)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*arguments)
        _synchronize(device)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def _only_entry(loaded):
    return next(iter(loaded.entries.values()))


def check_in_place(bundle: Path, device: torch.device, results: dict) -> None:
    """KV-cache row writes into a tensor on the device, 1k to 128k rows."""
    from compare_systems import kv_cache_write

    for name in KV_WORKLOADS:
        record: dict[str, object] = {"workload": name}
        results["in_place"].append(record)
        try:
            loaded = torch_purity.load(bundle / "workloads" / name)
            rows = {"kv_write_1k": 1024, "kv_write_16k": 16384, "kv_write_128k": 131072}[name]
            cache = torch.zeros(rows, 256, device=device)
            address = cache.data_ptr()
            written_ok = True
            for _ in range(3):
                row = torch.randn(256, device=device)
                out = loaded(cache, row, 7)
                _synchronize(device)
                written_ok &= bool(torch.equal(cache[7], row)) and bool(torch.allclose(out, row.sum()))
            entry = _only_entry(loaded)
            others_untouched = bool(cache[:7].abs().sum() == 0) and bool(cache[8:].abs().sum() == 0)
            record.update(
                values_ok=written_ok and others_untouched,
                iree_given_callers_memory=entry.imports.get(0, (None,))[0] == address,
                tensor_not_reallocated=cache.data_ptr() == address,
                hand_over=entry.hand_over,
                purity_us=median_us(loaded, (cache, torch.randn(256, device=device), 7), 200, device),
                eager_us=median_us(kv_cache_write, (cache, torch.randn(256, device=device), 7), 200, device),
            )
        except Exception as error:  # a failure is a result to report
            record["error"] = _first_line(error)
        print(f"in place {name:>14}: {record}", flush=True)
    times = {r["workload"]: r.get("purity_us") for r in results["in_place"]}
    if times.get("kv_write_1k") and times.get("kv_write_128k"):
        results["kv_128k_over_1k"] = times["kv_write_128k"] / times["kv_write_1k"]


def check_programs(bundle: Path, manifest: dict, device: torch.device, results: dict) -> None:
    from programs import PROGRAMS

    for name, program, make_inputs in PROGRAMS:
        status = manifest["programs"].get(name, "missing")
        if status != "saved":
            results["programs"][name] = {"status": "not compiled", "detail": status}
            continue
        record: dict[str, object] = {"status": "passed", "max_abs_difference": 0.0}
        try:
            loaded = torch_purity.load(bundle / "programs" / name)
            for seed in (0, 1):
                inputs = clone_preserving_aliasing(make_inputs(seed), device=device)
                try:
                    eager_outputs = pytree.tree_leaves(program(*clone_preserving_aliasing(inputs)))
                except Exception as error:
                    record = {"status": "eager fails on this device", "detail": _first_line(error)}
                    break
                if any(isinstance(o, torch.Tensor) and o.device.type != device.type for o in eager_outputs):
                    # The program makes a tensor without device= (torch.zeros(2, 2)): eager
                    # returns it on the CPU, Purity computes everything on the target.
                    record = {"status": "eager returns a tensor on another device"}
                    break
                report = compare(program, loaded, inputs)
                record["max_abs_difference"] = max(record["max_abs_difference"], report.max_abs_difference)
                if not report.ok:
                    loose = compare(program, loaded, inputs, atol=1e-3, rtol=1e-3).ok
                    record = {
                        "status": "failed",
                        "seed": seed,
                        "problems": report.problems[:3],
                        "passes_at_1e-3": loose,
                    }
                    break
        except Exception as error:
            record = {"status": "error", "detail": _first_line(error)}
        results["programs"][name] = record
        if record["status"] != "passed":
            print(f"program {name}: {record}", flush=True)
    counts: dict[str, int] = {}
    for record in results["programs"].values():
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    results["program_counts"] = counts
    print(f"programs: {counts}", flush=True)


def check_module(bundle: Path, manifest: dict, device: torch.device, results: dict) -> None:
    from test_modules_and_runtime import StaticKVCache

    record: dict[str, object] = {}
    try:
        if manifest["modules"].get("static_kv_cache") != "saved":
            raise RuntimeError(manifest["modules"].get("static_kv_cache", "missing"))
        model = StaticKVCache().to(device)
        eager_model = copy.deepcopy(model)
        loaded = torch_purity.load(bundle / "modules" / "static_kv_cache", module=model)
        ok = True
        for _ in range(2):
            x = torch.randn(8, device=device)
            ok &= bool(torch.allclose(loaded(x, MODULE_POSITION), eager_model(x, MODULE_POSITION), atol=1e-5))
        for (_, got), (_, want) in zip(model.named_buffers(), eager_model.named_buffers()):
            ok &= bool(torch.allclose(got.double(), want.double(), atol=1e-5))
        record["state_and_outputs_match_eager"] = ok
    except Exception as error:
        record["error"] = _first_line(error)
    results["module_static_kv_cache"] = record
    print(f"module static_kv_cache: {record}", flush=True)


def time_workloads(bundle: Path, manifest: dict, device: torch.device, inductor_seconds: float, results: dict) -> None:
    from compare_systems import workloads

    inductor_deadline = time.perf_counter() + inductor_seconds
    for workload in workloads(quick=False):
        inputs = clone_preserving_aliasing(workload.make_inputs(), device=device)
        systems: dict[str, object] = {"eager": workload.program}
        record: dict[str, object] = {"workload": workload.name}
        if manifest["workloads"].get(workload.name) == "saved":
            loaded = torch_purity.load(bundle / "workloads" / workload.name)
            systems["purity"] = loaded
        else:
            record["purity_error"] = manifest["workloads"].get(workload.name, "missing")
        if time.perf_counter() < inductor_deadline:
            try:
                torch._dynamo.reset()
                inductor = torch.compile(workload.program)
                inductor(*clone_preserving_aliasing(inputs))
                systems["inductor"] = inductor
            except Exception as error:
                record["inductor_error"] = _first_line(error)
        for system, function in systems.items():
            try:
                if system != "eager":
                    report = compare(workload.program, function, inputs, atol=1e-4, rtol=1e-4)
                    if not report.ok:
                        record[f"{system}_error"] = "differs from eager: " + "; ".join(report.problems)[:200]
                        continue
                arguments = clone_preserving_aliasing(inputs)
                record[f"{system}_us"] = median_us(function, arguments, workload.repeats, device)
            except Exception as error:
                record[f"{system}_error"] = _first_line(error)
        if "purity" in systems:
            entry = _only_entry(systems["purity"])
            tensor_count = len(entry.argument_positions) + len(entry.convention.synthetic_bases)
            record["inputs_to_iree"] = (
                f"{len(entry.imports)} of {tensor_count} as the caller's memory; calls {entry.hand_over}"
            )
        results["workloads"].append(record)
        print(f"workload {workload.name}: {record}", flush=True)


def write_results(results: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_results.json").write_text(json.dumps(results, indent=1, default=str))
    with open(out / "gpu_results.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["workload", "eager_us", "inductor_us", "purity_us", "purity_vs_eager", "purity_vs_inductor", "notes"]
        )
        for record in results["workloads"]:
            eager, inductor, purity = (record.get(f"{s}_us") for s in ("eager", "inductor", "purity"))
            notes = "; ".join(f"{k}={v}" for k, v in record.items() if k.endswith("error") or k == "inputs_to_iree")
            writer.writerow(
                [
                    record["workload"],
                    eager,
                    inductor,
                    purity,
                    purity / eager if purity and eager else None,
                    purity / inductor if purity and inductor else None,
                    notes,
                ]
            )


def run(bundle: Path, out: Path, device_name: str, inductor_seconds: float) -> int:
    device = torch.device(device_name)
    manifest = json.loads((bundle / "manifest.json").read_text())
    from iree._runtime_libs import version as iree_version

    results: dict[str, object] = {
        "environment": {
            "device": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor(),
            "torch": torch.__version__,
            "iree_runtime": iree_version.VERSION,
            "python": platform.python_version(),
            "bundle_target": manifest["target"],
        },
        "in_place": [],
        "programs": {},
        "workloads": [],
    }
    print(f"environment: {results['environment']}", flush=True)
    for step in (
        lambda: check_in_place(bundle, device, results),
        lambda: check_programs(bundle, manifest, device, results),
        lambda: check_module(bundle, manifest, device, results),
        lambda: time_workloads(bundle, manifest, device, inductor_seconds, results),
    ):
        step()
        write_results(results, out)  # what is done survives a run cut short
    print("\nsummary")
    for record in results["in_place"]:
        print(f"  {record}")
    print(f"  KV 128k/1k time ratio: {results.get('kv_128k_over_1k')}")
    print(f"  programs: {results['program_counts']}")
    print(f"  module: {results['module_static_kv_cache']}")
    print(
        f"  {'workload':>26} {'eager µs':>10} {'inductor µs':>12} {'purity µs':>10} {'vs eager':>9} {'vs inductor':>12}"
    )
    for record in results["workloads"]:
        eager, inductor, purity = (record.get(f"{s}_us") for s in ("eager", "inductor", "purity"))
        print(
            f"  {record['workload']:>26} {eager or 0:10.1f} {inductor or 0:12.1f} {purity or 0:10.1f} "
            f"{(purity / eager if purity and eager else 0):9.2f} "
            f"{(purity / inductor if purity and inductor else 0):12.2f}"
        )
    print(f"wrote {out}/gpu_results.json and {out}/gpu_results.csv")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    prepare_parser = commands.add_parser("prepare", help="compile and save every program (needs the whole stack)")
    prepare_parser.add_argument("--bundle", type=Path, default=ROOT / ".gpu-bundle")
    prepare_parser.add_argument("--target", default="cuda", choices=["cuda", "cpu"])
    run_parser = commands.add_parser("run", help="load and check every program (needs torch and IREE's runtime)")
    run_parser.add_argument("--bundle", type=Path, default=ROOT / ".gpu-bundle")
    run_parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "gpu")
    run_parser.add_argument("--device", default="cuda")
    run_parser.add_argument(
        "--inductor-seconds",
        type=float,
        default=240.0,
        help="stop adding inductor to the workloads after this long (its compiles are slow)",
    )
    args = parser.parse_args()
    if args.command == "prepare":
        return prepare(args.bundle, args.target)
    return run(args.bundle, args.out, args.device, args.inductor_seconds)


if __name__ == "__main__":
    sys.exit(main())
