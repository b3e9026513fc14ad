"""Purity: compile PyTorch programs that mutate and alias tensors."""

from .backend import CompiledProgram, compile
from .errors import PurityError
from .importer import import_fx
from .backend.dynamo import register as _register_dynamo_backend

_register_dynamo_backend()

__all__ = ["CompiledProgram", "PurityError", "compile", "import_fx"]
