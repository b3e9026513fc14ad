"""Purity: compile PyTorch programs that mutate and alias tensors."""

from .backend import CompiledProgram, compile
from .errors import PurityError
from .importer import import_fx

__all__ = ["CompiledProgram", "PurityError", "compile", "import_fx"]
