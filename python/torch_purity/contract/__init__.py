"""The IR contract between Purity's stages, in one place: every attribute
name, the typed records they carry, and the calling convention the runtime
reads from the last stage's IR.

This module needs torch only (the runtime and saved programs import it);
reading and writing the attributes on MLIR ops is `contract.ir`, checking a
stage's output is the pass `purity-verify-contract`. docs/architecture.md
describes each stage's contract in prose; this is its executable form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..layout import Layout

# -- argument attributes (importer) --------------------------------------------
INPUT_NAME = "purity.input"  # the program input an argument stands for
SIZES = "purity.sizes"  # an input tensor's layout in its storage
STRIDES = "purity.strides"
STORAGE_OFFSET = "purity.storage_offset"
STORAGE_GROUP = "purity.storage_group"  # equal for inputs sharing storage

# -- purity-synthesize-bases ----------------------------------------------------
SYNTHETIC_BASE_OF = "purity.synthetic_base_of"  # on the base argument: its members
REGENERATES_INPUT = "purity.regenerates_input"  # on the as_strided/view regenerating a member

# -- purity-functionalize ---------------------------------------------------------
NEW_SIZES = "purity.new_sizes"  # an argument's layout after a metadata mutation
NEW_STRIDES = "purity.new_strides"
NEW_STORAGE_OFFSET = "purity.new_storage_offset"
ALIASES_INPUT = "purity.aliases_input"  # on a result viewing an argument
ALIAS_GROUP = "purity.alias_group"  # on results viewing one intermediate
# On a result eager returns as a view, whose layout is not a constant (a
# narrow at a runtime position, a dynamic dim): returned as a copy of its
# own. Its value: the argument it views, or -1 for an intermediate.
VIEW_RETURNED_AS_COPY = "purity.view_returned_as_copy"
ALIAS_BASE = "purity.alias_base"  # on the returned intermediate of a group
VIEW_SIZES = "purity.view_sizes"  # a viewing result's layout in its base's storage
VIEW_STRIDES = "purity.view_strides"
VIEW_STORAGE_OFFSET = "purity.view_storage_offset"
MUTATIONS = "purity.mutations"  # on the function: MutationRecord per write (record-mutations=true)

# -- purity-check-indices -----------------------------------------------------------
INDEX_CHECKS = "purity.index_checks"  # on the flags result: IndexCheck per check
GUARD_READ = "purity.guard_read"  # on a read of a region a guarded write replaces

# -- purity-expose-input-writes / purity-tie-written-inputs -------------------------
WRITTEN_INPUT = "purity.written_input"  # on a result: the argument it is the final value of
IREE_OUTPUT = "iree.abi.output"  # on an argument: the result IREE stores in its buffer

# -- the joint graph of a training program (driver) / purity-partition-joint ------------
TANGENT = "purity.tangent"  # on a joint argument: the incoming gradient of program output N
GRADIENT_OF = "purity.gradient_of"  # on a joint (then backward) result: the gradient of argument N
SAVED = "purity.saved"  # on a forward result: the value of the backward's argument N
SAVED_ARGUMENT = "purity.saved_argument"  # on a backward argument: the forward's argument N, the caller's tensor
SAVED_OUTPUT = "purity.saved_output"  # on a backward argument: the forward's program output N

# -- IREE ABI stage ----------------------------------------------------------------
UNWRITTEN = "purity.unwritten"  # an argument IREE only reads
RESULT_STORAGE = "purity.result_storage"  # a storage argument: the result stored in it
RNG_SEED = "purity.rng_seed"  # the argument random ops draw from: a seed the caller draws per call
RESULT_ELEMENT_TYPES = (
    "purity.result_element_types"  # on the function: each result's Torch element type (builtin types lose signedness)
)

ATTRIBUTE_PREFIXES = ("purity.", "iree.abi.")

# Torch-dialect element types and the torch dtypes they stand for.
TORCH_DTYPES: dict[str, torch.dtype] = {
    "f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
    "si64": torch.int64, "si32": torch.int32, "si16": torch.int16, "si8": torch.int8,
    "ui8": torch.uint8, "i1": torch.bool,
}  # fmt: skip


@dataclass(frozen=True)
class MutationRecord:
    """One write or metadata mutation purity-functionalize saw, for reports."""

    kind: str  # "write" or "metadata"
    op: str  # ATen op, e.g. "aten.add_.Tensor"
    location: str  # "file:line", or "" when unknown
    target: str  # "argument N" or "an intermediate"
    chain: str  # the views it went through: "aten.select.int(0, 1) -> ..."

    @property
    def argument(self) -> int | None:
        return int(self.target.split()[1]) if self.target.startswith("argument ") else None

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "op": self.op, "location": self.location, "target": self.target, "chain": self.chain}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> MutationRecord:
        return cls(**data)


@dataclass(frozen=True)
class IndexCheck:
    """One index operand purity-check-indices checks: `count` flags, in order."""

    op: str  # ATen op
    location: str  # "file:line", or ""
    count: int

    def to_json(self) -> dict[str, object]:
        return {"op": self.op, "location": self.location, "count": self.count}

    @classmethod
    def from_json(cls, data: dict) -> IndexCheck:
        return cls(data["op"], data["location"], data["count"])


@dataclass
class CallingConvention:
    """How the compiled `main`'s arguments and results map back onto the
    eager program; read from the last stage's IR (`contract.ir.read_calling_convention`)."""

    output_results: list[int]  # result index of each program output
    output_views: dict[int, tuple[int, Layout]]  # program output -> (input, view of it)
    written_inputs: list[tuple[int, int]]  # (result index, input index)
    metadata_mutations: dict[int, Layout]  # input index -> its new layout
    result_dtypes: list[torch.dtype | None]  # None: an element type torch lacks, only on results never read
    # Extra trailing arguments: (members, length) of each synthetic base, a
    # 1-d view of the members' storage from its first element.
    synthetic_bases: list[tuple[tuple[int, ...], int]] = field(default_factory=list)
    mutations: list[MutationRecord] = field(default_factory=list)
    # Written inputs whose final value IREE stores into their own buffer (iree.abi.output).
    tied_inputs: set[int] = field(default_factory=set)
    # Arguments the compiled code only reads (purity.unwritten).
    unwritten_inputs: set[int] = field(default_factory=set)
    # (result index, shape) of each storage argument, the last arguments
    # (purity.result_storage): the caller passes a fresh tensor for each, and
    # IREE writes the result into it.
    result_storage: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    # (result index of the flags, checks in flag order), or None without checks.
    index_checks: tuple[int, tuple[IndexCheck, ...]] | None = None
    # Program output -> (result index of an intermediate, view of it): outputs
    # that view one intermediate are handed out as views of that result.
    output_bases: dict[int, tuple[int, Layout]] = field(default_factory=dict)
    # The argument (after the inputs and synthetic bases) taking the random
    # ops' seed (purity.rng_seed), or None for a program without random ops.
    rng_seed_input: int | None = None
    # A training program's halves (purity-partition-joint). Forward: backward
    # argument k -> the result holding it (`purity.saved = k`). Backward: per
    # argument, where the runtime finds it: ("argument", forward argument),
    # ("output", forward output), ("saved", k: a saved result) or ("tangent",
    # program output whose gradient it is); per output, the forward argument
    # it is the gradient of.
    saved_results: dict[int, int] = field(default_factory=dict)
    backward_arguments: list[tuple[str, int]] = field(default_factory=list)
    gradient_of: list[int] = field(default_factory=list)
    # Program output -> the argument it views (-1: an intermediate), for
    # outputs eager returns as views that this program returns as copies
    # (purity.view_returned_as_copy); the runtime makes views of arguments
    # from their traced layout where it has one (guards.SymbolicShapes).
    views_returned_as_copies: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "output_results": self.output_results,
            "output_views": [[output, source, view.to_json()] for output, (source, view) in self.output_views.items()],
            "written_inputs": [list(pair) for pair in self.written_inputs],
            "metadata_mutations": [[index, layout.to_json()] for index, layout in self.metadata_mutations.items()],
            "result_dtypes": [None if d is None else str(d).removeprefix("torch.") for d in self.result_dtypes],
            "synthetic_bases": [[list(members), length] for members, length in self.synthetic_bases],
            "mutations": [record.to_json() for record in self.mutations],
            "tied_inputs": sorted(self.tied_inputs),
            "unwritten_inputs": sorted(self.unwritten_inputs),
            "result_storage": [[result, list(shape)] for result, shape in self.result_storage],
            "index_checks": None
            if self.index_checks is None
            else [self.index_checks[0], [check.to_json() for check in self.index_checks[1]]],
            "output_bases": [[output, base, view.to_json()] for output, (base, view) in self.output_bases.items()],
            "rng_seed_input": self.rng_seed_input,
            "saved_results": [[k, result] for k, result in self.saved_results.items()],
            "backward_arguments": [list(pair) for pair in self.backward_arguments],
            "gradient_of": self.gradient_of,
            "views_returned_as_copies": [list(pair) for pair in self.views_returned_as_copies.items()],
        }

    @classmethod
    def from_json(cls, data: dict) -> CallingConvention:
        checks = data["index_checks"]
        return cls(
            output_results=list(data["output_results"]),
            output_views={output: (source, Layout.from_json(view)) for output, source, view in data["output_views"]},
            written_inputs=[(result, source) for result, source in data["written_inputs"]],
            metadata_mutations={index: Layout.from_json(layout) for index, layout in data["metadata_mutations"]},
            result_dtypes=[None if name is None else getattr(torch, name) for name in data["result_dtypes"]],
            synthetic_bases=[(tuple(members), length) for members, length in data["synthetic_bases"]],
            mutations=[MutationRecord.from_json(record) for record in data["mutations"]],
            tied_inputs=set(data["tied_inputs"]),
            unwritten_inputs=set(data["unwritten_inputs"]),
            result_storage=[(result, tuple(shape)) for result, shape in data["result_storage"]],
            index_checks=None if checks is None else (checks[0], tuple(IndexCheck.from_json(c) for c in checks[1])),
            output_bases={output: (base, Layout.from_json(view)) for output, base, view in data["output_bases"]},
            rng_seed_input=data.get("rng_seed_input"),
            saved_results={k: result for k, result in data.get("saved_results", [])},
            backward_arguments=[(kind, index) for kind, index in data.get("backward_arguments", [])],
            gradient_of=list(data.get("gradient_of", [])),
            views_returned_as_copies={o: a for o, a in data.get("views_returned_as_copies", [])},
        )
