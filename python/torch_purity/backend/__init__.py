"""Functional Torch IR -> linalg -> IREE, and the runtime that applies every effect to the caller's tensors."""

from .compiled import CompiledProgram, compile

__all__ = ["CompiledProgram", "compile"]
