"""Purity's MLIR passes: one pass per module, found by name in `PASSES`.

The registry is lazy: a pass module is imported only when its pass is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from .base import ModulePass, PassFailed, PassOptionError

_PASS_MODULES: dict[str, tuple[str, str]] = {
    "purity-synthesize-bases": ("synthesize_bases", "SynthesizeBases"),
    "purity-functionalize": ("functionalize", "Functionalize"),
    "purity-decompose-strided": ("decompose_strided", "DecomposeStrided"),
    "purity-check-indices": ("check_indices", "CheckIndices"),
    "purity-expose-input-writes": ("expose_input_writes", "ExposeInputWrites"),
    "purity-isolate-results": ("isolate_results", "IsolateResults"),
    "purity-mark-unwritten-arguments": ("mark_unwritten_arguments", "MarkUnwrittenArguments"),
    "purity-copy-overlapping-slice-sources": ("copy_overlapping_slice_sources", "CopyOverlappingSliceSources"),
    "purity-dispatch-argument-writes": ("dispatch_argument_writes", "DispatchArgumentWrites"),
    "purity-store-results-in-arguments": ("store_results_in_arguments", "StoreResultsInArguments"),
}


def _loader(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(importlib.import_module(f"{__name__}.{module}"), cls)


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _loader(module, cls) for name, (module, cls) in _PASS_MODULES.items()
}


def get_pass(name: str) -> type[ModulePass]:
    return PASSES[name]()


__all__ = ["PASSES", "ModulePass", "PassFailed", "PassOptionError", "get_pass"]
