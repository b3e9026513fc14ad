"""Conformance cases from PyTorch's OpInfo database, compiled with Purity and compared with eager.

A case is one (OpInfo, variant, dtype): its first `samples` sample inputs on the
CPU, all run by one compiled program (one compile per case, not per sample).
Variants:

- `function`: the op on the sample's arguments;
- `inplace`: the in-place variant (samples that broadcast their input skipped);
- `out`: the function with `out=` tensors shaped as eager's results;
- `view`: the function applied to a view (`base[1:]`, or `base[1]` for a 0-d
  input) of a larger input `base`;
- `inplace_view`: the in-place variant through that view, so its writes must
  reach `base`.

Statuses: PASS; WRONG (outputs, inputs after the call, their layouts or the
outputs' aliasing differ from eager); UNSUPPORTED (a located `PurityError`);
CRASH (any other exception, a compiler crash, or the worker dying: the runner
runs cases in worker processes). Samples eager rejects are dropped before
compiling; a case with none left is not run (`EAGER_ERROR`).

Values are compared as `torch.testing.assert_close` with its per-dtype
defaults (integers and booleans exact, NaN where eager has NaN). Ops whose
eager outputs differ between two runs with different seeds (random ops,
uninitialized `empty`) are compared by shape, dtype and aliasing only.
"""

from __future__ import annotations

import difflib
import functools
import time
import traceback
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

import torch_purity
from torch_purity.checking import clone_preserving_aliasing
from torch_purity.errors import PurityCompilerCrash

VARIANTS = ("function", "inplace", "out", "view", "inplace_view")
DTYPES = (torch.float32, torch.float64, torch.int64, torch.bool)
# Run only when asked for (`--dtypes uint8 int8`): not in the whole run the README reports.
EXTRA_DTYPES = (torch.uint8, torch.int8)
DTYPE_NAMES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.bool: "bool",
    torch.uint8: "uint8",
    torch.int8: "int8",
}


@functools.cache
def op_db() -> dict[str, object]:
    """OpInfos by full name (`name` or `name.variant_test_name`)."""
    from torch.testing._internal.common_methods_invocations import op_db as database

    return {_full_name(info): info for info in database}


def _unknown_name(name: str, database: dict[str, object]) -> str:
    """`name` is no OpInfo: the names it may have meant (its variants, close spellings)."""
    variants = sorted(full for full in database if full.startswith(f"{name}."))
    close = variants or difflib.get_close_matches(name, database, n=5)
    return f"no OpInfo named {name!r}" + (f" (did you mean {', '.join(close)}?)" if close else "")


def _full_name(info) -> str:
    return f"{info.name}.{info.variant_test_name}" if info.variant_test_name else info.name


@dataclass(frozen=True)
class Case:
    op: str
    variant: str
    dtype: str

    @property
    def key(self) -> str:
        return f"{self.op}|{self.variant}|{self.dtype}"

    @classmethod
    def from_key(cls, key: str) -> Case:
        op, variant, dtype = key.split("|")
        return cls(op, variant, dtype)


@dataclass
class Result:
    case: Case
    status: str
    samples: int = 0
    reason: str = ""
    eager_ops: list[str] = field(default_factory=list)
    compared: str = "values"
    seconds: float = 0.0

    def row(self) -> dict[str, object]:
        return {
            "op": self.case.op,
            "variant": self.case.variant,
            "dtype": self.case.dtype,
            "status": self.status,
            "samples": self.samples,
            "eager_ops": " ".join(self.eager_ops),
            "compared": self.compared,
            "seconds": f"{self.seconds:.1f}",
            "reason": self.reason,
        }


def cases(ops: list[str] | None = None, dtypes: tuple[str, ...] | None = None) -> list[Case]:
    """Every (op, variant, dtype) the OpInfo declares for the CPU."""
    database = op_db()
    unknown = [name for name in ops or () if name not in database]
    if unknown:
        raise ValueError("; ".join(_unknown_name(name, database) for name in unknown))
    wanted = [database[name] for name in ops] if ops else list(database.values())
    found = []
    for info in wanted:
        supported = info.supported_dtypes("cpu")
        for dtype in DTYPES + EXTRA_DTYPES if dtypes else DTYPES:
            if dtype not in supported or (dtypes and DTYPE_NAMES[dtype] not in dtypes):
                continue
            for variant in VARIANTS:
                if variant.startswith("inplace") and info.inplace_variant is None:
                    continue
                if variant == "out" and not info.supports_out:
                    continue
                found.append(Case(_full_name(info), variant, DTYPE_NAMES[dtype]))
    return found


# --- one sample as a program over its tensors ------------------------------------------------------


@dataclass
class Sample:
    """A sample's arguments with its tensors taken out: `call(op, tensors)` runs it."""

    tensors: list[torch.Tensor]
    structure: pytree.TreeSpec
    leaves: list[object]

    @classmethod
    def of(cls, sample) -> Sample:
        leaves, structure = pytree.tree_flatten((sample.input, list(sample.args), dict(sample.kwargs)))
        tensors = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]
        return cls(tensors, structure, leaves)

    def arguments(self, tensors: list[torch.Tensor]) -> tuple[object, list, dict]:
        given = iter(tensors)
        leaves = [next(given) if isinstance(leaf, torch.Tensor) else leaf for leaf in self.leaves]
        return pytree.tree_unflatten(leaves, self.structure)


def _view_base(tensor: torch.Tensor) -> torch.Tensor:
    """A larger tensor whose `[1:]` (or `[1]` for 0-d) is `tensor`'s values."""
    if tensor.dim() == 0:
        base = torch.empty(2, dtype=tensor.dtype)
        base[1] = tensor
    else:
        base = torch.empty((tensor.shape[0] + 1, *tensor.shape[1:]), dtype=tensor.dtype)
        base[1:] = tensor
    base[0] = _filler(base[0])
    return base


def _filler(like: torch.Tensor) -> torch.Tensor:
    if like.dtype == torch.bool:
        return torch.ones_like(like)
    return torch.full_like(like, 3)


class _Step:
    """One sample of a case: the tensors it takes and how it runs on them."""

    def __init__(self, info, sample, variant: str) -> None:
        self.info, self.variant = info, variant
        self.sample = Sample.of(sample)
        self.view_of_0d = False
        self.out_like: list[torch.Tensor] = []
        self.out_is_sequence = False

    def inputs(self) -> list[torch.Tensor]:
        tensors = list(self.sample.tensors)
        if self.variant in ("view", "inplace_view"):
            self.view_of_0d = tensors[0].dim() == 0
            tensors[0] = _view_base(tensors[0])
        return tensors + [torch.empty_like(t) for t in self.out_like]

    def run(self, tensors: list[torch.Tensor]) -> object:
        count = len(self.sample.tensors)
        given, outs = list(tensors[:count]), tensors[count:]
        if self.variant in ("view", "inplace_view"):
            given[0] = given[0][1] if self.view_of_0d else given[0][1:]
        first, args, kwargs = self.sample.arguments(given)
        if self.variant.startswith("inplace"):
            return self.info.inplace_variant(first, *args, **kwargs)
        if self.variant == "out":
            out = outs[0] if len(outs) == 1 and not self.out_is_sequence else tuple(outs)
            return self.info.op(first, *args, **kwargs, out=out)
        return self.info.op(first, *args, **kwargs)


def _steps(info, variant: str, dtype: torch.dtype, samples: int, seed: int) -> tuple[list[_Step], list[str]]:
    """The first `samples` samples eager runs, prepared for `variant`; and why others were dropped."""
    torch.manual_seed(seed)
    steps, dropped = [], []
    for sample in info.sample_inputs("cpu", dtype, requires_grad=False):
        if len(steps) == samples:
            break
        if variant.startswith("inplace") and sample.broadcasts_input:
            continue
        step = _Step(info, sample, variant)
        if not step.sample.tensors or (variant.endswith("view") and step.sample.tensors[0] is not sample.input):
            continue  # the view variants need the first argument to be a tensor
        if variant == "out" and not _prepare_out(step):
            dropped.append("out=: eager's result is not a tensor or a tuple of tensors")
            continue
        try:
            step.run(clone_preserving_aliasing(step.inputs()))
        except Exception as error:  # noqa: BLE001 - eager's own refusals drop the sample
            dropped.append(f"eager: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
            continue
        steps.append(step)
    return steps, dropped


def _prepare_out(step: _Step) -> bool:
    first, args, kwargs = step.sample.arguments(clone_preserving_aliasing(step.sample.tensors))
    try:
        result = step.info.op(first, *args, **kwargs)
    except Exception:  # noqa: BLE001 - eager rejects the sample: dropped later
        return True
    if isinstance(result, torch.Tensor):
        step.out_like = [result]
        return True
    if isinstance(result, tuple | list) and result and all(isinstance(r, torch.Tensor) for r in result):
        step.out_like, step.out_is_sequence = list(result), True
        return True
    return False


def _program(steps: list[_Step]) -> tuple[Callable[..., object], list[torch.Tensor]]:
    """One function running every step, over all their tensors, and those tensors."""
    inputs = [step.inputs() for step in steps]
    counts = [len(tensors) for tensors in inputs]

    def program(*tensors):
        results, at = [], 0
        for step, count in zip(steps, counts):
            results.append(step.run(list(tensors[at : at + count])))
            at += count
        return tuple(results)

    return program, [t for tensors in inputs for t in tensors]


# --- comparison --------------------------------------------------------------------------------------


def _differences(got: object, want: object, what: str, values: bool) -> list[str]:
    got_leaves, want_leaves = pytree.tree_leaves(got), pytree.tree_leaves(want)
    if len(got_leaves) != len(want_leaves):
        return [f"{what}: {len(got_leaves)} values where eager has {len(want_leaves)}"]
    problems = []
    for index, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        name = f"{what} {index}"
        if isinstance(w, torch.Tensor) != isinstance(g, torch.Tensor):
            problems.append(f"{name}: {type(g).__name__} where eager has {type(w).__name__}")
        elif isinstance(w, torch.Tensor):
            if w.layout != torch.strided or g.layout != torch.strided:
                g, w = g.to_dense(), w.to_dense()  # (sparse results come from ops run in eager)
            if g.shape != w.shape or g.dtype != w.dtype:
                problems.append(f"{name}: {tuple(g.shape)} {g.dtype} where eager has {tuple(w.shape)} {w.dtype}")
            elif values:
                problem = _value_difference(g, w)
                if problem:
                    problems.append(f"{name}: {problem}")
        elif values and g != w and not (isinstance(w, float) and w != w and g != g):
            problems.append(f"{name}: {g!r} where eager has {w!r}")
    return problems


def _value_difference(got: torch.Tensor, want: torch.Tensor) -> str | None:
    """assert_close with its per-dtype defaults (exact for integers and
    booleans, NaN equal to NaN); a float difference within tolerance of the
    output's largest magnitude also passes, since a compiled reduction or
    matmul adds in another order than eager's kernel (the error of an element
    that cancels is relative to the magnitudes summed)."""
    try:
        torch.testing.assert_close(got, want, equal_nan=True, check_stride=False)
        return None
    except AssertionError as error:
        message = " ".join(str(error).split())[:200]
    if not want.dtype.is_floating_point or want.numel() == 0:
        return message
    if not (torch.isfinite(want) == torch.isfinite(got)).all() or not torch.equal(want.isnan(), got.isnan()):
        return message
    finite, infinite = torch.isfinite(want), want.isinf()
    if not torch.equal(got[infinite], want[infinite]) or not finite.any():
        return message
    rtol, atol = torch.testing._comparison.default_tolerances(want)
    difference = (got[finite].double() - want[finite].double()).abs().max().item()
    return None if difference <= atol + rtol * want[finite].double().abs().max().item() else message


def _layouts(tensors: list[object]) -> list[tuple]:
    return [
        (tuple(t.shape), t.stride(), t.storage_offset()) if isinstance(t, torch.Tensor) else None for t in tensors
    ]


def _storage_map(outputs: list[object], inputs: list[torch.Tensor]) -> list[tuple]:
    """Per tensor output: which input or earlier output it shares storage with, and its layout."""
    known: dict[int, str] = {}
    for index, tensor in enumerate(inputs):
        if tensor.layout == torch.strided and tensor.numel():
            known.setdefault(tensor.untyped_storage().data_ptr(), f"input {index}")
    found = []
    for index, value in enumerate(outputs):
        if not isinstance(value, torch.Tensor) or value.layout != torch.strided or not value.numel():
            found.append(None)
            continue
        pointer = value.untyped_storage().data_ptr()
        owner = known.setdefault(pointer, f"output {index}")
        shared = owner != f"output {index}"
        found.append((owner, tuple(value.shape), value.stride(), value.storage_offset()) if shared else None)
    return found


def compare(program, compiled, inputs: list[torch.Tensor], values: bool) -> list[str]:
    eager_inputs = clone_preserving_aliasing(inputs)
    compiled_inputs = clone_preserving_aliasing(inputs)
    want = program(*eager_inputs)
    got = compiled(*compiled_inputs)
    problems = _differences(got, want, "output", values)
    problems += _differences(compiled_inputs, eager_inputs, "input after the call", values)
    for index, (g, w) in enumerate(zip(_layouts(compiled_inputs), _layouts(eager_inputs))):
        if g != w:
            problems.append(f"input {index} after the call: layout {g} where eager has {w}")
    got_map = _storage_map(pytree.tree_leaves(got), compiled_inputs)
    want_map = _storage_map(pytree.tree_leaves(want), eager_inputs)
    if not problems and got_map != want_map:
        for index, (g, w) in enumerate(zip(got_map, want_map)):
            if g != w:
                problems.append(f"output {index}: shares storage as {g} where eager {w}")
    return problems


class _SeededOps(TorchDispatchMode):
    """Records whether an op drawing random numbers ran."""

    seen = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen = self.seen or torch.Tag.nondeterministic_seeded in func.tags
        return func(*args, **(kwargs or {}))


# Ops whose results are uninitialized memory.
UNINITIALIZED = frozenset({"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted"})
# Ops whose results' order is unspecified in some samples: `topk(sorted=False)`,
# and max_unpool with repeated indices (which of the values lands is up to the kernel).
UNSPECIFIED_ORDER = frozenset(
    {"topk", *(f"nn.functional.max_unpool{n}d{grad}" for n in (1, 2, 3) for grad in ("", ".grad"))}
)


# Ops whose results' order among equal elements is unspecified unless asked
# to be stable: among booleans and bytes, ties are the rule (eager's unstable
# CPU sort orders them its own way; test_opinfo_regressions checks stable sorts).
TIES_UNORDERED = frozenset({"sort", "argsort"})
_TYING_DTYPES = (torch.bool, torch.uint8, torch.int8)


def _random(info, program, inputs: list[torch.Tensor]) -> bool:
    """Eager's values are random (an op drawing random numbers ran, the
    OpInfo creates uninitialized tensors, or orders its results as the
    kernel likes): compare metadata and aliasing only.
    Purity draws from its own generator (seeded from torch's), so its random
    values never equal eager's, also where the program seeds torch itself."""
    if info.name in UNINITIALIZED or _full_name(info) in UNSPECIFIED_ORDER:
        return True
    if info.name in TIES_UNORDERED and any(t.dtype in _TYING_DTYPES for t in inputs):
        return True
    with _SeededOps() as mode:
        program(*clone_preserving_aliasing(inputs))
    return mode.seen


# --- running a case ------------------------------------------------------------------------------------


def _seed(case: Case) -> int:
    return zlib.crc32(case.key.encode())


def run_case(case: Case, samples: int = 4) -> Result:
    started = time.perf_counter()
    result = _run(case, samples)
    result.seconds = time.perf_counter() - started
    return result


def _run(case: Case, samples: int) -> Result:
    info = op_db()[case.op]
    dtype = {name: dtype for dtype, name in DTYPE_NAMES.items()}[case.dtype]
    try:
        steps, dropped = _steps(info, case.variant, dtype, samples, _seed(case))
    except Exception as error:  # noqa: BLE001 - the OpInfo's own sample generator failed
        return Result(case, "EAGER_ERROR", reason=f"sample inputs: {type(error).__name__}: {error}")
    if not steps:
        return Result(case, "EAGER_ERROR", reason=dropped[0] if dropped else "no sample for this variant")
    program, inputs = _program(steps)
    result = Result(case, "PASS", samples=len(steps))
    if _random(info, program, inputs):
        result.compared = "metadata"
    compiled = torch_purity.compile(program, vendor_kernels=False)  # OpInfo tests IREE's code for every op
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            problems = compare(program, compiled, inputs, values=result.compared == "values")
        except PurityCompilerCrash as error:
            return _failed(result, "CRASH", error)
        except torch_purity.PurityError as error:
            if type(error).__name__.startswith("_"):  # an internal signal that escaped the driver
                return _failed(result, "CRASH", error)
            return _failed(result, "UNSUPPORTED", error)
        except Exception as error:  # noqa: BLE001 - anything else is a crash of Purity
            return _failed(result, "CRASH", error, with_traceback=True)
    for warning in caught:
        if issubclass(warning.category, torch_purity.EagerFallbackWarning):
            result.eager_ops += sorted(set(_eager_op_names(str(warning.message))))
    if problems:
        result.status, result.reason = "WRONG", "; ".join(problems[:3])
    return result


def _eager_op_names(message: str) -> list[str]:
    """The ops `segments.warn_eager_ops` lists: "...segments: OP at FILE:LINE: why; OP ...  (torch_purity..."."""
    listed = message.partition("segments: ")[2].rpartition(" (torch_purity")[0]
    return [item.split()[0].rstrip(":") for item in listed.split("; ") if item.strip()]


def _failed(result: Result, status: str, error: BaseException, with_traceback: bool = False) -> Result:
    result.status = status
    text = f"{type(error).__name__}: {error}"
    if with_traceback:
        text += " | " + " / ".join(traceback.format_exception(error)[-3:-1])
    result.reason = " ".join(text.split())[:500]
    return result
