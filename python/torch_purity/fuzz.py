"""Differential fuzzing: random aliasing programs, compiled vs eager.

A program is Python source over tensor variables: inputs (some of them views
of one storage), views of them (select, slice with step, narrow, diagonal,
view, t, transpose, permute, unsqueeze, squeeze, expand for reads, split,
chunk, unbind), in-place writes (arithmetic, fill_, zero_, copy_,
masked_fill_, index_put_ with and without accumulate, scatter_add_),
metadata mutations (t_, transpose_, unsqueeze_/squeeze_), fresh tensors, and
outputs that are views of inputs or of intermediates. Generation executes
each statement on a shadow copy, so only programs eager accepts are drawn.

About half of the programs also take `idx`, an int64 tensor of two indices
used by data-indexed reads and writes (index_put_, index_add_, index_fill_,
index_copy_, scatter_add_, indexing, index_select, gather, embedding).

Wider classes, each drawn now and then: inputs laid out non-contiguously
(transposed, every other column, channels_last), NaN and inf in the second
data set, `as_strided` views (with and without an offset, on views),
`unfold` windows with gaps, out= ops writing an existing tensor or resizing
an empty one, and a Python number read with `.item()`.

Each program runs in eager and compiled on three data sets (with `idx`, the
third holds an out-of-range, negative or huge index); a difference in
outputs, inputs after the call or output aliasing, a compiled call that
returns where eager raised (it must raise PurityIndexError with every input
untouched), a compiler crash, or any exception other than a PurityError,
fails. A program is compiled with `fallback="error"` first (Purity's own
code); one that Purity refuses (a PurityError) is compiled again with the
eager fallback, which must match eager too. Hypothesis shrinks a failure to
a minimal program, which is saved as a regression test. A PurityError with
the fallback as well is an honest "unsupported".
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import sys
import tempfile
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from .checking import clone_preserving_aliasing, compare
from .driver.compiled import compile as purity_compile
from .errors import EagerFallbackWarning, PurityCompilerCrash, PurityError, PurityIndexError
from .views import EAGER_FORMS

REGRESSION_DIRECTORY = Path(__file__).resolve().parents[2] / "test" / "e2e" / "fuzz_regressions"
CURRENT_PROGRAM_FILE = Path(tempfile.gettempdir()) / "purity-fuzz-current-program.py"
# Data sets each program runs on; with an `idx` input, data 2 holds a bad index.
DATA_SEEDS = (0, 1, 2)


@dataclass
class FuzzProgram:
    source: str  # defines `program(...)` and `make_inputs(seed)`

    def load(self) -> tuple[Callable[..., object], Callable[[int], tuple]]:
        namespace: dict[str, object] = {"torch": torch}
        exec(compile(self.source, "<fuzz-program>", "exec"), namespace)
        return namespace["program"], namespace["make_inputs"]


# ----------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------


def _view_candidates(tensor: torch.Tensor) -> list[str]:
    """View expressions (with `{v}` for the variable) valid on `tensor`: the
    view table's eager forms (views.EAGER_FORMS) that apply to its shape."""
    shape = tuple(tensor.shape)
    contiguous = tensor.is_contiguous()
    return [form.expression(shape) for form in EAGER_FORMS if form.applies_to(shape, contiguous)]


_WRITES = [
    "{v}.add_(1.5)",
    "{v}.mul_(-2)",
    "{v}.sub_({v}.sum() * 0 + 0.25)",
    "{v}.fill_(3.0)",
    "{v}.zero_()",
    "{v}.clamp_(-0.5, 0.5)",
    "{v}.masked_fill_({v} > 0, 7.0)",
    "{v}.copy_({o})",
    "{v}.add_({o})",
]
_INDEX_WRITES = [
    "{v}.index_put_((torch.tensor([0]),), torch.tensor(2.0))",
    "{v}.index_put_((torch.tensor([0, 0]),), torch.tensor([1.0, 2.0]).reshape((2,) + (1,) * ({v}.dim() - 1))"
    ".expand((2,) + tuple({v}.shape[1:])).clone(), accumulate=True)",
    "{v}.scatter_add_(0, torch.zeros((1,) + tuple({v}.shape[1:]), dtype=torch.int64), "
    "torch.ones((1,) + tuple({v}.shape[1:])))",
]
_METADATA = ["{v}.t_()", "{v}.transpose_(0, 1)", "{v}.unsqueeze_(0)"]
# Views addressing storage (as_strided: no offset starts at the view's own;
# an offset counts from the storage's first element) and windows with gaps.
_STORAGE_VIEWS = [
    "{v}.as_strided((2, 2), (1, 2))",
    "torch.as_strided({v}, (2,), (2,), {v}.storage_offset() + 1)",
    "{v}.as_strided((1, 2), (2, 1), 0)",
    "{v}.unfold(0, 1, 2)",
    "{v}.unfold(-1, 1, 2)",
]
# out= ops: into an existing tensor of the result's shape, or resizing an empty one.
_OUT_WRITES = [
    "torch.mul({o}, 2, out={v})",
    "torch.add({o}, {v}, alpha=0.5, out={v})",
    "{new} = torch.empty(0); torch.add({v}, 1.5, out={new})",
    "{new} = torch.empty(0); torch.cat([{v}, {o}], out={new})",
]
_ITEM_WRITES = [
    "{v}.add_({o}.sum().item())",
    "{v}.mul_(float({o}.max()))",
    "{v}.add_({o}.max().item() > 0.5)",
]
# The first input's layout (with a second input viewing it only where that view applies).
_LAYOUTS = {
    "contiguous": "torch.randn({rows}, {cols}, generator=g)",
    "transposed": "torch.randn({cols}, {rows}, generator=g).t()",
    "every_other_column": "torch.randn({rows}, 2 * {cols}, generator=g)[:, ::2]",
    "channels_last": "torch.randn(2, 3, {rows}, {cols}, generator=g).contiguous(memory_format=torch.channels_last)",
}
# In the second data set only: eager's NaN and inf must come out alike.
_SPECIAL_VALUES = 'if seed == 1: base0[(0,) * base0.dim()] = float("nan"); base0[(-1,) * base0.dim()] = float("inf")'
# Which second inputs view a first input of each layout.
_ALIASINGS_FOR_LAYOUT = {
    "contiguous": ["distinct", "same", "row", "slice", "transpose", "halves"],
    "transposed": ["distinct", "same", "row", "slice", "transpose"],
    "every_other_column": ["distinct", "same", "row", "slice", "transpose"],
    "channels_last": ["distinct", "same", "row", "slice"],
}
# Ops taking `idx`, an int64 input of 2 indices: in range for data 0, in
# range or negative for data 1, and out of range, negative or huge for data
# 2 (where eager raises, the compiled program must raise PurityIndexError
# with the inputs untouched).
_ROWS_LIKE = "(2,) + tuple({v}.shape[1:])"
_INDEX_COLUMN = "idx.view((2,) + (1,) * ({v}.dim() - 1)).expand(" + _ROWS_LIKE + ")"
_DATA_INDEX_WRITES = [
    "{v}.index_put_((idx,), torch.tensor(2.0))",
    "{v}.index_add_(0, idx, torch.ones(" + _ROWS_LIKE + "))",
    "{v}.index_fill_(0, idx, -1.0)",
    "{v}.index_copy_(0, idx[:1], torch.full((1,) + tuple({v}.shape[1:]), 4.0))",
    "{v}.scatter_add_(0, " + _INDEX_COLUMN + ", torch.ones(" + _ROWS_LIKE + "))",
]
_DATA_INDEX_READS = [
    "{v}[idx]",
    "{v}.index_select(0, idx)",
    "{v}.gather(0, " + _INDEX_COLUMN + ")",
    "torch.nn.functional.embedding(idx, {v})",
]
_HOSTILE_INDICES = ("rows", "-1", "-rows - 1", "1 << 40")


@st.composite
def fuzz_programs(draw) -> FuzzProgram:
    rows, cols = draw(st.integers(2, 4)), draw(st.integers(2, 4))
    input_count = draw(st.integers(1, 3))
    # Mostly contiguous, as before; the other layouts now and then.
    layout = draw(st.sampled_from(["contiguous"] * 5 + sorted(_LAYOUTS)))
    aliasing = draw(st.sampled_from(_ALIASINGS_FOR_LAYOUT[layout])) if input_count >= 2 else "distinct"
    alias_expressions = {
        "same": "base0",
        "row": "base0[1]",
        "slice": "base0[1:]",
        "transpose": "base0.t()",
        "halves": "base0[1:]",
    }
    make_lines = ["base0 = " + _LAYOUTS[layout].format(rows=rows, cols=cols)]
    inputs = ["base0[:1]" if aliasing == "halves" else "base0"]
    for index in range(1, input_count):
        if index == 1 and aliasing != "distinct":
            inputs.append(alias_expressions[aliasing])
        else:
            make_lines.append(f"base{index} = torch.randn({rows}, {cols}, generator=g)")
            inputs.append(f"base{index}")
    names = [f"x{i}" for i in range(input_count)]
    if draw(st.integers(0, 4)) == 0:
        make_lines.append(_SPECIAL_VALUES)
    if draw(st.booleans()):
        hostile = draw(st.sampled_from(_HOSTILE_INDICES)).replace("rows", str(rows))
        make_lines += [
            f"idx = torch.randint(0 if seed == 0 else -{rows}, {rows}, (2,), generator=g)",
            f"idx = torch.tensor([0, {hostile}]) if seed == 2 else idx",
        ]
        inputs.append("idx")
        names.append("idx")
    make_source = "def make_inputs(seed):\n    g = torch.Generator().manual_seed(seed)\n"
    make_source += "".join(f"    {line}\n" for line in make_lines)
    make_source += f"    return ({', '.join(inputs)},)\n"

    shadow_namespace: dict[str, object] = {"torch": torch}
    exec(make_source, shadow_namespace)
    shadow = dict(zip(names, shadow_namespace["make_inputs"](0)))
    body: list[str] = []
    for step in range(draw(st.integers(1, 7))):
        kinds = ["view", "write", "write", "index", "metadata", "fresh", "storage view", "out"] + (
            ["data index"] * 4 if "idx" in shadow else []
        )
        if draw(st.integers(0, 99)) == 0:
            kinds = ["item"]
        kind = draw(st.sampled_from(kinds))
        target = draw(st.sampled_from(sorted(shadow)))
        other = draw(st.sampled_from(sorted(shadow)))
        statement = _statement(draw, kind, step, shadow, target, other)
        if statement is None:
            continue
        trial = dict(shadow)
        try:
            exec(statement, {"torch": torch}, trial)
        except Exception:
            continue  # eager rejects it (overlap, shapes, indices): not drawn
        shadow = trial
        body.append(statement)
    returned = draw(st.lists(st.sampled_from(sorted(shadow)), min_size=1, max_size=3, unique=True))
    program_source = f"def program({', '.join(names)}):\n"
    program_source += "".join(f"    {line}\n" for line in body)
    program_source += f"    return ({', '.join(returned)},)\n"
    return FuzzProgram(make_source + "\n\n" + program_source)


def _statement(draw, kind: str, step: int, shadow: dict[str, object], target: str, other: str) -> str | None:
    """One statement of `kind` on `target` (and `other`); None where it does not apply."""
    tensor = shadow[target]
    if kind == "view":
        return f"v{step} = " + draw(st.sampled_from(_view_candidates(tensor))).format(v=target)
    if kind == "write":
        return draw(st.sampled_from(_WRITES)).format(v=target, o=f"{other}.sum()")
    if kind == "index":
        return None if tensor.dim() == 0 else draw(st.sampled_from(_INDEX_WRITES)).format(v=target)
    if kind == "data index":
        if tensor.dim() == 0 or target == "idx":
            return None
        if draw(st.booleans()):
            return draw(st.sampled_from(_DATA_INDEX_WRITES)).format(v=target)
        return f"g{step} = " + draw(st.sampled_from(_DATA_INDEX_READS)).format(v=target)
    if kind == "storage view":
        return f"v{step} = " + draw(st.sampled_from(_STORAGE_VIEWS)).format(v=target)
    if kind == "out":
        statement = draw(st.sampled_from(_OUT_WRITES)).format(v=target, o=other, new=f"r{step}")
        if "empty(0)" not in statement and shadow[other].shape != tensor.shape:
            return None  # (eager would resize a written input: not drawn)
        return statement
    if kind == "item":
        return draw(st.sampled_from(_ITEM_WRITES)).format(v=target, o=other)
    if kind == "metadata":
        choice = draw(st.sampled_from(_METADATA))
        return None if tensor.dim() != 2 and "unsqueeze" not in choice else choice.format(v=target)
    return f"f{step} = {target} * 2 + {other}.sum()"


# ----------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------


class FuzzFailure(AssertionError):
    pass


@dataclass
class FuzzCounts:
    programs: int = 0
    passed: int = 0
    via_fallback: int = 0  # of `passed`: refused by Purity's own code, matched with the eager fallback
    unsupported: int = 0
    unsupported_reasons: dict[str, int] = field(default_factory=dict)
    failed: int = 0  # counted with `keep_going` only (otherwise the run stops at the first)


def check_program(program: FuzzProgram, counts: FuzzCounts | None = None) -> None:
    """Raises FuzzFailure on any difference from eager or any crash."""
    counts = counts or FuzzCounts()
    counts.programs += 1
    # If the process dies (a crash in native code), the culprit is here.
    CURRENT_PROGRAM_FILE.write_text(program.source)
    if os.environ.get("PURITY_FUZZ_CRASH_AT") == str(counts.programs):
        os.kill(os.getpid(), signal.SIGSEGV)  # fault injection: the test of `purity fuzz`'s containment
    function, make_inputs = program.load()
    try:
        try:
            _check_data_sets(purity_compile(function, fallback="error"), function, make_inputs)  # Purity's own code
        except PurityCompilerCrash:
            raise
        except PurityError as refused:
            if isinstance(refused, PurityIndexError):
                raise
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", EagerFallbackWarning)
                _check_data_sets(purity_compile(function), function, make_inputs, eager_errors=True)
            counts.via_fallback += 1
    except PurityCompilerCrash as error:
        raise FuzzFailure(f"CRASH: {error}") from error
    except PurityError as error:
        counts.unsupported += 1
        reason = f"{error.stage}: {error.message.splitlines()[0][:80]}"
        counts.unsupported_reasons[reason] = counts.unsupported_reasons.get(reason, 0) + 1
        return
    except FuzzFailure:
        raise
    except Exception as error:
        raise FuzzFailure(f"crashed: {type(error).__name__}: {error}") from error
    counts.passed += 1


def _check_data_sets(
    compiled: Callable[..., object], function: Callable[..., object], make_inputs, eager_errors: bool = False
) -> None:
    """With `eager_errors` (the eager fallback), an op run in eager may raise eager's own error."""
    for data_seed in DATA_SEEDS:
        inputs = make_inputs(data_seed)
        if _eager_rejects(function, inputs):
            _check_rejected_like_eager(compiled, inputs, data_seed, eager_errors)
            continue
        report = compare(function, compiled, inputs)
        if not report.ok:
            raise FuzzFailure(f"differs from eager on data {data_seed}: " + "; ".join(report.problems))


def _eager_rejects(function: Callable[..., object], inputs: tuple) -> bool:
    try:
        function(*clone_preserving_aliasing(inputs))
    except (IndexError, RuntimeError):
        return True
    return False


def _check_rejected_like_eager(
    compiled: Callable[..., object], inputs: tuple, data_seed: int, eager_errors: bool = False
) -> None:
    """Eager raised (an index out of range): the compiled call must raise
    PurityIndexError (or, with `eager_errors`, eager's own error from an op
    run in eager) and leave every input as it was."""
    before = clone_preserving_aliasing(inputs)
    try:
        compiled(*inputs)
    except PurityIndexError:
        pass
    except (IndexError, RuntimeError):
        if not eager_errors:
            raise
    else:
        raise FuzzFailure(f"eager raised on data {data_seed}, the compiled program returned")
    for index, (got, want) in enumerate(zip(inputs, before)):
        if isinstance(want, torch.Tensor) and not _same_values(got, want):
            raise FuzzFailure(f"data {data_seed}: the failed call changed input {index}")


def _same_values(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Equal elements, NaN where `want` has NaN (the second data set holds NaN)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    both_nan = got.isnan() & want.isnan() if want.is_floating_point() else torch.zeros_like(want, dtype=torch.bool)
    return bool(((got == want) | both_nan).all())


def save_regression(
    program: FuzzProgram, reason: str, directory: Path = REGRESSION_DIRECTORY, shrunk: bool = True
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(program.source.encode()).hexdigest()[:12]
    path = directory / f"case_{digest}.py"
    kind = "A minimal program" if shrunk else "A program (as found, not shrunk)"
    header = f"# {kind} found by `purity fuzz`; test/e2e/test_fuzz.py runs it.\n"
    header += "".join(f"# {line}\n" for line in textwrap.wrap(reason, 100))
    path.write_text(header + "import torch\n\n\n" + program.source)
    return path


@dataclass
class FuzzResult:
    counts: FuzzCounts
    failures: list[str] = field(default_factory=list)
    saved: list[Path] = field(default_factory=list)

    @property
    def failure(self) -> str | None:
        return "\n".join(self.failures) if self.failures else None


def run_fuzz(
    examples: int,
    random_seed: int,
    save: bool = True,
    progress_every: int = 0,
    counts_path: Path | None = None,
    regression_directory: Path = REGRESSION_DIRECTORY,
    keep_going: bool = False,
) -> FuzzResult:
    """`examples` programs from `random_seed`; with `progress_every`, the counts
    so far go to stderr every that many programs (a long run shows it lives);
    with `counts_path`, they are written there (JSON) after every program, so
    a parent process knows how far a run that crashed got.

    By default the run stops at the first failure, which Hypothesis shrinks.
    With `keep_going`, every failing program is reported (to stderr, at once)
    and saved as found, unshrunk, and the run goes on to `examples` programs:
    a long run then counts every failure instead of the first."""
    counts = FuzzCounts()
    failing: list[tuple[FuzzProgram, str]] = []
    result = FuzzResult(counts)

    @seed(random_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(fuzz_programs())
    def property_holds(program: FuzzProgram) -> None:
        try:
            check_program(program, counts)
        except FuzzFailure as failure:
            if not keep_going:
                failing.append((program, str(failure)))
                raise
            counts.failed += 1
            result.failures.append(str(failure))
            print(f"FAILED (program {counts.programs}): {failure}", file=sys.stderr, flush=True)
            if save:
                result.saved.append(save_regression(program, str(failure), regression_directory, shrunk=False))
        finally:
            if counts_path is not None:
                counts_path.write_text(json.dumps(dataclasses.asdict(counts)))
            if progress_every and counts.programs % progress_every == 0:
                print(
                    f"... programs {counts.programs}, passed {counts.passed}, unsupported {counts.unsupported}, "
                    f"failed {counts.failed}",
                    file=sys.stderr,
                    flush=True,
                )

    try:
        property_holds()
    except FuzzFailure:
        distinct = 1
    except BaseExceptionGroup as group:  # Hypothesis found several distinct failures
        distinct = len(group.exceptions)
    else:
        return result
    # Hypothesis replays each shrunk failure last.
    for program, reason in failing[-distinct:]:
        result.failures.append(reason)
        if save:
            result.saved.append(save_regression(program, reason, regression_directory))
    return result
