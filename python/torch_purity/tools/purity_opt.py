"""purity-opt: an mlir-opt style driver for Purity's and every registered MLIR pass.

    purity-opt [options] [input.mlir|-] [--PASS[=OPTIONS]]... [-o out.mlir]

Passes run in the order given, in one PassManager: Purity's Python-defined
passes (listed by --help) next to torch-mlir's and upstream MLIR's C++ passes
(any registered pass name, e.g. --canonicalize, --torch-reduce-op-variants;
options as --PASS="key=value key2=value2"). A pass anchored on a nested op
(func.func) is nested automatically. --pass-pipeline='builtin.module(...)'
takes a textual pipeline whose top-level elements may also name Purity passes.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from ..importer import new_context
from ..pipeline import PIPELINE_SUMMARIES, PipelineError, pass_manager, split_top_level
from ..registry import PASSES, get_pass
from .diagnostics import Diagnostic, from_mlir

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.MULTILINE)
_EXPECTATION = re.compile(
    r"expected-(error|warning|note|remark)\s*(?:@([+-][0-9]+|above|below|unknown))?\s*\{\{(.*?)\}\}"
)

DRIVER_FLAGS = {
    "split-input-file": "run each `// -----` separated chunk on its own",
    "verify-diagnostics": "check emitted diagnostics against expected-* comments",
    "mlir-print-ir-after-all": "print the IR after every pass (stderr)",
    "mlir-print-ir-before-all": "print the IR before every pass (stderr)",
    "mlir-timing": "report time spent in each pass",
    "mlir-print-debuginfo": "print locations in the output",
    "allow-unregistered-dialect": "accept ops of unregistered dialects",
}


class UsageError(Exception):
    pass


@dataclass
class PassSpec:
    name: str
    options: str = ""


@dataclass
class Invocation:
    input_path: str = "-"
    output_path: str = "-"
    flags: set[str] = field(default_factory=set)
    passes: list[PassSpec] = field(default_factory=list)
    pipeline: str | None = None


def parse_command_line(argv: Sequence[str]) -> Invocation:
    invocation = Invocation()
    positional: list[str] = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help", "-help"):
            raise _HelpRequested
        if arg == "-o":
            if not args:
                raise UsageError("-o needs a file name")
            invocation.output_path = args.pop(0)
            continue
        if arg.startswith("-o=") or (arg.startswith("-o") and not arg.startswith("--") and len(arg) > 2):
            invocation.output_path = arg[3:] if arg.startswith("-o=") else arg[2:]
            continue
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        name, _, value = arg.lstrip("-").partition("=")
        if name in DRIVER_FLAGS:
            invocation.flags.add(name)
        elif name == "pass-pipeline":
            invocation.pipeline = value.strip("'\"")
        else:
            invocation.passes.append(PassSpec(name, value.strip("'\"")))
    if len(positional) > 1:
        raise UsageError(f"only one input file may be given, got {' '.join(positional)}")
    if positional:
        invocation.input_path = positional[0]
    if invocation.pipeline is not None and invocation.passes:
        raise UsageError("--pass-pipeline cannot be combined with individual pass flags")
    return invocation


class _HelpRequested(Exception):
    pass


def help_text() -> str:
    lines = [__doc__.strip(), "", "Purity passes:"]
    for name in sorted(PASSES):
        lines.append(f"  --{name:<34} {get_pass(name).summary()}")
    lines.append("")
    lines.append("Purity pipelines:")
    for name, summary in PIPELINE_SUMMARIES.items():
        lines.append(f"  --{name:<34} {summary}")
    lines.append("")
    lines.append("Driver options:")
    lines.append(f"  {'-o FILE':<36} write the output to FILE (default: stdout)")
    lines.append(f"  {'--pass-pipeline=PIPELINE':<36} a textual pass pipeline")
    for flag, text in DRIVER_FLAGS.items():
        lines.append(f"  --{flag:<34} {text}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# Pass manager construction
# ----------------------------------------------------------------------------


def build_pass_manager(invocation: Invocation, context: ir.Context) -> PassManager:
    if invocation.pipeline is not None:
        specs = split_top_level(invocation.pipeline)
    else:
        specs = [f"{p.name}{{{p.options}}}" if p.options else p.name for p in invocation.passes]
    try:
        pm = pass_manager(specs, context)
    except PipelineError as error:
        raise UsageError(str(error)) from None
    if "mlir-print-ir-after-all" in invocation.flags or "mlir-print-ir-before-all" in invocation.flags:
        pm.enable_ir_printing(
            print_before_all="mlir-print-ir-before-all" in invocation.flags,
            print_after_all="mlir-print-ir-after-all" in invocation.flags,
            print_module_scope=True,
        )
    if "mlir-timing" in invocation.flags:
        pm.enable_timing()
    return pm


# ----------------------------------------------------------------------------
# Running one buffer
# ----------------------------------------------------------------------------


@dataclass
class ChunkResult:
    output: str | None
    diagnostics: list[Diagnostic]


def load_lowering_dialects(context: ir.Context) -> None:
    """Loads tm_tensor, which torch-mlir registers only as a dependent dialect
    of its lowering, so that linalg-stage IR (index_put_ becomes
    tm_tensor.scatter) parses as input too."""
    with context:
        empty = ir.Module.parse("module {}")
        PassManager.parse("builtin.module(func.func(convert-torch-to-tmtensor))").run(empty.operation)


def run_chunk(text: str, invocation: Invocation, source_name: str, line_offset: int) -> ChunkResult:
    context = new_context()
    load_lowering_dialects(context)
    context.allow_unregistered_dialects = "allow-unregistered-dialect" in invocation.flags
    collected: list[Diagnostic] = []

    def on_diagnostic(diagnostic) -> bool:
        collected.append(from_mlir(diagnostic, source_name, line_offset))
        return True

    context.attach_diagnostic_handler(on_diagnostic)
    with context:
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as error:
            collected += [from_mlir(d, source_name, line_offset) for d in error.error_diagnostics]
            return ChunkResult(None, collected)
        pm = build_pass_manager(invocation, context)
        try:
            pm.run(module.operation)
        except ir.MLIRError as error:
            collected += [from_mlir(d, source_name, line_offset) for d in error.error_diagnostics]
            return ChunkResult(None, collected)
        output = module.operation.get_asm(enable_debug_info="mlir-print-debuginfo" in invocation.flags)
    return ChunkResult(output, collected)


# ----------------------------------------------------------------------------
# --verify-diagnostics
# ----------------------------------------------------------------------------


@dataclass
class Expectation:
    severity: str
    message: str
    line: int | None  # None for @unknown
    source_line: int
    matched: bool = False


def parse_expectations(text: str, line_offset: int) -> list[Expectation]:
    lines = text.splitlines()
    expectations = []
    for index, line in enumerate(lines):
        for match in _EXPECTATION.finditer(line):
            severity, designator, message = match.groups()
            here = index + 1
            if designator is None:
                target: int | None = here
            elif designator == "unknown":
                target = None
            elif designator in ("above", "below"):
                step = -1 if designator == "above" else 1
                target = here + step
                while 0 < target <= len(lines) and _EXPECTATION.search(lines[target - 1]):
                    target += step
            else:
                target = here + int(designator)
            expectations.append(
                Expectation(severity, message, None if target is None else target + line_offset, here + line_offset)
            )
    return expectations


def verify_diagnostics(diagnostics: list[Diagnostic], expectations: list[Expectation], source_name: str) -> list[str]:
    problems = []
    flat: list[Diagnostic] = []
    for diagnostic in diagnostics:
        flat.append(diagnostic)
        flat.extend(diagnostic.notes)
    for diagnostic in flat:
        line = diagnostic.line if diagnostic.file == source_name else None
        for expectation in expectations:
            if (
                not expectation.matched
                and expectation.severity == diagnostic.severity
                and expectation.line == line
                and expectation.message in diagnostic.message
            ):
                expectation.matched = True
                break
        else:
            if diagnostic.severity != "note":
                where = f"{diagnostic.file}:{diagnostic.line}:{diagnostic.column}: " if diagnostic.file else ""
                problems.append(f"{where}error: unexpected {diagnostic.severity}: {diagnostic.message}")
    for expectation in expectations:
        if not expectation.matched:
            problems.append(
                f"{source_name}:{expectation.source_line}:1: error: expected {expectation.severity} "
                f'"{expectation.message}" was not produced'
            )
    return problems


# ----------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------


def _chunks(text: str) -> list[tuple[str, int]]:
    """(chunk text, number of lines before it) for --split-input-file."""
    pieces, offset, start = [], 0, 0
    for marker in SPLIT_MARKER.finditer(text):
        pieces.append((text[start : marker.start()], offset))
        offset += text[start : marker.end()].count("\n")
        start = marker.end()
    pieces.append((text[start:], offset))
    return pieces


def run(argv: Sequence[str]) -> int:
    try:
        invocation = parse_command_line(argv)
    except _HelpRequested:
        print(help_text())
        return 0
    source_name = "<stdin>" if invocation.input_path == "-" else invocation.input_path
    try:
        text = sys.stdin.read() if invocation.input_path == "-" else open(invocation.input_path).read()
    except OSError as error:
        print(
            f"purity-opt: error: could not open input file '{invocation.input_path}': {error.strerror}", file=sys.stderr
        )
        return 1
    # Pass specs are checked once up front, so a bad flag fails before any IR is read.
    build_pass_manager(invocation, new_context())

    chunks = _chunks(text) if "split-input-file" in invocation.flags else [(text, 0)]
    outputs: list[str] = []
    failed = False
    for chunk, offset in chunks:
        result = run_chunk(chunk, invocation, source_name, offset)
        if "verify-diagnostics" in invocation.flags:
            problems = verify_diagnostics(result.diagnostics, parse_expectations(chunk, offset), source_name)
            for problem in problems:
                print(problem, file=sys.stderr)
            failed |= bool(problems)
        else:
            for diagnostic in result.diagnostics:
                print(diagnostic.render(), file=sys.stderr)
            failed |= result.output is None
        if result.output is not None:
            outputs.append(result.output)
    rendered = "\n// -----\n".join(outputs)
    if invocation.output_path == "-":
        sys.stdout.write(rendered)
    else:
        with open(invocation.output_path, "w") as handle:
            handle.write(rendered)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"purity-opt: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # never show users a traceback; PURITY_DEBUG=1 does
        if os.environ.get("PURITY_DEBUG"):
            raise
        print(f"purity-opt: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
