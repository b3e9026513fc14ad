"""purity-materialize-empty-results: an ATen op whose result has no element becomes `aten.empty` of its type.

Runs in the linalg stage, before torch-mlir's conversions to linalg. A value
tensor with a zero-sized dimension holds nothing to compute, but several of
torch-mlir's lowerings divide by dimension sizes and crash the process on
one (measured with torch-mlir of this release: SIGFPE in
`convert-torch-to-linalg` for `aten.view` of a (0, 2) tensor returned as an
output view, and for `linalg.multi_dot` over an empty matrix). The importer
already turns such results of traced ops into `aten.empty`
(`fx_import._empty_results_as_new_tensors`); ops the backend pipeline
makes (a `reshape` or `flatten` decomposed to `aten.view`) are only seen
here.

The pass replaces every `torch.aten.*` op with exactly one result, a
`!torch.vtensor` of static shape with a zero-sized dimension, by
`torch.aten.empty.memory_format` of that shape and element type, at the
op's location. Aliasing of outputs is not affected: at this stage every
tensor is a value and output views are described by function attributes.
Ops with regions, several results, or a dynamic or non-empty result are
left alone, and so is a module without such ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import InsertionPoint, Operation

from ..ir_helpers.queries import walk
from ..ir_helpers.torch_values import int_constant, int_list_constant, none_constant, static_sizes
from ..ir_helpers.types import TORCH_SCALAR_TYPE_CODES, element_type_text
from .base import ModulePass

_EMPTY = "torch.aten.empty.memory_format"


@dataclass(frozen=True)
class MaterializeEmptyResults(ModulePass):
    """Replaces each ATen op whose value-tensor result has no element by `aten.empty` of its type."""

    name = "purity-materialize-empty-results"

    def apply(self, module: Operation) -> None:
        for op in [op for op in walk(module) if _has_empty_result(op.operation)]:
            _replace_by_empty(op.operation)


def _has_empty_result(op: Operation) -> bool:
    if not op.name.startswith("torch.aten.") or op.name == _EMPTY or len(op.results) != 1 or len(op.regions):
        return False
    result_type = op.results[0].type
    sizes = static_sizes(result_type)
    return (
        str(result_type).startswith("!torch.vtensor<")
        and sizes is not None
        and 0 in sizes
        and element_type_text(result_type) in TORCH_SCALAR_TYPE_CODES
    )


def _replace_by_empty(op: Operation) -> None:
    result = op.results[0]
    with InsertionPoint(op), op.location:
        none = none_constant()
        dtype = int_constant(TORCH_SCALAR_TYPE_CODES[element_type_text(result.type)])
        empty = Operation.create(
            _EMPTY,
            results=[result.type],
            operands=[int_list_constant(static_sizes(result.type)), dtype, none, none, none, none],
        )
    result.replace_all_uses_with(empty.results[0])
    op.erase()
