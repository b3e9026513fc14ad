"""Catalogues of Torch-dialect ops by their aliasing behaviour.

Shared by the importer (what may be emitted) and the passes (how each op
aliases, and how to undo a view when a write goes through it).
"""

from __future__ import annotations

import torch

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


# Value-semantic ops whose result is boolean whatever their inputs (their
# in-place forms store the booleans in the written tensor's dtype).
BOOLEAN_RESULT_OPS = frozenset(
    {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf"}
)

# Value-semantic Torch ops computing each result element from the operand
# elements at the same index (when the shapes agree): an input they read can be
# overwritten in place by their result. Kept small: what optimizer updates and
# activations use.
POINTWISE_OPS = frozenset(
    "torch.aten." + name
    for name in (
        "add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "rsub.Scalar", "mul.Tensor", "mul.Scalar",
        "div.Tensor", "div.Scalar", "addcmul", "addcdiv", "lerp.Scalar", "lerp.Tensor", "neg", "abs", "sqrt",
        "rsqrt", "reciprocal", "exp", "log", "tanh", "sigmoid", "relu", "sign", "pow.Tensor_Scalar",
        "clamp", "clamp_min", "clamp_max", "maximum", "minimum", "where.self", "where.ScalarOther", "where.ScalarSelf",
        "isnan", "gt.Scalar", "gt.Tensor", "lt.Scalar", "lt.Tensor", "logical_or", "logical_not", "ne.Tensor",
        "bitwise_or.Tensor", "bitwise_and.Tensor",
    )
)

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


def aten_schema(name: str):
    """The ATen schema of a Torch-dialect op name (`torch.aten.add_.Tensor`), or None."""
    parts = name.split(".")[1:]
    try:
        packet = getattr(getattr(torch.ops, parts[0]), parts[1])
        return getattr(packet, parts[2] if len(parts) > 2 else "default")._schema
    except (AttributeError, IndexError, RuntimeError):
        return None


_FUNCTIONAL_VARIANTS: dict[str, str | None] = {}


def functional_variant(in_place_name: str, context) -> str | None:
    """The registered value-semantic op computing what the in-place op writes:
    same ATen name without the trailing `_`, same argument types
    (`bernoulli_.float` -> `bernoulli.p`), the same overload name preferred."""
    if in_place_name in _FUNCTIONAL_VARIANTS:
        return _FUNCTIONAL_VARIANTS[in_place_name]
    found = None
    schema = aten_schema(in_place_name)
    if schema is not None:
        wanted = [str(argument.type) for argument in schema.arguments]
        namespace, packet_name = in_place_name.split(".")[1:3]
        functional_packet = packet_name.rstrip("_")
        packet = getattr(getattr(torch.ops, namespace), functional_packet, None)
        overloads = packet.overloads() if packet is not None else []
        same_overload = schema.overload_name or "default"
        for overload in sorted(overloads, key=lambda o: o != same_overload):
            candidate = f"torch.{namespace}.{functional_packet}" + ("" if overload == "default" else f".{overload}")
            candidate_schema = getattr(packet, overload)._schema
            if [str(a.type) for a in candidate_schema.arguments] == wanted and context.is_registered_operation(candidate):
                found = candidate
                break
    _FUNCTIONAL_VARIANTS[in_place_name] = found
    return found
