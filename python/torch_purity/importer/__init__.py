"""FX graph -> mutable Torch IR (stage 2 of docs/architecture.md)."""

from .fx_import import import_fx, import_graph, new_context, renamed_inputs, trace_to_aten

__all__ = ["import_fx", "import_graph", "new_context", "renamed_inputs", "trace_to_aten"]
