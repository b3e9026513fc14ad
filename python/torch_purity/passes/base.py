"""The shape every Purity pass has: a frozen dataclass with a name and typed options.

A pass runs as a real MLIR pass: `add_to(pm)` appends it to a
`PassManager` next to C++ passes, so `--mlir-print-ir-after-all`, timing and
the verifier see it like any other pass. Passes are anchored on
`builtin.module` because Python-defined passes cannot be cloned for nested
anchors.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar, get_type_hints

from torch_mlir.ir import Location, MLIRError, Operation
from torch_mlir.passmanager import PassManager


class PassFailed(Exception):
    """Raised inside a pass after it has emitted its diagnostics."""


class LocatedPassError(Exception):
    """A pass cannot handle something at `location`: reported there as an error."""

    def __init__(self, location: Location, message: str) -> None:
        super().__init__(message)
        self.location = location


class PassOptionError(ValueError):
    pass


@dataclass(frozen=True)
class ModulePass:
    """Base class. Subclasses set `name`, declare options as typed fields, and
    implement `apply`. Their docstring is their documentation."""

    name: ClassVar[str]

    def apply(self, module: Operation) -> None:
        raise NotImplementedError

    def for_each(self, items: Iterable[object], rewrite: Callable[[object], None]) -> None:
        """Runs `rewrite` on every item; each LocatedPassError becomes an error
        diagnostic at its location, and the pass fails after all were tried."""
        failed = False
        for item in items:
            try:
                rewrite(item)
            except LocatedPassError as error:
                error.location.emit_error(f"{self.name}: {error}")
                failed = True
        if failed:
            raise PassFailed()

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    @classmethod
    def from_options(cls, options: dict[str, str]) -> ModulePass:
        hints = get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, object] = {}
        for key, text in options.items():
            attribute = key.replace("-", "_")
            if attribute not in fields:
                known = ", ".join(f.name.replace("_", "-") for f in fields.values()) or "none"
                raise PassOptionError(f"pass '{cls.name}' has no option '{key}' (options: {known})")
            values[attribute] = _parse_option(hints[attribute], text, key)
        return cls(**values)

    def add_to(self, pm: PassManager) -> None:
        verify_each = os.environ.get("PURITY_VERIFY_EACH_PASS") == "1"

        def run(operation: Operation, external_pass) -> None:
            try:
                self.apply(operation)
                if verify_each:
                    _verify_module(self.name, operation)
            except PassFailed:
                external_pass.signal_pass_failure()

        pm.add(run, name=type(self).__name__, argument=self.name, description=self.summary())


def _verify_module(name: str, operation: Operation) -> None:
    """PURITY_VERIFY_EACH_PASS=1: the module must verify right after pass
    `name`, and an error names that pass (a debug mode for pass authors; the
    pass manager's verifier reports the broken op without naming the pass)."""
    try:
        operation.verify()
    except MLIRError as error:
        operation.location.emit_error(f"{name} left invalid IR: " + " ".join(str(error).split()))
        raise PassFailed() from None


def _parse_option(kind: object, text: str, key: str) -> object:
    try:
        if kind is bool:
            if text in ("", "true", "1"):
                return True
            if text in ("false", "0"):
                return False
            raise ValueError(text)
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        return text
    except ValueError:
        raise PassOptionError(f"option '{key}' expects {getattr(kind, '__name__', kind)}, got '{text}'") from None
