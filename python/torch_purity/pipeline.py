"""Named pipelines, stage by stage, and building PassManagers from pass names.

Stages (docs/architecture.md): mutable Torch IR -> functional Torch IR ->
value-boundary Torch IR -> torch backend contract -> linalg-on-tensors. Each
stage is a list of pass specs (`name` or `name{options}`): Purity's passes by
their registry name, anything else by its registered MLIR name. The same
lists back `purity-opt --purity-lower-to-linalg`, so every failure of the
Python API can be reproduced with one purity-opt command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from .passes import PASSES, PassOptionError, get_pass


@dataclass(frozen=True)
class Stage:
    name: str  # also the file name of its IR under --dump-ir
    passes: tuple[str, ...]
    summary: str


STAGES: tuple[Stage, ...] = (
    Stage(
        "functional-torch",
        (
            "purity-synthesize-bases",
            "purity-functionalize{record-mutations=true}",
            "purity-decompose-strided",
            "purity-check-indices",
            "canonicalize",
        ),
        "overlapping written inputs merged into synthetic bases; mutation and aliasing removed; "
        "written arguments keep one edge overwrite; indices read from data clamped, checked and reported "
        "in an extra result, writes into arguments guarded on the checks",
    ),
    Stage(
        "value-boundary-torch",
        ("purity-expose-input-writes",),
        "each written argument's final value is an extra result tied to it (iree.abi.output)",
    ),
    Stage("torch-backend", ("torch-function-to-torch-backend-pipeline",), "torch-mlir's backend contract"),
    Stage(
        "linalg",
        (
            "torch-backend-to-linalg-on-tensors-backend-pipeline",
            "purity-isolate-results",
            "purity-copy-overlapping-slice-sources",
            "purity-dispatch-argument-writes",
            "purity-store-results-in-arguments",
            "purity-mark-unwritten-arguments",
        ),
        "linalg-on-tensors; returned values that are also updated in place pass through a barrier for IREE; "
        "a slice copied within one tensor is copied out first; slice writes into tied arguments read their destination; each untied result gets a storage argument, "
        "and a dispatch writes every result into its argument; "
        "arguments IREE cannot write into are marked purity.unwritten",
    ),
)

PIPELINES: dict[str, tuple[str, ...]] = {
    "purity-lower-to-linalg": tuple(p for stage in STAGES for p in stage.passes),
    "purity-lower-to-functional": STAGES[0].passes,
}
PIPELINE_SUMMARIES = {
    "purity-lower-to-linalg": "all stages: mutable Torch IR to linalg-on-tensors with written arguments tied to results",
    "purity-lower-to-functional": "purity-synthesize-bases, purity-functionalize, purity-decompose-strided, "
    "purity-check-indices, canonicalize",
}

_RESTRICTED_ANCHOR = re.compile(r"restricted to '([^']+)'")
_SPEC = re.compile(r"([A-Za-z0-9_.\-]+)(\{(.*)\})?$", re.DOTALL)


class PipelineError(ValueError):
    """An unknown pass, pipeline or option."""


def expand(specs: list[str]) -> list[str]:
    """Replaces named pipelines by their passes."""
    expanded: list[str] = []
    for spec in specs:
        name = spec.split("{")[0]
        expanded.extend(expand(list(PIPELINES[name])) if name in PIPELINES else [spec])
    return expanded


def split_top_level(pipeline: str) -> list[str]:
    """`builtin.module(a, b{x=1}, func.func(c))` -> ["a", "b{x=1}", "func.func(c)"]."""
    text = pipeline.strip()
    match = re.fullmatch(r"builtin\.module\((.*)\)", text, re.DOTALL)
    if match:
        text = match.group(1)
    elements, depth, current = [], 0, []
    for char in text:
        if char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
        if char == "," and depth == 0:
            elements.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        elements.append("".join(current).strip())
    return elements


def _parse_options(text: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in text.split():
        key, _, value = item.partition("=")
        options[key] = value
    return options


def _describe_parse_error(message: str, element: str) -> str:
    if "does not refer to a registered pass" in message:
        return f"unknown pass or option '--{element.split('{')[0]}' (see --help)"
    return f"invalid pass '{element}': " + " ".join(message.split())


def _nested(element: str, context: ir.Context) -> str:
    """Nests a C++ pass under the anchor it is restricted to, as mlir-opt does."""
    try:
        PassManager.parse(f"builtin.module({element})", context=context)
        return element
    except ValueError as error:
        anchor = _RESTRICTED_ANCHOR.search(str(error))
        if anchor:
            return f"{anchor.group(1)}({element})"
        raise PipelineError(_describe_parse_error(str(error), element)) from None


def add_passes(pm: PassManager, specs: list[str], context: ir.Context) -> None:
    """Appends passes (Purity or MLIR, or named pipelines) to `pm`, in order."""
    for spec in expand(specs):
        head = _SPEC.match(spec)
        if head and head.group(1) in PASSES:
            try:
                get_pass(head.group(1)).from_options(_parse_options(head.group(3) or "")).add_to(pm)
            except PassOptionError as error:
                raise PipelineError(str(error)) from None
            continue
        nested = _nested(spec, context)
        try:
            pm.add(nested)
        except ValueError as error:
            raise PipelineError(_describe_parse_error(str(error), spec)) from None


def pass_manager(specs: list[str], context: ir.Context) -> PassManager:
    pm = PassManager("builtin.module", context=context)
    add_passes(pm, specs, context)
    return pm


def reproducer_command(ir_path: str, specs: list[str]) -> str:
    flags = " ".join(_flag(s) for s in specs)
    return f"purity-opt {ir_path} {flags}"


def _flag(spec: str) -> str:
    """`name{a=1 b=2}` as purity-opt's (and mlir-opt's) `'--name=a=1 b=2'`."""
    head = _SPEC.match(spec)
    if head is None or head.group(2) is None:
        return f"--{spec}"
    return f"'--{head.group(1)}={head.group(3)}'"
