"""Purity: compile PyTorch programs that mutate and alias tensors."""

from .errors import PurityError
from .importer import import_fx

__all__ = ["PurityError", "import_fx"]
