"""Passes that exist because the code runs on IREE 3.13: its ABI (tied
arguments, result storage) and workarounds for its behaviours. Each module
names the IREE behaviour it works around (grep `IREE-WORKAROUND`) and how to
tell when it can go. Registered in `torch_purity.registry`; lit tests in
`test/Passes/IREE/`.
"""

from __future__ import annotations

# pass name -> (module in this package, class)
PASS_MODULES: dict[str, tuple[str, str]] = {
    "purity-chain-same-region-writes": ("chain_same_region_writes", "ChainSameRegionWrites"),
    "purity-elide-input-view-results": ("elide_input_view_results", "ElideInputViewResults"),
    "purity-seed-from-argument": ("seed_from_argument", "SeedFromArgument"),
    "purity-tensor-while-condition": ("tensor_while_condition", "TensorWhileCondition"),
    "purity-tie-written-inputs": ("tie_written_inputs", "TieWrittenInputs"),
    "purity-isolate-results": ("isolate_results", "IsolateResults"),
    "purity-materialize-uniform-reduction-inputs": (
        "materialize_uniform_reduction_inputs",
        "MaterializeUniformReductionInputs",
    ),
    "purity-merge-sibling-reductions": ("merge_sibling_reductions", "MergeSiblingReductions"),
    "purity-separate-sort-destinations": ("separate_sort_destinations", "SeparateSortDestinations"),
    "purity-split-independent-parts": ("split_independent_parts", "SplitIndependentParts"),
    "purity-split-scalar-dispatches": ("split_scalar_dispatches", "SplitScalarDispatches"),
    "purity-copy-overlapping-slice-sources": ("copy_overlapping_slice_sources", "CopyOverlappingSliceSources"),
    "purity-dispatch-argument-writes": ("dispatch_argument_writes", "DispatchArgumentWrites"),
    "purity-store-results-in-arguments": ("store_results_in_arguments", "StoreResultsInArguments"),
    "purity-read-before-tied-writes": ("read_before_tied_writes", "ReadBeforeTiedWrites"),
    "purity-mark-unwritten-arguments": ("mark_unwritten_arguments", "MarkUnwrittenArguments"),
}
