"""The errors Purity raises: each names its stage, and the op and source line when known."""

from __future__ import annotations


class PurityError(Exception):
    """A located, user-facing failure of one pipeline stage.

    `stage` is one of "call", "trace", "import", "functionalize", "lower",
    "compile", "run", "save", "load"; `op` the ATen or Torch-dialect op name; `source` "file:line" of the
    user's code where known.
    """

    def __init__(
        self,
        stage: str,
        message: str,
        *,
        op: str | None = None,
        source: str | None = None,
    ) -> None:
        self.stage = stage
        self.message = message
        self.op = op
        self.source = source
        super().__init__(self._render())

    def _render(self) -> str:
        head = f"{self.stage} failed"
        if self.op:
            head += f" on op {self.op}"
        if self.source:
            head += f" at {self.source}"
        return f"{head}: {self.message}"


class PurityIndexError(PurityError, IndexError):
    """An index read from data was out of range at run time (eager raises
    IndexError or RuntimeError there); nothing of the caller's was written."""


class PurityCompilerCrash(PurityError):
    """A compiler stage died with a signal (contained in a child process):
    a bug of Purity or torch-mlir, never an honest "unsupported"."""


class EagerFallbackWarning(UserWarning):
    """Ops of a compiled program that Purity cannot compile run in eager
    between compiled segments (`torch_purity.compile(..., fallback="eager")`)."""
