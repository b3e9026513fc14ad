"""purity: the main job.

    purity run FILE.py [--target cpu|cuda] [--dump-ir DIR] [--print-ir] [--repeats N]
    purity fuzz [--n N] [--seed S]

FILE.py defines `program` (a function or an nn.Module) and `example_inputs()`
returning a tuple of its inputs. `purity run` compiles the program (import
with mutation and aliasing kept, purity-functionalize, linalg, IREE), runs it
and eager PyTorch on copies of the inputs, and reports: every mutation (op,
source line, which input, through which views) and how it is lowered, how
each input crossed to IREE (its own memory written in place, its own memory
only read, or a copy), the comparison with eager (outputs, inputs after the
call, output aliasing), the time per call of both, and compile time per
stage. With --dump-ir DIR, the IR
of every stage is written to DIR.

`purity fuzz` generates N random aliasing programs, runs each compiled and in
eager, prints the counts (programs, passed, unsupported, failed) and exits 1
on a failure, after shrinking it and saving it under test/e2e/fuzz_regressions/.
Both run their work in a child process: a native crash (a signal) of `purity
run` is reported as a CRASH and exits 1; one in `purity fuzz` is reported as
CRASH, the program being checked (always in
$TMPDIR/purity-fuzz-current-program.py) is saved as a regression test, and
the run goes on with the programs left (from the next seed). It exits 1 on
a failure or a crash.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import torch

from ..checking import clone_preserving_aliasing, compare
from ..driver.compiled import compile as purity_compile
from ..driver.lowering_worker import signal_name
from ..errors import EagerFallbackWarning, PurityError
from ..iree.targets import TARGETS
from ..pipeline import STAGES
from .mutation_report import describe_mutations, describe_saved


class CommandError(Exception):
    pass


def load_program(path: str) -> tuple[object, tuple]:
    """Runs FILE.py and returns its `program` and `example_inputs()`."""
    if not Path(path).is_file():
        raise CommandError(f"no such file: {path}")
    namespace = runpy.run_path(path, run_name="__purity__")
    if "program" not in namespace:
        raise CommandError(f"{path} defines no `program` (a function or nn.Module to compile)")
    if "example_inputs" not in namespace or not callable(namespace["example_inputs"]):
        raise CommandError(f"{path} defines no `example_inputs()` returning the program's inputs")
    inputs = namespace["example_inputs"]()
    return namespace["program"], tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)


def _median_call_seconds(function, inputs: Sequence[object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        arguments = clone_preserving_aliasing(inputs)
        start = time.perf_counter()
        function(*arguments)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def describe_hand_over(entry, leaves: Sequence[object]) -> str:
    """How each input (of the call's `leaves`) crossed to IREE on the last
    call: as the caller's own memory (written in place, or only read), as a
    copy, or (a runtime int) as a value."""
    if entry.hand_over == "host copies":
        return "host copies through IREE's invoker (IREE refused to write torch's memory in place)"
    names = entry.specialized.names
    copied_back = {index for _, index in entry.convention.written_inputs} - entry.convention.tied_inputs
    parts = []
    for index in range(len(names) + len(entry.convention.synthetic_bases)):
        name = names[index] if index < len(names) else f"synthetic base {index - len(names)}"
        if index < len(names) and type(leaves[entry.argument_positions[index]]) is int:
            parts.append(f"{name} as an i64 value")
            continue
        if index not in entry.imports:
            parts.append(f"{name} copied")
        elif index in entry.convention.tied_inputs:
            parts.append(f"{name} as its own memory, written in place")
        elif index in copied_back:
            # IREE reads the caller's memory and returns the new value as a
            # result of its own: the mutation report says "copied back".
            parts.append(f"{name} as its own memory, read; its new value copied into it after the call")
        else:
            parts.append(f"{name} as its own memory, only read")
    return "; ".join(parts) if parts else "none"


def _report_runtime_values(entry) -> None:
    """Int arguments and dynamic dims: runtime values under a guard, or why they were specialized."""
    if not entry.guarded_leaves:
        return
    if entry.runtime_ints:
        print(f"runtime values (ints, dynamic dims) guarded by: {entry.symbol_guard.readable()}")
    else:
        reason = (entry.ints_specialized_because or "training entries specialize them").splitlines()[0]
        print(f"ints and dynamic dims specialized ({entry.symbol_guard.readable()}): {reason}")


def command_run(args: argparse.Namespace) -> int:
    """Runs in a child: a native crash of the program is reported as such."""
    if os.environ.get(_CHILD) != "1":
        code = _in_child(sys.argv[1:] if args.argv is None else args.argv)
        if code < 0:
            print(
                f"purity: error: CRASH: running {args.file} ended the process with {signal_name(code)} "
                "(a bug of Purity, torch-mlir or IREE; please report it with the file)",
                file=sys.stderr,
            )
            return 1
        return code
    program, inputs = load_program(args.file)
    # The report lists the ops that run in eager, with their reasons.
    warnings.simplefilter("ignore", EagerFallbackWarning)
    eager_program = copy.deepcopy(program) if isinstance(program, torch.nn.Module) else program
    compiled = purity_compile(
        program,
        *inputs,
        target=args.target,
        dump_dir=args.dump_ir,
        fallback=args.fallback,
        vendor_kernels=not args.no_vendor_kernels,
    )
    entry, leaves = compiled.entry_for(*inputs)
    if args.dump_ir:
        Path(args.dump_ir, "1-mutable-torch.mlir").write_text(entry.mutable_ir)

    print(f"Purity: {args.file} (target {args.target})")
    stages = ", ".join(f"{name} {seconds * 1e3:.0f} ms" for name, seconds in entry.seconds.items())
    print(f"compiled in {sum(entry.seconds.values()):.2f} s: {stages}")
    segmented = getattr(entry, "segments", None)
    _report_program(entry, segmented)
    _report_runtime_values(entry)

    captured_names = entry.input_names[len(entry.input_names) - len(entry.captured) :]
    report = compare(eager_program, compiled, inputs, state=list(zip(captured_names, entry.captured)))
    if isinstance(program, torch.nn.Module):
        for (name, got), (_, want) in zip(program.state_dict().items(), eager_program.state_dict().items()):
            if not torch.allclose(got.double(), want.double(), atol=1e-5, rtol=1e-5):
                report.problems.append(f"module state '{name}' differs from eager after the call")
    if entry.backward is not None:
        report.problems.extend(compare_gradients(eager_program, program, compiled, inputs))
    if report.ok:
        gradients = "gradients, " if entry.backward is not None else ""
        print(
            f"check against eager: {gradients}outputs, inputs{' and captured state' if entry.captured else ''} "
            "after the call and output aliasing match "
            f"(max abs difference {report.max_abs_difference:.3g})"
        )
    else:
        print("check against eager: MISMATCH")
        for problem in report.problems:
            print(f"  {problem}")

    eager_seconds = _median_call_seconds(eager_program, inputs, args.repeats)
    compiled_seconds = _median_call_seconds(compiled, inputs, args.repeats)
    print(
        f"time per call (median of {args.repeats}, fresh copies of the inputs each call): "
        f"eager {eager_seconds * 1e6:.0f} µs, "
        f"purity {compiled_seconds * 1e6:.0f} µs ({compiled_seconds / eager_seconds:.2f}x eager)"
    )
    if segmented is None:
        print(
            f"inputs to IREE on the last call: {describe_hand_over(entry, leaves)}; "
            "outputs written by IREE into tensors torch allocated"
        )
    if args.dump_ir:
        print(f"IR of every stage written to {args.dump_ir}/")
    if args.print_ir:
        _print_ir(entry, segmented)
    return 0 if report.ok else 1


def _print_ir(entry, segmented) -> None:
    print("\n// ---- stage 1: mutable Torch IR ----")
    print(entry.mutable_ir)
    for stage in STAGES if segmented is None else ():
        print(f"\n// ---- {stage.name}: {stage.summary} ----")
        print(entry.lowered.stage_ir[stage.name])


def _entry_mutations(entry) -> list[str]:
    """The report's lines for an entry's recorded mutations."""
    convention = entry.convention
    shapes = dict(convention.result_storage)
    rank0 = {index for result, index in convention.written_inputs if shapes.get(result) == ()}
    return describe_mutations(convention.mutations, entry.input_names, convention.tied_inputs, rank0)


def _report_program(entry, segmented) -> None:
    if segmented is not None:
        _report_segments(segmented)
        return
    mutations = _entry_mutations(entry)
    print(f"mutations found: {len(mutations)}")
    for line in mutations:
        print(f"  {line}")
    if entry.backward is not None:
        _report_training(entry)
    _report_index_checks(entry)


def _report_segments(segmented) -> None:
    """Which ops ran in eager and why, and the compiled segments between them."""
    vendor = [op for op in segmented.eager_ops if op.vendor]
    fallback = [op for op in segmented.eager_ops if not op.vendor]
    if vendor:
        print(f"ran with PyTorch's kernel (vendor kernels; --no-vendor-kernels compiles them): {len(vendor)}")
        for op in vendor:
            print(f"  {op.op}" + (f" at {op.source}" if op.source else ""))
    print(f"ran in eager (ops Purity cannot compile): {len(fallback)}")
    for op in fallback:
        print(f"  {op.describe()}")
    for index, step in enumerate(segmented.compiled_steps):
        entry = next(iter(step.program.cache.values()))
        mutations = _entry_mutations(entry)
        ops = sum(1 for n in step.module.graph.nodes if n.op == "call_function")
        print(f"compiled segment {index}: {ops} ops, mutations found: {len(mutations)}")
        for line in mutations:
            print(f"  {line}")


def _report_index_checks(entry) -> None:
    checks = entry.convention.index_checks[1] if entry.convention.index_checks else ()
    print(
        f"index checks in the compiled program: {len(checks)}"
        + (" (an out-of-range index raises PurityIndexError before any write)" if checks else "")
    )
    for check in checks:
        print(
            f"  {check.op} at {check.location or 'an unknown line'}: "
            f"{check.count} indices clamped into range and checked"
        )


def _report_training(entry) -> None:
    saved, computed = describe_saved(entry.convention, entry.backward.convention, entry.input_names)
    print(
        "training: inputs require grad, so the joint graph (forward and backward) was traced, "
        "functionalized and partitioned; the mutations above happen once, in the compiled forward"
    )
    print(f"saved for the backward: {len(saved)} tensors, {computed} bytes computed by the forward")
    for line in saved:
        print(f"  {line}")


def _gradients(program, run, inputs: Sequence[object]) -> list[tuple[str, torch.Tensor | None]]:
    """One forward and backward (of the sum of every output that requires
    grad) on copies of the inputs: the gradient of each input and parameter
    that requires grad."""
    copies = [t.detach().clone().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t for t in inputs]
    outputs = [o for o in torch.utils._pytree.tree_leaves(run(*copies)) if isinstance(o, torch.Tensor)]
    differentiable = [o.sum() for o in outputs if o.requires_grad]
    if differentiable:
        torch.stack(differentiable).sum().backward()
    found = [(f"input {i}", c.grad) for i, c in enumerate(copies) if isinstance(c, torch.Tensor) and c.requires_grad]
    if isinstance(program, torch.nn.Module):
        found += [(f"parameter {name}", p.grad) for name, p in program.named_parameters() if p.requires_grad]
        program.zero_grad(set_to_none=True)
    return found


def compare_gradients(eager_program, program, compiled, inputs: Sequence[object]) -> list[str]:
    """Problems found comparing the compiled program's gradients with eager's."""
    problems = []
    expected = _gradients(eager_program, eager_program, inputs)
    for (name, got), (_, want) in zip(_gradients(program, compiled, inputs), expected):
        if (got is None) != (want is None):
            problems.append(f"gradient of {name}: {'none' if got is None else 'one'} where eager has the opposite")
        elif got is not None and not torch.allclose(got.double(), want.double(), atol=1e-4, rtol=1e-4):
            difference = (got.double() - want.double()).abs().max().item()
            problems.append(f"gradient of {name} differs from eager's (max abs difference {difference:.3g})")
    return problems


# Set in the child processes `purity run` and `purity fuzz` run their work in.
_CHILD = "PURITY_TOOL_CHILD"


def _in_child(argv: list[str], extra_env: dict[str, str] | None = None) -> int:
    """`purity ARGV` in a child process, its output passed through: a native
    crash there (a signal) ends the child, not this process. Returns its exit
    status (negative: the signal that ended it)."""
    env = {**os.environ, _CHILD: "1", **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "torch_purity.tools.purity", *argv], env=env).returncode


def command_fuzz(args: argparse.Namespace) -> int:
    """Runs the fuzzing in a child; when a program crashes it (a signal), that
    program is saved as a CRASH regression and the run goes on, in a new
    child, from the next seed for the programs left."""
    if os.environ.get(_CHILD) == "1":
        return _fuzz_here(args)
    from ..fuzz import CURRENT_PROGRAM_FILE, REGRESSION_DIRECTORY, FuzzProgram, save_regression

    left, seed, crashes, status = args.n, args.seed, 0, 0
    while left > 0:
        with tempfile.TemporaryDirectory() as scratch:
            counts_path = Path(scratch, "counts.json")
            argv = ["fuzz", "--n", str(left), "--seed", str(seed), "--progress", str(args.progress)]
            argv += ["--no-save"] if args.no_save else []
            argv += ["--save-to", args.save_to] if args.save_to else []
            argv += ["--keep-going"] if args.keep_going else []
            code = _in_child(argv, {"PURITY_FUZZ_COUNTS": str(counts_path)})
            done = json.loads(counts_path.read_text())["programs"] if counts_path.exists() else 0
        if code >= 0:
            status = max(status, code)
            break
        crashes += 1
        reason = f"CRASH: the process died with {signal_name(code)} running this program (seed {seed})"
        print(f"CRASHED: {reason}", flush=True)
        if not args.no_save and CURRENT_PROGRAM_FILE.exists():
            directory = Path(args.save_to) if args.save_to else REGRESSION_DIRECTORY
            path = save_regression(FuzzProgram(CURRENT_PROGRAM_FILE.read_text()), reason, directory)
            print(f"  saved as a regression test: {path}", flush=True)
        left -= max(done, 1)
        seed += 1
    if crashes:
        print(f"crashed {crashes} (each reported above; the run went on)")
    return 1 if crashes else status


def _fuzz_here(args: argparse.Namespace) -> int:
    from ..fuzz import REGRESSION_DIRECTORY, run_fuzz

    counts_path = os.environ.get("PURITY_FUZZ_COUNTS")
    result = run_fuzz(
        args.n,
        args.seed,
        save=not args.no_save,
        progress_every=args.progress,
        counts_path=Path(counts_path) if counts_path else None,
        regression_directory=Path(args.save_to) if args.save_to else REGRESSION_DIRECTORY,
        keep_going=args.keep_going,
    )
    counts = result.counts
    print(
        f"programs {counts.programs}, passed {counts.passed} ({counts.via_fallback} with the eager fallback), "
        f"unsupported {counts.unsupported}, "
        f"failed {len(result.failures)}"
    )
    for reason, count in sorted(counts.unsupported_reasons.items(), key=lambda item: -item[1]):
        print(f"  unsupported x{count}: {reason}")
    for failure in result.failures:
        print(f"FAILED ({'as found' if args.keep_going else 'shrunk'}): {failure}")
    for path in result.saved:
        print(f"  saved as a regression test: {path}")
    return 1 if result.failures else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="purity", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="compile a program, run it and eager, compare and report")
    run.add_argument("file", help="a Python file defining `program` and `example_inputs()`")
    run.add_argument("--target", choices=list(TARGETS), default="cpu")
    run.add_argument("--dump-ir", metavar="DIR", help="write the IR of every stage to DIR")
    run.add_argument("--print-ir", action="store_true", help="print the IR of every stage")
    run.add_argument("--repeats", type=int, default=20, help="calls timed per side (default 20)")
    run.add_argument(
        "--fallback",
        choices=["eager", "error"],
        default="eager",
        help="ops Purity cannot compile: run them in eager between compiled segments (default) or fail",
    )
    run.add_argument(
        "--no-vendor-kernels",
        action="store_true",
        help="compile large float32 convolutions with IREE too (by default they run PyTorch's oneDNN kernel)",
    )
    run.set_defaults(handler=command_run)
    fuzz = commands.add_parser("fuzz", help="differential fuzzing: random aliasing programs, compiled vs eager")
    fuzz.add_argument("--n", type=int, default=200, help="programs to generate (default 200)")
    fuzz.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fuzz.add_argument("--no-save", action="store_true", help="do not save a failing program as a regression test")
    fuzz.add_argument(
        "--save-to", metavar="DIR", help="where failing programs are saved (default test/e2e/fuzz_regressions)"
    )
    fuzz.add_argument(
        "--keep-going",
        action="store_true",
        help="report and save every failing program (unshrunk) and go on, instead of stopping at the first",
    )
    fuzz.add_argument(
        "--progress",
        type=int,
        default=500,
        metavar="N",
        help="print the counts so far to stderr every N programs (default 500; 0: never)",
    )
    fuzz.set_defaults(handler=command_fuzz)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    args.argv = None if argv is None else list(argv)
    try:
        return args.handler(args)
    except (PurityError, CommandError) as error:
        print(f"purity: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # a user's program may raise anything; no traceback
        if os.environ.get("PURITY_DEBUG"):
            raise
        print(f"purity: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
