"""Catalogues of Torch-dialect ops by their aliasing behaviour.

Shared by the importer (what may be emitted) and the passes (how each op
aliases, and how to undo a view when a write goes through it).
"""

from __future__ import annotations

# Single-result views: the result shares storage with operand 0.
VIEW_OPS = frozenset(
    "torch.aten." + name
    for name in (
        "select.int", "slice.Tensor", "narrow", "narrow.Tensor", "diagonal", "as_strided",
        "view", "reshape", "_unsafe_view", "_reshape_alias", "flatten.using_ints", "unflatten.int",
        "permute", "transpose.int", "t", "numpy_T", "movedim.int", "unsqueeze", "squeeze",
        "squeeze.dim", "alias", "detach", "expand", "expand_as", "broadcast_to", "unfold", "view_as",
    )
) | {"torch.prims.squeeze", "torch.prims.view_of"}

# Views a write may not go through (eager raises as well, or would write overlapping memory).
UNWRITABLE_VIEWS = frozenset(
    "torch.aten." + name for name in ("expand", "expand_as", "broadcast_to", "unfold")
)

# Views whose inverse is "reshape back to the base's sizes".
RESHAPE_LIKE_VIEWS = frozenset(
    "torch.aten." + name
    for name in (
        "view", "reshape", "_unsafe_view", "_reshape_alias", "flatten.using_ints", "unflatten.int",
        "unsqueeze", "squeeze", "squeeze.dim", "view_as",
    )
) | {"torch.prims.squeeze"}

# Multi-output views: a `!torch.list<tensor>` whose elements alias operand 0.
MULTI_OUTPUT_VIEWS = frozenset(
    "torch.aten." + name for name in ("split.Tensor", "split_with_sizes", "chunk", "unbind.int", "tensor_split.sections")
)

# Metadata mutations (ATen name -> the view it applies to the tensor in place).
# The dialect registers only unsqueeze_; the importer emits the others as
# `torch.operator "torch.aten.t_"`, torch-mlir's form for unregistered ATen ops.
METADATA_MUTATIONS = {
    "torch.aten.t_": "torch.aten.t",
    "torch.aten.transpose_": "torch.aten.transpose.int",
    "torch.aten.swapdims_": "torch.aten.transpose.int",
    "torch.aten.swapaxes_": "torch.aten.transpose.int",
    "torch.aten.unsqueeze_": "torch.aten.unsqueeze",
    "torch.aten.squeeze_": "torch.aten.squeeze",
    "torch.aten.squeeze_.dim": "torch.aten.squeeze.dim",
    "torch.aten.as_strided_": "torch.aten.as_strided",
    "torch.aten.detach_": "torch.aten.detach",
}


def is_in_place(name: str) -> bool:
    """`torch.aten.add_.Tensor`, `torch.aten.zero_`: a data write into operand 0."""
    parts = name.split(".")
    return (
        len(parts) >= 3
        and parts[:2] == ["torch", "aten"]
        and parts[2].endswith("_")
        and not parts[2].startswith("_")
        and ".".join(parts[:3]) not in METADATA_MUTATIONS
        and name not in METADATA_MUTATIONS
    ) or name == "torch.aten._index_put_impl_"


def functional_candidates(name: str) -> list[str]:
    """Value-semantic ops that compute what the in-place `name` writes, best first."""
    parts = name.split(".")
    base = ".".join(parts[:2] + [parts[2].rstrip("_")])
    overload = ".".join(parts[3:])
    candidates = [f"{base}.{overload}"] if overload else []
    candidates.append(base)
    return candidates
