"""TORCH-MLIR-WORKAROUND(unsigned-bytes), torch-mlir 20261001: its linalg
lowerings read a uint8 element as a signed i8 wherever they convert or
compare it implicitly, so 200 is -56: `x / 255`, `x * 2.5`, `x + 0.5`,
`x.sum()`, `x.sort()`, `x.topk(k)`, `x.clamp(max=250)`, `x.abs()` gave wrong
answers (explicit `x.float()` / `x.long()` were right); and an int scalar
with an 8-bit tensor crashed the linalg stage (`x * 3`, `x - 3`, `x.max()`).

Before import, each pointwise op (PyTorch's `pointwise` tag) and each
reduction or sort below that reads a uint8 tensor reads an int32 copy of it
instead (exact), and a result whose dtype then differs from eager's (the
traced `val`) is converted back: eager's uint8 arithmetic wraps modulo 256,
which the low 8 bits of the int32 result keep; divisions, remainders,
comparisons, max/min and sorts of the exact values are equal. Where eager
computes in uint8 (every tensor operand uint8 or bool, no float operand and
no float result), it first converts an int scalar to uint8 (`x > -1` is
all False, `x // -3` divides by 253): such a scalar out of 0..255 is wrapped
the same way. An in-place op becomes its functional form and a `copy_` into
its destination, and so does an out= op whose `out` has the result's shape
(one that resizes `out` is left as it is). A uint8 or int8 shift runs on
int32 with its amount capped at 8 (eager shifts everything out; LLVM leaves
an i8 shift by 8 or more undefined: an OpInfo int8 `bitwise_right_shift`
by 9 gave 0 where eager gives -1).

Can go when test_opinfo_regressions.py's unsigned_bytes programs match eager
with `widened_unsigned_bytes` returning its graph unchanged."""

from __future__ import annotations

import operator

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes
from torch.fx.passes.shape_prop import _extract_tensor_metadata

from ..errors import PurityError
from ..ops import is_out_variant, out_variant_functional
from .graph_copies import rewritten_copy
from .locations import op_display_name, source_of

_aten = torch.ops.aten

_REDUCTIONS = frozenset(
    {
        _aten.sum.default,
        _aten.sum.dim_IntList,
        _aten.prod.default,
        _aten.prod.dim_int,
        _aten.max.default,
        _aten.min.default,
        _aten.max.dim,
        _aten.min.dim,
        _aten.amax.default,
        _aten.amin.default,
        _aten.argmax.default,
        _aten.argmin.default,
        _aten.cumsum.default,
        _aten.cumprod.default,
        _aten.sort.default,
        _aten.sort.stable,
        _aten.topk.default,
        # `any`/`all` of uint8 return uint8 in eager: 1, where torch-mlir returned the element (5)
        _aten.any.default,
        _aten.any.dim,
        _aten.any.dims,
        _aten.all.default,
        _aten.all.dim,
        _aten.all.dims,
        # further reductions of uint8 found read as signed
        _aten.mean.default,
        _aten.mean.dim,
        _aten.trace.default,
        _aten.scatter_reduce.two,
        _aten.scatter_add.default,
        _aten.index_add.default,
    }
)
# Elementwise ops PyTorch does not tag `pointwise`.
_UNTAGGED_ELEMENTWISE = frozenset(
    {
        _aten.floor_divide.default,
        _aten.floor_divide.Scalar,
        _aten.masked_fill.Tensor,
        _aten.rsub.Tensor,
    }
)
# Pointwise ops that move values without reading them as numbers.
_COPIES = frozenset({_aten.clone.default})


def widened_unsigned_bytes(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with the rewrite above, on a copy (the caller keeps its graph,
    which the eager fallback may run); `gm` itself when nothing reads uint8."""
    return rewritten_copy(gm, _reads_unsigned_bytes, _widen_graph)


def _widen_graph(module: fx.GraphModule, fake_mode) -> None:
    for node in list(module.graph.nodes):
        if _reads_unsigned_bytes(node):
            _widen(module.graph, node, fake_mode)
    module.recompile()


def _reads_unsigned_bytes(node: fx.Node) -> bool:
    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload) or target in _COPIES:
        return False
    if is_out_variant(target):
        functional = _out_functional(target)
        if functional is None or not _rewritten(functional) or not _same_shape_out(node):
            return False
    elif _is_in_place(target):
        functional = _functional(target)
        if functional is None or not _rewritten(functional):
            return False
    elif not _rewritten(target):
        return False
    read = {_dtype(a) for a in pytree.tree_leaves((node.args, node.kwargs))}
    return torch.uint8 in read or (torch.int8 in read and _is_shift(target))


def _is_shift(target: torch._ops.OpOverload) -> bool:
    return "shift" in target._schema.name


def _rewritten(target: torch._ops.OpOverload) -> bool:
    return torch.Tag.pointwise in target.tags or target in _UNTAGGED_ELEMENTWISE or target in _REDUCTIONS


def _computation_dtype(node: fx.Node, results: tuple) -> torch.dtype | None:
    """The integer dtype eager computes a pointwise op in (its operands
    promoted: a 0-d int64 tensor beside a uint8 one is converted to uint8,
    a 0-d uint8 beside an int8 one to int8), or None where it computes in
    floating point or the op is not elementwise (operands keep their types)."""
    if _functional_form(node.target) in _REDUCTIONS:
        return None
    if any(isinstance(r, torch.Tensor) and r.dtype.is_floating_point for r in results):
        return None
    operands = [
        a.meta["val"] if isinstance(a, fx.Node) else a
        for a in pytree.tree_leaves((node.args, node.kwargs))
        if _dtype(a) is not None or isinstance(a, (int, float, bool)) and not isinstance(a, fx.Node)
    ]
    computed, _ = elementwise_dtypes(*operands, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
    return None if computed.is_floating_point or computed.is_complex else computed


def _widen(graph: fx.Graph, node: fx.Node, fake_mode) -> None:
    results = node.meta["val"] if isinstance(node.meta["val"], (tuple, list)) else (node.meta["val"],)
    computed = _computation_dtype(node, results)
    # an 8-bit shift by 8 or more is 0 (or -1) in eager; an i8 shift by 8 or more is undefined in LLVM:
    # shifted as int32 by at most 8
    shift = computed in (torch.uint8, torch.int8) and _is_shift(node.target)
    read_wide = (torch.uint8, torch.int8) if shift else (torch.uint8,)
    integer_results = [r.dtype for r in results if isinstance(r, torch.Tensor) and not r.dtype.is_floating_point]
    if computed is not None and computed not in read_wide:
        wide = computed  # uint8 with int8/int16/...: every operand converted to it, as eager does
    else:
        wide = next((d for d in integer_results if d not in (*read_wide, torch.bool)), torch.int32)
    out = node.kwargs.get("out") if is_out_variant(node.target) else None
    in_place = _is_in_place(node.target) or out is not None
    destination = out if out is not None else node.args[0] if in_place else None

    def widened(value: object) -> object:
        dtype = _dtype(value)
        if dtype is None or dtype == torch.bool:
            if (
                computed == torch.uint8
                and isinstance(value, fx.Node)
                and isinstance(value.meta.get("val"), torch.SymInt)
            ):
                raise PurityError(
                    "import",
                    "an int computed at run time used with a uint8 tensor (eager converts it to uint8 first, "
                    "which torch-mlir cannot): convert the tensor with `.to(torch.int32)` first",
                    op=op_display_name(node),
                    source=source_of(node),
                )
            if computed == torch.uint8 and type(value) is int and not 0 <= value <= 255:
                value %= 256  # eager converts the scalar to uint8 first (`x > -1` is all False)
            if shift and value is not node.args[0] and type(value) is int:
                return min(value, 8)
            return value
        if computed is not None and dtype not in (torch.uint8, computed):
            # a 0-d tensor eager converts to the computation dtype (to uint8: its low 8 bits)
            value = _inserted(graph, node, _aten._to_copy.default, (value,), {"dtype": computed}, fake_mode)
            dtype = computed
        if dtype not in read_wide:
            return value
        widened_value = _inserted(graph, node, _aten._to_copy.default, (value,), {"dtype": wide}, fake_mode)
        if shift and value is not node.args[0]:
            return _inserted(graph, node, _aten.clamp_max.default, (widened_value, 8), {}, fake_mode)
        return widened_value

    with graph.inserting_before(node):
        args = tuple(widened(a) for a in node.args)
        kwargs = {k: widened(v) for k, v in node.kwargs.items() if k != "out" or out is None}
    if kwargs.get("dtype") == torch.uint8:  # `u.sum(dtype=torch.uint8)`: summed as int32, then wrapped
        kwargs["dtype"] = wide
    target = _functional_form(node.target)
    with fake_mode:
        value = target(*_values(args), **_values(kwargs))
    node.target, node.args, node.kwargs = target, args, kwargs
    wanted = node.meta["val"]
    _set_value(node, value)
    if in_place:
        with graph.inserting_after(node):
            written = _inserted(graph, node, _aten.copy_.default, (destination, node), {}, fake_mode)
        _set_value(written, wanted)
        node.replace_all_uses_with(written, delete_user_cb=lambda user: user is not written)
    elif isinstance(value, torch.Tensor):
        _convert_uses(graph, node, wanted.dtype, fake_mode)
    else:
        for user in list(node.users):
            index = user.args[1] if user.target is operator.getitem else None
            if index is not None and isinstance(value[index], torch.Tensor):
                _set_value(user, value[index])
                _convert_uses(graph, user, wanted[index].dtype, fake_mode)


def _set_value(node: fx.Node, value: object) -> None:
    """The node's traced value, and the tensor metadata torch-mlir's importer
    reads of some (`.item()` of it)."""
    node.meta["val"] = value
    if isinstance(value, torch.Tensor):
        node.meta["tensor_meta"] = _extract_tensor_metadata(value)
    else:
        node.meta.pop("tensor_meta", None)


def _convert_uses(graph: fx.Graph, node: fx.Node, dtype: torch.dtype, fake_mode) -> None:
    """Converts `node`'s value to `dtype` for its users, where it differs."""
    if node.meta["val"].dtype == dtype:
        return
    with graph.inserting_after(node):
        converted = _inserted(graph, node, _aten._to_copy.default, (node,), {"dtype": dtype}, fake_mode)
    node.replace_all_uses_with(converted, delete_user_cb=lambda user: user is not converted)


def _inserted(graph: fx.Graph, beside: fx.Node, target, args: tuple, kwargs: dict, fake_mode) -> fx.Node:
    """A new node (at the graph's insertion point) with its traced value and
    `beside`'s source location."""
    new = graph.call_function(target, args, kwargs)
    with fake_mode:
        _set_value(new, target(*_values(args), **_values(kwargs)))
    new.meta.update({k: v for k, v in beside.meta.items() if k not in ("val", "tensor_meta")})
    return new


def _values(structure):
    return pytree.tree_map(lambda a: a.meta["val"] if isinstance(a, fx.Node) else a, structure)


def _dtype(value: object) -> torch.dtype | None:
    found = value.meta.get("val") if isinstance(value, fx.Node) else None
    return found.dtype if isinstance(found, torch.Tensor) else None


def _functional_form(target: torch._ops.OpOverload) -> torch._ops.OpOverload:
    """The op itself, or the functional form of an out= or in-place op."""
    if is_out_variant(target):
        return _out_functional(target)
    return _functional(target) if _is_in_place(target) else target


def _out_functional(target: torch._ops.OpOverload) -> torch._ops.OpOverload | None:
    """`any.default` for `any.all_out`: one `out` argument, no factory options."""
    functional = out_variant_functional(target)
    outs = [a.name for a in target._schema.arguments if a.kwarg_only and a.alias_info and a.alias_info.is_write]
    if functional is None or outs != ["out"] or len(functional._schema.arguments) != len(target._schema.arguments) - 1:
        return None
    return functional


def _same_shape_out(node: fx.Node) -> bool:
    """An out= whose tensor already has the result's shape (one eager would
    resize is left to the importer's out= handling)."""
    out, result = node.kwargs.get("out"), node.meta.get("val")
    out_value = out.meta.get("val") if isinstance(out, fx.Node) else None
    return isinstance(out_value, torch.Tensor) and isinstance(result, torch.Tensor) and out_value.shape == result.shape


def _is_in_place(target: torch._ops.OpOverload) -> bool:
    arguments = target._schema.arguments
    return bool(arguments) and arguments[0].alias_info is not None and arguments[0].alias_info.is_write


def _functional(target: torch._ops.OpOverload) -> torch._ops.OpOverload | None:
    """`add.Tensor` for `add_.Tensor` (the same arguments: not `pow.Scalar`,
    whose base is a number, for `pow_.Scalar`)."""
    packet = getattr(torch.ops.aten, target._schema.name.split("::")[1].rstrip("_"), None)
    functional = getattr(packet, target._overloadname, None) if packet is not None else None
    if functional is None or [(a.name, str(a.type)) for a in functional._schema.arguments] != [
        (a.name, str(a.type)) for a in target._schema.arguments
    ]:
        return None
    return functional
