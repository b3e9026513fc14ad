"""Target-neutral Torch-level passes: mutation and aliasing removed, indices
checked, written arguments exposed as results. One pass per module.

The registry is lazy: a pass module is imported only when its pass is used.
All of Purity's passes (these and IREE's, `torch_purity.iree.passes`) are
found by name in `torch_purity.registry`.
"""

from __future__ import annotations

from .base import ModulePass, PassFailed, PassOptionError

# pass name -> (module in this package, class)
PASS_MODULES: dict[str, tuple[str, str]] = {
    "purity-synthesize-bases": ("synthesize_bases", "SynthesizeBases"),
    "purity-functionalize": ("functionalize", "Functionalize"),
    "purity-fold-region-rewrites": ("fold_region_rewrites", "FoldRegionRewrites"),
    "purity-decompose-strided": ("decompose_strided", "DecomposeStrided"),
    "purity-check-indices": ("check_indices", "CheckIndices"),
    "purity-expose-input-writes": ("expose_input_writes", "ExposeInputWrites"),
    "purity-partition-joint": ("partition_joint", "PartitionJoint"),
    "purity-runtime-loop-entry": ("runtime_loop_entry", "RuntimeLoopEntry"),
    "purity-materialize-empty-results": ("materialize_empty_results", "MaterializeEmptyResults"),
    "purity-refuse-unlowered-ops": ("refuse_unlowered_ops", "RefuseUnloweredOps"),
    "purity-verify-contract": ("verify_contract", "VerifyContract"),
}

__all__ = ["PASS_MODULES", "ModulePass", "PassFailed", "PassOptionError"]
