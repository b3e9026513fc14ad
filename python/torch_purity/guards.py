"""Guards a compiled entry checks on each call, beyond its input signature.

Needs torch only: saved programs check them where no compiler is installed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

_INTERPRETER_GLOBALS: dict | None = None
STORAGE_OFFSET = -1  # in place of a dim: a symbol read from a tensor's storage offset


@dataclass(frozen=True)
class SymbolGuard:
    """What a trace assumed about its runtime values (int arguments, dynamic
    dims), as a Python expression over `L['t0']`, `L['t1']`, ... (the
    guarded arguments in order: ints, and tensors with dynamic dims, whose
    sizes it reads as `L['t1'].size()[0]`); None: nothing."""

    expression: str | None

    @classmethod
    def equal_to(cls, values: Sequence[object], dims: Sequence[Sequence[int]]) -> SymbolGuard:
        """The guard of values specialized as they are: each int, and each
        tensor's sizes along its `dims`."""
        terms = []
        for index, (value, tensor_dims) in enumerate(zip(values, dims)):
            if type(value) is int:
                terms.append(f"L['t{index}'] == {value}")
            else:
                terms += [f"L['t{index}'].size()[{d}] == {value.shape[d]}" for d in tensor_dims]
        return cls(" and ".join(terms) or None)

    @cached_property
    def _check(self):
        """The expression as a function of the list of guarded values,
        compiled once (it runs on every call of an entry with runtime ints)."""
        if self.expression is None:
            return None
        body = re.sub(r"(?<![\w.])L\['t(\d+)'\]", r"t[\1]", self.expression)
        return eval(compile(f"lambda t: {body}", "<purity guard>", "eval"), _interpreter_globals())

    def readable(self) -> str:
        """The expression with the k-th guarded input named `ik`."""
        return re.sub(r"L\['t(\d+)'\]", r"i\1", self.expression or "True").replace(".size()", ".shape")

    def holds(self, values: Sequence[object]) -> bool:
        """Whether the guarded arguments' values (ints, tensors) satisfy it."""
        check = self._check
        return True if check is None else bool(check(values))


def _interpreter_globals() -> dict:
    # The names ShapeEnv's printed guards use (Eq, Mod, floor division ...).
    global _INTERPRETER_GLOBALS
    if _INTERPRETER_GLOBALS is None:
        from torch.fx.experimental.symbolic_shapes import SYMPY_INTERP

        _INTERPRETER_GLOBALS = dict(SYMPY_INTERP)
    return _INTERPRETER_GLOBALS


@dataclass(frozen=True)
class SymbolicShapes:
    """Shapes of results, and layouts of output views, that depend on
    runtime values (an int argument, a dynamic dim), computed per call.
    `results` maps a result to the Python text of its shape tuple; `views`
    maps a program output that views an argument to (that argument, the text
    of its (sizes, strides, storage offset)); both over the symbols in
    `symbols`, each read from an argument of the compiled function (its
    value, for an int; its size along `dim`, for a tensor)."""

    # name -> (argument, dim; None: the int argument's value; STORAGE_OFFSET: the tensor's)
    symbols: dict[str, tuple[int, int | None]]
    results: dict[int, str]
    views: dict[int, tuple[int, str]] = field(default_factory=dict)

    @cached_property
    def _result_code(self):
        return _dict_code({result: text for result, text in self.results.items()})

    @cached_property
    def _view_code(self):
        return _dict_code({output: text for output, (_, text) in self.views.items()})

    def _values(self, arguments: Sequence[object]) -> dict[str, int]:
        values = {}
        for name, (argument, dim) in self.symbols.items():
            if dim is None:
                values[name] = arguments[argument]
            elif dim == STORAGE_OFFSET:
                values[name] = arguments[argument].storage_offset()
            else:
                values[name] = arguments[argument].shape[dim]
        return values

    def evaluate(self, arguments: Sequence[object]) -> dict[int, tuple[int, ...]]:
        """Result -> its shape for this call."""
        return eval(self._result_code, _interpreter_globals(), self._values(arguments))

    def view_layouts(self, arguments: Sequence[object]) -> dict[int, tuple[tuple[int, ...], tuple[int, ...], int]]:
        """Output -> (sizes, strides, storage offset) of its view of its argument, for this call."""
        return eval(self._view_code, _interpreter_globals(), self._values(arguments))

    def to_json(self) -> dict[str, object]:
        return {
            "symbols": {n: list(s) for n, s in self.symbols.items()},
            "results": self.results,
            "views": [[output, argument, text] for output, (argument, text) in self.views.items()],
        }

    @classmethod
    def from_json(cls, data: dict) -> SymbolicShapes:
        return cls(
            {n: (a, d) for n, (a, d) in data["symbols"].items()},
            {int(r): s for r, s in data["results"].items()},
            {output: (argument, text) for output, argument, text in data["views"]},
        )


def _dict_code(texts: dict[int, str]):
    return compile("{" + ", ".join(f"{key}: {text}" for key, text in texts.items()) + "}", "<purity shapes>", "eval")
