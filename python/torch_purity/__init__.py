"""Purity: compile PyTorch programs that mutate and alias tensors.

`compile` and `import_fx` need torch-mlir and IREE's compiler and are
imported on first use; `load` (saved programs) needs IREE's runtime only.
"""

from .dynamo_backend import register as _register_dynamo_backend
from .errors import EagerFallbackWarning, PurityError, PurityIndexError
from .iree.saved import SavedProgram, load

_register_dynamo_backend()

__all__ = [
    "CompiledProgram",
    "EagerFallbackWarning",
    "PurityError",
    "PurityIndexError",
    "SavedProgram",
    "compile",
    "import_fx",
    "load",
]


def __getattr__(name: str):
    if name in ("CompiledProgram", "compile"):
        from .driver import compiled

        return getattr(compiled, name)
    if name == "import_fx":
        from .importer import import_fx

        return import_fx
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
