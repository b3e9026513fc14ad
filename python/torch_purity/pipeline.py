"""Named pipelines, stage by stage, and building PassManagers from pass names.

Stages (docs/architecture.md): mutable Torch IR -> functional Torch IR ->
value-boundary Torch IR -> torch backend contract -> linalg-on-tensors (what
torch-mlir produced) -> IREE's ABI (what Purity changed for IREE). Each
stage is a list of pass specs (`name` or `name{options}`), ending with
`purity-verify-contract` for it: Purity's passes by
their registry name, anything else by its registered MLIR name. The same
lists back `purity-opt --purity-lower-to-linalg`, so every failure of the
Python API can be reproduced with one purity-opt command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from .passes import PassOptionError
from .registry import PASSES, get_pass

# What torch-mlir's pipelines do, for stage summaries (Purity's passes
# summarize themselves: the first line of their docstring).
_UPSTREAM_SUMMARIES = {
    "canonicalize": "canonicalize",
    "torch-function-to-torch-backend-pipeline": "torch-mlir: to its backend contract",
    "torch-backend-to-linalg-on-tensors-backend-pipeline": "torch-mlir: backend contract to linalg-on-tensors",
    "convert-torch-to-linalg{allow-non-finites=true}": "torch-mlir's backend-to-linalg pipeline, pass by pass",
}


# torch-mlir's torch-backend-to-linalg-on-tensors-backend-pipeline, pass by
# pass (as its PassManager prints it), so that purity-runtime-loop-entry can
# run right before convert-torch-to-scf (TORCH-MLIR-WORKAROUND(for-like-while)).
_TORCH_TO_LINALG = (
    "torch-restructure-non-constant-axes",
    "torch-fuse-quantized-ops",
    "convert-torch-to-tmtensor{allow-non-finites=true}",
    "canonicalize",
    "convert-torch-to-linalg{allow-non-finites=true}",
    "canonicalize",
    "convert-torch-to-scf",
    "convert-torch-to-arith",
    "convert-torch-to-tensor",
    "convert-torch-conversion-to-mlprogram",
    "memref-expand",
    "canonicalize",
    "resolve-shaped-type-result-dims{error-on-pattern-iteration-limit=true}",
    "cse",
    "torch-func-backend-type-conversion",
    "canonicalize",
    "torch-finalizing-backend-type-conversion",
    "torch-verify-linalg-on-tensors-backend-contract",
)


@dataclass(frozen=True)
class Stage:
    name: str  # also the file name of its IR under --dump-ir
    work: tuple[str, ...]  # pass specs, without the contract check that ends every stage

    @property
    def passes(self) -> tuple[str, ...]:
        """The stage's passes, ending with the check of its output's contract."""
        return (*self.work, f"purity-verify-contract{{stage={self.name}}}")

    @property
    def summary(self) -> str:
        """One line per pass, from the passes' own summaries."""
        return "; ".join(pass_summary(spec) for spec in self.work)


STAGES: tuple[Stage, ...] = (
    Stage(
        "functional-torch",
        (
            "purity-synthesize-bases",
            "purity-functionalize{record-mutations=true}",
            "purity-fold-region-rewrites",
            "purity-decompose-strided",
            "purity-check-indices",
            "canonicalize",
        ),
    ),
    Stage(
        "value-boundary-torch",
        ("purity-expose-input-writes", "purity-partition-joint", "purity-tie-written-inputs"),
    ),
    Stage("torch-backend", ("torch-function-to-torch-backend-pipeline",)),
    Stage(
        "linalg",
        (
            "purity-materialize-empty-results",
            *_TORCH_TO_LINALG[:6],
            "purity-runtime-loop-entry",
            *_TORCH_TO_LINALG[6:14],
            "purity-refuse-unlowered-ops",
            *_TORCH_TO_LINALG[14:],
        ),
    ),
    Stage(
        "iree-abi",
        (
            "purity-chain-same-region-writes",
            "purity-elide-input-view-results",
            "purity-tensor-while-condition",
            "purity-seed-from-argument",
            "purity-isolate-results",
            "purity-materialize-uniform-reduction-inputs",
            "purity-merge-sibling-reductions",
            "purity-separate-sort-destinations",
            "purity-split-scalar-dispatches",
            "purity-copy-overlapping-slice-sources",
            "purity-dispatch-argument-writes",
            "purity-store-results-in-arguments",
            "purity-read-before-tied-writes",
            "purity-mark-unwritten-arguments",
        ),
    ),
)
STAGE_NAMES = tuple(stage.name for stage in STAGES)

PIPELINES: dict[str, tuple[str, ...]] = {
    "purity-lower-to-linalg": tuple(p for stage in STAGES for p in stage.passes),
    "purity-lower-to-functional": STAGES[0].passes,
}
PIPELINE_SUMMARIES = {
    "purity-lower-to-linalg": "every stage (" + ", ".join(STAGE_NAMES) + "): mutable Torch IR to "
    "linalg-on-tensors for IREE, each stage's contract verified",
    "purity-lower-to-functional": "the functional-torch stage: " + ", ".join(STAGES[0].work),
}


def pass_summary(spec: str) -> str:
    name = spec.split("{")[0]
    if name in PASSES:
        return f"{name}: {get_pass(name).summary()}"
    return _UPSTREAM_SUMMARIES.get(name, name)


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
    """Nests a C++ pass under the anchor it is restricted to, as mlir-opt does
    (found when parsing, or, for the passes that say so only once scheduled,
    from `_FUNCTION_ANCHORED`)."""
    try:
        PassManager.parse(f"builtin.module({element})", context=context)
    except ValueError as error:
        anchor = _RESTRICTED_ANCHOR.search(str(error))
        if anchor:
            return f"{anchor.group(1)}({element})"
        raise PipelineError(_describe_parse_error(str(error), element)) from None
    if element.split("{")[0] in _FUNCTION_ANCHORED:
        return f"func.func({element})"
    return element


# Passes that run on functions only but parse at module level, failing once
# scheduled ("unable to schedule pass ... on a PassManager intended to run on
# 'builtin.module'"): torch-mlir's, in the linalg stage.
_FUNCTION_ANCHORED = frozenset(
    {
        "torch-restructure-non-constant-axes",
        "torch-fuse-quantized-ops",
        "convert-torch-to-tmtensor",
        "convert-torch-to-linalg",
        "convert-torch-to-scf",
        "convert-torch-to-arith",
        "convert-torch-to-tensor",
        "memref-expand",
        "resolve-shaped-type-result-dims",
        "torch-finalizing-backend-type-conversion",
    }
)


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
