"""Catalogues of Torch-dialect ops by their aliasing behaviour.

Shared by the importer (what may be emitted) and the passes (how each op
aliases). What each view is and how a write through it is undone lives in
one table, views.py; the view catalogues here are derived from it.
"""

from __future__ import annotations

import torch

from .views import VIEWS, Inverse, Writable

# The view catalogues, derived from the one table of views (views.py); kept
# here under their old names for the importer and the passes that ask only
# "is this a view".

# Single-result views: the result shares storage with operand 0.
VIEW_OPS = frozenset(name for name, view in VIEWS.items() if not view.multi_output)

# Views a write may not go through (eager raises as well, or would write
# overlapping memory); unfold only when its windows are apart.
UNWRITABLE_VIEWS = frozenset(name for name, view in VIEWS.items() if view.writable is not Writable.ALWAYS)

# Views whose inverse is "reshape back to the base's sizes".
RESHAPE_LIKE_VIEWS = frozenset(name for name, view in VIEWS.items() if view.inverse is Inverse.RESHAPE_BACK)

# Multi-output views: a `!torch.list<tensor>` whose elements alias operand 0.
MULTI_OUTPUT_VIEWS = frozenset(name for name, view in VIEWS.items() if view.multi_output)

# Metadata mutations (ATen name -> the view it applies to the tensor in place).
# The dialect registers only unsqueeze_; the importer emits the others as
# `torch.operator "torch.aten.t_"`, torch-mlir's form for unregistered ATen ops.
METADATA_MUTATIONS = {form: name for name, view in VIEWS.items() for form in view.in_place_forms}


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
        "add.Tensor",
        "add.Scalar",
        "sub.Tensor",
        "sub.Scalar",
        "rsub.Scalar",
        "mul.Tensor",
        "mul.Scalar",
        "div.Tensor",
        "div.Scalar",
        "addcmul",
        "addcdiv",
        "lerp.Scalar",
        "lerp.Tensor",
        "neg",
        "abs",
        "sqrt",
        "rsqrt",
        "reciprocal",
        "exp",
        "log",
        "tanh",
        "sigmoid",
        "relu",
        "sign",
        "pow.Tensor_Scalar",
        "clamp",
        "clamp_min",
        "clamp_max",
        "maximum",
        "minimum",
        "where.self",
        "where.ScalarOther",
        "where.ScalarSelf",
        "masked_fill.Scalar",
        "masked_fill.Tensor",
        "isnan",
        "gt.Scalar",
        "gt.Tensor",
        "lt.Scalar",
        "lt.Tensor",
        "logical_or",
        "logical_not",
        "ne.Tensor",
        "bitwise_or.Tensor",
        "bitwise_and.Tensor",
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
            if [str(a.type) for a in candidate_schema.arguments] == wanted and context.is_registered_operation(
                candidate
            ):
                found = candidate
                break
    _FUNCTIONAL_VARIANTS[in_place_name] = found
    return found


# --- ATen overloads and their out= forms -------------------------------------


def out_variant_functional(target: torch._ops.OpOverload) -> torch._ops.OpOverload | None:
    """For an out= overload (`aten.add.out`), the overload computing the same
    value without `out` (`aten.add.Tensor`); None for other ops."""
    schema = target._schema
    outs = [a for a in schema.arguments if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write]
    if len(outs) != 1 or len(schema.returns) != 1:
        return None
    wanted = [(a.name, str(a.type)) for a in schema.arguments if a is not outs[0]]
    for overload_name in target.overloadpacket.overloads():
        candidate = getattr(target.overloadpacket, overload_name)
        arguments = candidate._schema.arguments
        if candidate is target or [(a.name, str(a.type)) for a in arguments[: len(wanted)]] != wanted:
            continue
        # A factory's functional form also takes dtype/layout/device/pin_memory
        # (`arange.start_out` -> `arange.start_step`); the import passes `out`'s dtype.
        if all(a.kwarg_only and a.name in _FACTORY_OPTIONS for a in arguments[len(wanted) :]):
            return candidate
    return None


_FACTORY_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory"})


def is_out_variant(target: torch._ops.OpOverload) -> bool:
    return any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in target._schema.arguments)
