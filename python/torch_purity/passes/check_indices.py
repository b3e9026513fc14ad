"""purity-check-indices: bounds checks for indices that come from data, computed by the compiled program.

torch-mlir lowers `index_select`, `gather`, `scatter*`, `embedding`,
`index.Tensor` and `index_put` to loads and stores at the index read from a
tensor, without a check: an out-of-range token id or cache position reads or
writes outside the tensor. Eager PyTorch raises instead. After
purity-functionalize, this pass makes each such op safe and reports bad
indices, for each index operand that is not a constant known to be in range:

    clamped = clamp(index, LOW, SIZE - 1)        // LOW = -SIZE where negative
    valid   = clamped == index (flattened)       // indices wrap (index,
    index'  = clamped, or for wrapping ops       // index_put, take), else 0
              where(clamped < 0, clamped + SIZE, clamped)

so the op only ever touches elements of its tensor, and `valid` says, per
index, whether eager would have accepted it (a flag per element, so a check
adds no reduction: the clamp and the comparison fuse into one dispatch). The
flags of all checked ops are concatenated into one extra result,
`tensor<[N] x i1>`, appended after the program's own results with
`purity.index_checks` = [{op, location, count}, ...] (`contract.IndexCheck`:
the flags of each check, in order); the runtime reads it after the call and raises
`PurityIndexError` naming the first failing op and the user's line.

Nothing of the caller's may change when a check fails, including inputs IREE
writes in place. Every written argument's final value is therefore guarded by
`ok = all(flags)`: a row or slice written into the argument's original value
(a `select_scatter`/`slice_scatter` chain) writes
`where(ok, source, the region it replaces)`, whose read of that region is
marked `purity.guard_read` (purity-expose-input-writes still ties such an
argument: the read feeds the write of the same elements); an accumulating
write (`index_put(accumulate=True)` from `index_add_`, `scatter_add`) adds
`where(ok, source, -0.0)` (0 for integers: x + -0.0 is x for every float,
-0.0 included), so it stays a write of those elements and its argument can be
tied too; any other final value becomes `where(ok, value, original)`, which
keeps a pointwise update pointwise. Where the program itself reads a value
of such a chain of region writes (a static cache's row, then attention over
the cache), the chain is not rebuilt from the original (two writes on one
base: IREE would copy the argument whole every call): each region is read
just before its write, and after every check written back over the final
value, last write first, as `where(ok, what is there now, what was there
before)`; an output that is the final value becomes the guarded value.
When a check fails the compiled code thus writes back what each argument
held, and the runtime neither copies back written inputs nor applies
metadata mutations.

`embedding_bag`'s offsets are checked as eager checks them (the first is 0,
none decreases, none is past the number of indices); where they are not,
the op gets all-zero offsets. Index ranges follow eager PyTorch: `index.Tensor`/`index_put` (advanced
indexing, `index_fill_`, `take`) accept -SIZE..SIZE-1; `index_select`,
`gather`, `scatter`, `scatter_add`, `scatter_reduce`, `embedding` and
`embedding_bag` accept 0..SIZE-1. (`index_copy_` and `index_add_` reach this
pass as `index_put`; the importer's decompositions map their negative
indices out of range, as eager rejects them.) Boolean masks are not indices
and are not checked. A dimension of size 0 indexed by a non-empty index is
reported at the op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_mlir.dialects.torch import (
    AtenAddScalarOp,
    AtenAllOp,
    AtenCatOp,
    AtenClampOp,
    AtenEqScalarOp,
    AtenEqTensorOp,
    AtenGeTensorOp,
    AtenLogicalAndOp,
    AtenLtScalarOp,
    AtenSelectIntOp,
    AtenSliceTensorOp,
    AtenViewOp,
    AtenWhereScalarOtherOp,
    AtenWhereSelfOp,
    ConstantFloatOp,
    CopyToValueTensorOp,
    PrimListConstructOp,
)
from torch_mlir.ir import (
    Attribute,
    DenseElementsAttr,
    FloatAttr,
    InsertionPoint,
    Location,
    Operation,
    Type,
    UnitAttr,
    Value,
)

from .. import contract
from ..contract import IndexCheck
from ..contract.ir import index_checks_attr
from ..ir_helpers.functions import function_ops, set_result_attrs, set_results
from ..ir_helpers.queries import aten_op_of_location, source_location, value_type, walk
from ..ir_helpers.torch_values import NotConstant, constant_of, int_constant, int_list_constant, static_sizes
from ..ir_helpers.types import element_type_text, with_element_type_text
from .base import LocatedPassError, ModulePass


@dataclass(frozen=True)
class _IndexRule:
    source: int  # operand holding the indexed tensor
    index: int  # operand holding the index tensor (or, for lists, the list of them)
    dim: int | None  # operand holding the dimension indexed; None: the list position (advanced indexing)
    wraps: bool  # whether negative indices count from the end
    fixed_dim: int = 0  # the dimension where `dim` is None and the index is not a list


_RULES: dict[str, _IndexRule] = {
    "torch.aten.index_select": _IndexRule(0, 2, 1, False),
    "torch.aten.gather": _IndexRule(0, 2, 1, False),
    "torch.aten.scatter.src": _IndexRule(0, 2, 1, False),
    "torch.aten.scatter.value": _IndexRule(0, 2, 1, False),
    "torch.aten.scatter.reduce": _IndexRule(0, 2, 1, False),
    "torch.aten.scatter.value_reduce": _IndexRule(0, 2, 1, False),
    "torch.aten.scatter_add": _IndexRule(0, 2, 1, False),
    "torch.aten.scatter_reduce.two": _IndexRule(0, 2, 1, False),
    "torch.aten.embedding": _IndexRule(0, 1, None, False),
    "torch.aten.embedding_bag.padding_idx": _IndexRule(0, 1, None, False),
    "torch.aten._embedding_bag": _IndexRule(0, 1, None, False),
    "torch.aten.index.Tensor": _IndexRule(0, 1, None, True),
    "torch.aten.index.Tensor_hacked_twin": _IndexRule(0, 1, None, True),
    "torch.aten.index_put": _IndexRule(0, 1, None, True),
    "torch.aten.index_put.hacked_twin": _IndexRule(0, 1, None, True),
    "torch.aten._index_put_impl": _IndexRule(0, 1, None, True),
}

_SCATTERS = ("torch.aten.select_scatter", "torch.aten.slice_scatter")
# The read of the region each scatter replaces: the same operands after `src`.
_REGION_READS = {
    "torch.aten.select_scatter": "torch.aten.select.int",
    "torch.aten.slice_scatter": "torch.aten.slice.Tensor",
}
_NOT_INDICES = ("i1", "ui8")  # boolean masks


@dataclass(frozen=True)
class CheckIndices(ModulePass):
    """Clamps indices read from data into range, reports bad ones in an extra result, guards argument writes on them."""

    name = "purity-check-indices"

    def apply(self, module: Operation) -> None:
        self.for_each(function_ops(module), _check_function)


class _CannotCheck(LocatedPassError):
    pass


def _check_function(function: Operation) -> None:
    block = function.regions[0].blocks[0]
    operations = [o.operation for o in block.operations]
    flags, checks = _check_block(operations)
    total = sum(check.count for check in checks)
    if not flags:
        return
    operations = [o.operation for o in block.operations]  # control-flow ops were rebuilt
    return_op = operations[-1]
    with InsertionPoint(return_op), return_op.location:
        flag_vector = _concatenated(flags, total)
        overwrites = [op for op in operations if op.name == "torch.overwrite.tensor.contents"]
        ok = AtenAllOp(_type("!torch.vtensor<[],i1>"), flag_vector).result if overwrites else None
        for overwrite in overwrites:
            final = overwrite.operands[0]
            guarded = _guarded(final, _original_value(function, overwrite.operands[1]), ok)
            overwrite.move_before(return_op)
            overwrite.operands[0] = guarded
            # An output that is the written value: the guarded one (the same
            # when every check passes; outputs are dropped when one fails).
            for position, operand in enumerate(return_op.operands):
                if operand == final:
                    return_op.operands[position] = guarded
    results = list(return_op.operands) + [flag_vector]
    set_results(function, return_op, results)
    set_result_attrs(function, len(results) - 1, {contract.INDEX_CHECKS: index_checks_attr(checks)})


def _check_block(operations: list[Operation]) -> tuple[list[Value], list[IndexCheck]]:
    """Checks the index ops among `operations` (and inside their regions);
    returns the flags (1-d, valid per index) and what each check covers."""
    flags: list[Value] = []
    checks: list[IndexCheck] = []
    for op in operations:
        rule = _RULES.get(op.name)
        if rule is not None:
            for valid in _check_op(op, rule):
                count = static_sizes(valid.type)[0]
                if count:
                    flags.append(valid)
                    checks.append(_index_check(op, count))
            continue
        nested = next((o.operation for o in walk(op) if o.operation.name in _RULES), None) if op.regions else None
        if nested is not None:
            flags.append(_check_regions(op, nested))
            checks.append(_index_check(nested, 1))
    return flags, checks


def _index_check(op: Operation, count: int) -> IndexCheck:
    aten_op = aten_op_of_location(op.location) or op.name.removeprefix("torch.")
    return IndexCheck(aten_op, source_location(op.location) or "", count)


def _check_regions(op: Operation, nested: Operation) -> Value:
    """Checks the index ops inside a control-flow op's regions. Their flags
    cannot leave a region as they are (a branch may not run, a loop body runs
    many times), so each region reduces them to one flag that the op gains
    as an extra result: a branch yields its own (the other branch true), a
    loop carries the conjunction over its iterations (true when it never
    runs). Returns that flag as a 1-element vector, one check for the region
    op, named after its first index op."""
    if op.name not in ("torch.prim.If", "torch.prim.Loop"):
        raise _CannotCheck(nested.location, f"'{nested.name}' inside '{op.name}' cannot be bounds-checked")
    with op.location:
        flag_type = _type("!torch.vtensor<[],i1>")
    ends = []
    for region in op.regions:
        block = region.blocks[0]
        inner = [o.operation for o in block.operations]
        flags, _ = _check_block(inner)
        with InsertionPoint(inner[-1]), inner[-1].location:
            ends.append((block, inner[-1], _all_of(flags, flag_type)))
    with InsertionPoint(op), op.location:
        result_types = [*[r.type for r in op.results], flag_type]
        operands = list(op.operands)
        if op.name == "torch.prim.Loop":
            operands.append(_true(flag_type))
        rebuilt = Operation.create(op.name, results=result_types, operands=operands, regions=len(op.regions))
    for (block, terminator, ok), region in zip(ends, rebuilt.regions, strict=True):
        if op.name == "torch.prim.Loop":
            carried = block.add_argument(flag_type, op.location)
            with InsertionPoint(terminator), terminator.location:
                ok = AtenLogicalAndOp(flag_type, carried, ok).result
        with InsertionPoint(terminator), terminator.location:
            Operation.create(terminator.name, results=[], operands=[*terminator.operands, ok])
        terminator.erase()
        block.append_to(region)
    for old, new in zip(op.results, rebuilt.results):
        old.replace_all_uses_with(new)
    op.erase()
    with InsertionPoint.after(rebuilt), rebuilt.location:
        return AtenViewOp(_type("!torch.vtensor<[1],i1>"), rebuilt.results[-1], int_list_constant([1])).result


def _all_of(flags: list[Value], flag_type: Type) -> Value:
    if not flags:
        return _true(flag_type)
    return AtenAllOp(flag_type, _concatenated(flags, sum(static_sizes(f.type)[0] for f in flags))).result


def _concatenated(flags: list[Value], total: int) -> Value:
    """The 1-d flags as one vector of `total` flags."""
    if len(flags) == 1:
        return flags[0]
    return AtenCatOp(
        _type(f"!torch.vtensor<[{total}],i1>"), _list_of(flags, "!torch.list<vtensor>"), int_constant(0)
    ).result


def _true(flag_type: Type) -> Value:
    return Operation.create(
        "torch.vtensor.literal",
        results=[flag_type],
        attributes={"value": Attribute.parse("dense<true> : tensor<i1>", flag_type.context)},
    ).result


def _check_op(op: Operation, rule: _IndexRule) -> list[Value]:
    """Replaces the op's index operands by checked ones; returns their valid flags."""
    sizes = static_sizes(op.operands[rule.source].type)
    if sizes is None:
        raise _CannotCheck(op.location, f"'{op.name}' on a tensor of dynamic shape cannot be bounds-checked")
    index_operand = op.operands[rule.index]
    if rule.dim is None and str(index_operand.type).startswith("!torch.list"):
        return _check_index_list(op, rule, sizes)
    if rule.dim is None:
        dim = rule.fixed_dim
    else:
        try:
            dim = constant_of(op.operands[rule.dim])
        except NotConstant:
            raise _CannotCheck(
                op.location, f"'{op.name}' with a non-constant dimension cannot be bounds-checked"
            ) from None
        dim = dim + len(sizes) if dim < 0 else dim
    sizes = sizes or [1]  # a 0-d tensor is indexed like a 1-d one of one element
    with InsertionPoint(op), op.location:
        checked = _checked_index(op, index_operand, sizes[dim], rule.wraps)
    if checked is None:
        return []
    safe, valid = checked
    op.operands[rule.index] = safe
    if op.name in _EMBEDDING_BAGS:
        return [valid, *_check_bag_offsets(op)]
    return [valid]


_EMBEDDING_BAGS = ("torch.aten.embedding_bag.padding_idx", "torch.aten._embedding_bag")
_OFFSETS = 2


def _check_bag_offsets(op: Operation) -> list[Value]:
    """Bag offsets (1-d indices) as eager wants them: starting at 0, not
    decreasing, none past the number of indices. Where they are not, every
    offset becomes 0 (empty bags and one bag of all indices: in range)."""
    offsets = op.operands[_OFFSETS]
    offsets_type = str(offsets.type)
    lengths = static_sizes(offsets.type) if offsets_type.startswith("!torch.vtensor") else None
    index_sizes = static_sizes(op.operands[1].type)
    if not lengths or index_sizes is None:
        return []
    count = int(np.prod(index_sizes))
    with InsertionPoint(op), op.location:
        bool_type, scalar_bool = _type(with_element_type_text(offsets_type, "i1")), _type("!torch.vtensor<[],i1>")
        clamped = AtenClampOp(offsets.type, offsets, int_constant(0), int_constant(count)).result
        checks = [AtenAllOp(scalar_bool, AtenEqTensorOp(bool_type, clamped, offsets).result).result]
        first = AtenSelectIntOp(_type(_with_shape(offsets_type, "")), offsets, int_constant(0), int_constant(0)).result
        checks.append(AtenEqScalarOp(scalar_bool, first, int_constant(0)).result)
        if lengths[0] > 1:
            shorter = _with_shape(offsets_type, str(lengths[0] - 1))
            later = AtenSliceTensorOp(
                _type(shorter), offsets, int_constant(0), int_constant(1), int_constant(lengths[0]), int_constant(1)
            ).result
            earlier = AtenSliceTensorOp(
                _type(shorter), offsets, int_constant(0), int_constant(0), int_constant(lengths[0] - 1), int_constant(1)
            ).result
            ordered = AtenGeTensorOp(_type(with_element_type_text(shorter, "i1")), later, earlier).result
            checks.append(AtenAllOp(scalar_bool, ordered).result)
        valid = checks[0]
        for check in checks[1:]:
            valid = AtenLogicalAndOp(scalar_bool, valid, check).result
        op.operands[_OFFSETS] = AtenWhereScalarOtherOp(offsets.type, valid, offsets, int_constant(0)).result
        return [_flattened(valid)]


def _with_shape(tensor_type: str, dims: str) -> str:
    head, _, rest = tensor_type.partition("<[")
    return f"{head}<[{dims}]{rest[rest.index(']') + 1 :]}"


def _check_index_list(op: Operation, rule: _IndexRule, sizes: list[int]) -> list[Value]:
    """Advanced indexing: list element d indexes dimension d (None skips it)."""
    owner = op.operands[rule.index].owner
    construct = getattr(owner, "operation", owner)  # an OpView, an Operation or a Block
    if getattr(construct, "name", None) != "torch.prim.ListConstruct":
        raise _CannotCheck(
            op.location, f"'{op.name}' with indices not built by a list construct cannot be bounds-checked"
        )
    elements = list(construct.operands)
    flags: list[Value] = []
    changed = False
    with InsertionPoint(op), op.location:
        for position, element in enumerate(elements):
            if str(element.type) == "!torch.none" or position >= len(sizes):
                continue
            checked = _checked_index(op, element, sizes[position], rule.wraps)
            if checked is None:
                continue
            elements[position], valid = checked
            flags.append(valid)
            changed = True
        if changed:
            # A list of its own: another op may read the original list.
            op.operands[rule.index] = _list_of(elements, str(construct.results[0].type))
    return flags


def _checked_index(op: Operation, index: Value, size: int, wraps: bool) -> tuple[Value, Value] | None:
    """(in-range index, valid flag) for `index` into a dimension of `size`;
    None where no check is needed (a boolean mask, or constants in range)."""
    index_type = str(index.type)
    element = element_type_text(index_type)
    if element in _NOT_INDICES or not index_type.startswith("!torch.vtensor"):
        return None
    low = -size if wraps else 0
    if _constant_within(index, low, size):
        return None
    if size == 0:
        raise _CannotCheck(op.location, f"'{op.name}' indexes a dimension of size 0 with a non-empty index")
    flag_type = _type(with_element_type_text(index_type, "i1"))
    clamped = AtenClampOp(index.type, index, int_constant(low), int_constant(size - 1)).result
    same = AtenEqTensorOp(flag_type, clamped, index).result
    valid = _flattened(same)
    if not wraps:
        return clamped, valid
    negative = AtenLtScalarOp(flag_type, clamped, int_constant(0)).result
    shifted = AtenAddScalarOp(index.type, clamped, int_constant(size), int_constant(1)).result
    return AtenWhereSelfOp(index.type, negative, shifted, clamped).result, valid


def _flattened(flags: Value) -> Value:
    """One flag per element, 1-d: no reduction (an extra dispatch) per check."""
    sizes = static_sizes(flags.type)
    if sizes is not None and len(sizes) == 1:
        return flags
    count = int(np.prod(sizes)) if sizes else 1
    return AtenViewOp(_type(_with_shape(str(flags.type), str(count))), flags, int_list_constant([count])).result


def _constant_within(index: Value, low: int, size: int) -> bool:
    owner = index.owner
    if not hasattr(owner, "name") or owner.name != "torch.vtensor.literal":
        return False
    try:
        values = np.array(DenseElementsAttr(owner.attributes["value"]))
    except (TypeError, ValueError):
        return False
    return values.size == 0 or bool(((values >= low) & (values < size)).all())


def _guarded(final: Value, original: Value, ok: Value) -> Value:
    """`final` when `ok`, else the argument's original value, built at the
    insertion point (after every check). A chain of region writes into the
    original (`select_scatter`, `slice_scatter`, a non-accumulating
    `index_put` at indices of static shape) is rebuilt with each written
    region guarded, so it stays a chain of region writes; anything else is
    selected whole."""
    chain: list[tuple[Operation, _RegionWrite]] = []
    bottom = final
    while bottom != original and (found := _region_write(bottom)) is not None:
        chain.append((bottom.owner, found))
        bottom = bottom.owner.operands[0]
    if chain and bottom == original and all(found.read for _, found in chain) and _read_by_program(chain):
        return _restored_on_top(final, chain, ok)
    current = bottom if bottom == original else AtenWhereSelfOp(bottom.type, ok, bottom, original).result
    for write, found in reversed(chain):
        operands = list(write.operands)
        # The region read and the rebuilt write follow the op found (select, slice or index_put): the op name
        # is data, so generic creation.
        operands[0] = current
        if found.read is None:  # an accumulating write: a failed check adds the identity
            operands[found.source] = AtenWhereScalarOtherOp(
                found.region_type, ok, operands[found.source], _additive_identity(found.region_type)
            ).result
        else:
            operands[found.source] = AtenWhereSelfOp(
                found.region_type, ok, operands[found.source], _region_read(found, current, write)
            ).result
        current = _rewritten(write, operands)
    return current


def _rewritten(write: Operation, operands: list[Value]) -> Value:
    """`write` again (the op name is data: generic creation), on `operands`, at the insertion point."""
    return Operation.create(write.name, results=[write.results[0].type], operands=operands, loc=write.location).result


def _read_by_program(chain: list[tuple[Operation, _RegionWrite]]) -> bool:
    """Whether a value of the chain of region writes (top first) is read
    other than by the next write of the chain, the argument's overwrite or,
    for the final value, the return (`_check_function` returns the guarded
    value there)."""
    for position, (write, _) in enumerate(chain):
        for use in write.results[0].uses:
            owner = use.owner.operation
            if position == 0 and owner.name in ("torch.overwrite.tensor.contents", "func.return"):
                continue
            if position > 0 and owner == chain[position - 1][0].operation:
                continue
            return True
    return False


def _restored_on_top(final: Value, chain: list[tuple[Operation, _RegionWrite]], ok: Value) -> Value:
    """`final` when `ok`, else the argument's original value, for a chain of
    region writes (top first) whose values the program reads (a static-cache
    row written at a tensor position, then attention over the cache): each
    write's region is read just before the write (the value it replaces) and,
    after every check, written back over `final` in reverse order, as
    `where(ok, what is there now, what was there before)`. Rebuilding the
    chain from the original instead would make the original the base of two
    writes, the program's and the guarded one, and IREE would copy the whole
    tensor for one of them every call; here the argument's value goes through
    one chain of writes, each in place."""
    replaced = []
    for write, found in chain:
        with InsertionPoint(write), write.location:
            replaced.append(_region_read(found, write.operands[0], write))
    current = final
    for (write, found), before in zip(chain, replaced, strict=True):
        operands = list(write.operands)
        operands[0] = current
        now = _region_read(found, current, write)
        operands[found.source] = AtenWhereSelfOp(found.region_type, ok, now, before).result
        current = _rewritten(write, operands)
    return current


def _region_read(found: _RegionWrite, base: Value, write: Operation) -> Value:
    """The region `write` replaces, read from `base`, marked as a guard read."""
    region = Operation.create(
        found.read, results=[found.region_type], operands=[base, *(write.operands[i] for i in found.position)]
    )
    region.attributes[contract.GUARD_READ] = UnitAttr.get()
    return region.result


@dataclass(frozen=True)
class _RegionWrite:
    read: str | None  # the op reading the region the write replaces; None where the write adds to it
    source: int  # the operand holding what is written there
    region_type: Type
    position: tuple[int, ...]  # the operands saying where the region is (the read's after its base)


_INDEX_PUTS = ("torch.aten.index_put", "torch.aten.index_put.hacked_twin", "torch.aten._index_put_impl")


def _region_write(value: Value) -> _RegionWrite | None:
    """How `value` writes a region into its first operand; None where it does not."""
    owner = getattr(value, "owner", None)
    name = getattr(owner, "name", None)
    if name in _SCATTERS:
        return _RegionWrite(_REGION_READS[name], 1, owner.operands[1].type, tuple(range(2, len(owner.operands))))
    if name == "torch.aten.scatter_add":  # (self, dim, index, src)
        return _accumulating_write(owner, 3)
    if name not in _INDEX_PUTS:
        return None
    try:
        accumulating = constant_of(owner.operands[3])
    except NotConstant:
        return None
    base, values = owner.operands[0], owner.operands[2]
    if accumulating is not False:
        return _accumulating_write(owner, 2) if accumulating is True else None
    sizes = static_sizes(base.type)
    construct = getattr(owner.operands[1].owner, "operation", None)
    if sizes is None or getattr(construct, "name", None) != "torch.prim.ListConstruct":
        return None
    shape = _indexed_shape(sizes, list(construct.operands))
    value_sizes = static_sizes(values.type)
    if shape is None or value_sizes is None or len(value_sizes) > len(shape):
        return None
    if element_type_text(values.type) != element_type_text(base.type):
        return None
    region_type = _type(_with_shape(str(base.type), ",".join(map(str, shape))))
    return _RegionWrite("torch.aten.index.Tensor", 2, region_type, (1,))


# The value each element type adds without changing any element: -0.0
# (x + -0.0 is x for every float, -0.0 and +0.0 included; +0.0 would turn a
# -0.0 into +0.0), and 0 for integers. Booleans (an OR) and complex numbers
# keep the whole-tensor select.
_FLOATS = ("f16", "bf16", "f32", "f64")
_ADDITIVE_IDENTITIES = (*_FLOATS, "si8", "si16", "si32", "si64", "ui8")


def _accumulating_write(op: Operation, source: int) -> _RegionWrite | None:
    """An op adding operand `source` into its operand 0 at some indices:
    guarded by adding the identity where a check failed, for element types
    that have one and a source of the base's element type."""
    kind = element_type_text(op.operands[source].type)
    if kind != element_type_text(op.operands[0].type) or kind not in _ADDITIVE_IDENTITIES:
        return None
    return _RegionWrite(None, source, op.operands[source].type, ())


def _additive_identity(tensor_type: Type) -> Value:
    if element_type_text(tensor_type) in _FLOATS:
        return ConstantFloatOp(FloatAttr.get_f64(-0.0), results=[_type("!torch.float")]).result
    return int_constant(0)


def _indexed_shape(sizes: list[int], indices: list[Value]) -> list[int] | None:
    """The shape of `base[indices]` (advanced indexing, PyTorch's rules: the
    broadcast index shape replaces the indexed dims where they are adjacent,
    else leads); None for masks or dynamic shapes."""
    if len(indices) > len(sizes):
        return None
    indexed, shapes = [], []
    for dim, index in enumerate(indices):
        if str(index.type) == "!torch.none":
            continue
        index_sizes = static_sizes(index.type)
        if index_sizes is None or element_type_text(index.type) in _NOT_INDICES:
            return None
        indexed.append(dim)
        shapes.append(index_sizes)
    if not indexed:
        return None
    try:
        broadcast = list(np.broadcast_shapes(*map(tuple, shapes)))
    except ValueError:
        return None
    kept = [size for dim, size in enumerate(sizes) if dim not in indexed]
    if indexed == list(range(indexed[0], indexed[-1] + 1)):
        return sizes[: indexed[0]] + broadcast + sizes[indexed[-1] + 1 :]
    return broadcast + kept


def _original_value(function: Operation, argument: Value) -> Value:
    """The argument's value at entry: its `torch.copy.to_vtensor` read (made if missing)."""
    for use in argument.uses:
        if use.owner.name == "torch.copy.to_vtensor":
            return use.owner.results[0]
    block = function.regions[0].blocks[0]
    with InsertionPoint.at_block_begin(block), function.location:
        return CopyToValueTensorOp(argument, results=[value_type(argument.type)]).result


def _type(text: str) -> Type:
    """A Torch type from its text, in the context of the location ops are built at."""
    return Type.parse(text, Location.current.context)


def _list_of(values: list[Value], list_type: str) -> Value:
    return PrimListConstructOp(_type(list_type), values).result
