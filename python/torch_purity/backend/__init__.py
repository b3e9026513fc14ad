"""Functional Torch IR -> linalg -> IREE, and the runtime that applies every effect to the caller's tensors.

`compiled` (tracing, lowering, compiling) needs torch-mlir and IREE's
compiler; `runtime` and `saved` need torch and IREE's runtime only, so this
package imports `compiled` on first use.
"""

from .saved import SavedProgram, load

__all__ = ["CompiledProgram", "SavedProgram", "compile", "load"]


def __getattr__(name: str):
    if name in ("CompiledProgram", "compile"):
        from . import compiled

        return getattr(compiled, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
