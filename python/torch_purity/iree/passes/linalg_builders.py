"""Building linalg ops from Python passes (generic form, so no dialect bindings are needed)."""

from __future__ import annotations

from torch_mlir.ir import (
    AffineMap,
    AffineMapAttr,
    ArrayAttr,
    Attribute,
    BF16Type,
    BlockArgument,
    Context,
    DenseElementsAttr,
    DenseI32ArrayAttr,
    F16Type,
    F32Type,
    F64Type,
    FloatAttr,
    IndexType,
    InsertionPoint,
    IntegerAttr,
    IntegerType,
    Operation,
    OpResult,
    RankedTensorType,
    ShapedType,
    Type,
    Value,
)

_CMPI_EQ = 0  # arith.cmpi predicate "eq"
BARRIER = "util.optimization_barrier"  # IREE's, in generic form


# Ops whose result lives in operand 0's buffer (views, reshapes, IREE's
# barrier), and insertions, whose result lives in their destination's (operand 1).
_SAME_BUFFER = (
    "tensor.extract_slice",
    "tensor.expand_shape",
    "tensor.collapse_shape",
    "tensor.cast",
    "tensor.insert_slice",
    BARRIER,
)


# Destination-passing ops: `ins` segment first, then `outs` (`operandSegmentSizes`).
DESTINATION_PASSING_PREFIXES = ("linalg.", "tm_tensor.")
# Destination-passing ops with one init, their last operand, and no
# `operandSegmentSizes` to read it from. A Linear's weight is read through
# `linalg.transpose`: without this it crossed as a copy on every call.
_SINGLE_INIT_OPS = ("linalg.transpose", "linalg.broadcast", "linalg.map")


def init_operands(op: Operation) -> list[int] | None:
    """The operand numbers of a destination-passing linalg or tm_tensor op's
    inits (the buffers its results take, in result order); None for other
    ops, and where the segments cannot be read."""
    if not op.name.startswith(DESTINATION_PASSING_PREFIXES):
        return None
    if op.name in _SINGLE_INIT_OPS:
        return [len(op.operands) - 1]
    if "operandSegmentSizes" not in op.attributes:
        return None
    segments = list(DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    if len(segments) != 2:
        return None
    return list(range(segments[0], segments[0] + segments[1]))


def barrier(value: Value) -> Value:
    """`value` through IREE's `util.optimization_barrier` (generic form:
    torch-mlir does not know the util dialect), built at the current
    insertion point and location."""
    Context.current.allow_unregistered_dialects = True
    return Operation.create(BARRIER, results=[value.type], operands=[value]).results[0]


def insert_slices(functions: list[Operation]) -> list[Operation]:
    """The `tensor.insert_slice` ops in the functions' bodies, in order (a list:
    passes rewrite around them)."""
    return [
        op.operation
        for function in functions
        for op in function.regions[0].blocks[0].operations
        if op.operation.name == "tensor.insert_slice"
    ]


def buffer_root(value: Value) -> Value:
    """The value whose buffer `value` lives in, as IREE places it when it can:
    followed through views, reshapes, barriers and insertions' destinations.
    A function argument where the value is (a part of) an argument."""
    while isinstance(value, OpResult) and value.owner.name in _SAME_BUFFER:
        value = value.owner.operands[1 if value.owner.name == "tensor.insert_slice" else 0]
    return value


def _bit_type(element: Type) -> Type | None:
    """The integer type of the element's bits, or None where the element is not a plain number."""
    if isinstance(element, IntegerType):
        return element
    for kind, width in ((F16Type, 16), (BF16Type, 16), (F32Type, 32), (F64Type, 64)):
        if isinstance(element, kind):
            return IntegerType.get_signless(width)
    return None


def _elementwise_generic(source: Value, destination: Value) -> tuple[Operation, object]:
    """`linalg.generic ins(source) outs(destination)` of identity maps (a 0-d
    source read at every position), and its empty body (the caller writes
    it, ending in `linalg.yield`)."""
    tensor_type = RankedTensorType(destination.type)
    identity = AffineMapAttr.get(AffineMap.get_identity(tensor_type.rank))
    source_map = identity
    if RankedTensorType(source.type).rank == 0 and tensor_type.rank > 0:
        source_map = AffineMapAttr.get(AffineMap.get(tensor_type.rank, 0, []))
    parallel = Attribute.parse("#linalg.iterator_type<parallel>")
    generic = Operation.create(
        "linalg.generic",
        results=[tensor_type],
        operands=[source, destination],
        attributes={
            "indexing_maps": ArrayAttr.get([source_map, identity]),
            "iterator_types": ArrayAttr.get([parallel] * tensor_type.rank),
            "operandSegmentSizes": DenseI32ArrayAttr.get([1, 1]),
        },
        regions=1,
    )
    element = tensor_type.element_type
    return generic, generic.regions[0].blocks.append(element, element)


def copy_reading_destination(source: Value, destination: Value) -> Value | None:
    """`linalg.generic ins(source) outs(destination)` yielding `source`
    exactly while reading `destination`: where the bit patterns agree it
    yields the destination's element (the same bits), else the source's. IREE
    binds such a destination read-write and writes it with a dispatch, never
    with a transfer; folding cannot see through the comparison (a computed
    source passes through util.optimization_barrier first). Built at the
    current insertion point and location; None for element types other than
    integers and IEEE floats.

    A `linalg.fill` or splat constant is read as its one element (a 0-d
    tensor read at every position): the filled tensor is never made
    (`x.zero_()` on 1 MiB allocated and filled 1 MiB, then copied it)."""
    tensor_type = RankedTensorType(source.type)
    element = tensor_type.element_type
    bits = _bit_type(element)
    if bits is None:
        return None
    splat = _splat_as_scalar_tensor(source)
    if splat is not None:
        source, tensor_type = splat, RankedTensorType(splat.type)
    if not isinstance(buffer_root(source), BlockArgument) and tensor_type.has_static_shape:
        # Folding must not see a computed source's elements: with a constant,
        # `select(new ^ old == 0, old, new)` folds to the constant (a
        # transfer). IREE's barrier (generic form: torch-mlir does not know
        # the util dialect) hides them. Not on a value in an argument's
        # buffer: IREE then copied within that one buffer, which it rejects.
        # Not on a value of dynamic shape either: IREE cannot resolve the
        # barrier's dims ("tensor.dim unexpected during shape cleanup"); a
        # folded transfer there is refused before anything runs, and the
        # runtime then hands over host copies (iree/runtime.py).
        source = barrier(source)
    generic, body = _elementwise_generic(source, destination)
    new_value, old_value = body.arguments
    with InsertionPoint(body):
        new_bits, old_bits = new_value, old_value
        if bits != element:
            new_bits = Operation.create("arith.bitcast", results=[bits], operands=[new_bits]).results[0]
            old_bits = Operation.create("arith.bitcast", results=[bits], operands=[old_bits]).results[0]
        difference = Operation.create("arith.xori", results=[bits], operands=[new_bits, old_bits]).results[0]
        zero = Operation.create(
            "arith.constant", results=[bits], attributes={"value": IntegerAttr.get(bits, 0)}
        ).results[0]
        same = Operation.create(
            "arith.cmpi",
            results=[IntegerType.get_signless(1)],
            operands=[difference, zero],
            attributes={"predicate": IntegerAttr.get(IntegerType.get_signless(64), _CMPI_EQ)},
        ).results[0]
        chosen = Operation.create("arith.select", results=[element], operands=[same, old_value, new_value]).results[0]
        Operation.create("linalg.yield", operands=[chosen])
    return generic.results[0]


def _splat_as_scalar_tensor(source: Value) -> Value | None:
    """The one element of a `linalg.fill` or a splat `arith.constant` of
    rank 1 or more, as a 0-d tensor built at the insertion point; None for
    anything else."""
    if not isinstance(source, OpResult) or RankedTensorType(source.type).rank == 0:
        return None
    scalar_type = RankedTensorType.get([], RankedTensorType(source.type).element_type)
    owner = source.owner
    if owner.name == "linalg.fill":
        return Operation.create("tensor.from_elements", results=[scalar_type], operands=[owner.operands[0]]).results[0]
    if owner.name == "arith.constant" and isinstance(owner.attributes["value"], DenseElementsAttr):
        dense = DenseElementsAttr(owner.attributes["value"])
        if dense.is_splat:
            value = DenseElementsAttr.get_splat(scalar_type, dense.get_splat_value())
            return Operation.create("arith.constant", results=[scalar_type], attributes={"value": value}).results[0]
    return None


def _empty_like(source: Value) -> Value:
    """A `tensor.empty` of `source`'s type, its dynamic sizes read from `source`."""
    tensor_type = RankedTensorType(source.type)
    dims = []
    for axis, size in enumerate(tensor_type.shape):
        if ShapedType.is_dynamic_size(size):
            index = Operation.create(
                "arith.constant",
                results=[IndexType.get()],
                attributes={"value": IntegerAttr.get(IndexType.get(), axis)},
            ).results[0]
            dims.append(Operation.create("tensor.dim", results=[IndexType.get()], operands=[source, index]).results[0])
    return Operation.create("tensor.empty", results=[tensor_type], operands=dims).results[0]


def fresh_copy(source: Value) -> Value | None:
    """A copy of `source` in a tensor of its own, computed by a dispatch:
    `copy_reading_destination` into a zero-filled tensor (a plain copy would
    be a transfer that IREE may elide, and reading a tensor.empty draws a
    warning). None for element types `copy_reading_destination` refuses."""
    tensor_type = RankedTensorType(source.type)
    element = tensor_type.element_type
    if _bit_type(element) is None:
        return None
    zero_attr = IntegerAttr.get(element, 0) if isinstance(element, IntegerType) else FloatAttr.get(element, 0.0)
    zero = Operation.create("arith.constant", results=[element], attributes={"value": zero_attr}).results[0]
    empty = _empty_like(source)
    zeros = Operation.create(
        "linalg.fill",
        results=[tensor_type],
        operands=[zero, empty],
        attributes={"operandSegmentSizes": DenseI32ArrayAttr.get([1, 1])},
        regions=1,
    )
    body = zeros.regions[0].blocks.append(element, element)
    with InsertionPoint(body):
        Operation.create("linalg.yield", operands=[body.arguments[0]])
    return copy_reading_destination(source, zeros.results[0])


_CMPF_ORD, _CMPF_UNO = 7, 14  # arith.cmpf predicates "ord" and "uno"


def distinct_copy(source: Value, tag: int) -> Value | None:
    """A copy of `source` in a tensor of its own that neither folding nor CSE
    removes: `select(never, tag, element)`, where `never` (the element, as a
    float, both unordered and ordered with itself) is always false but not
    known to be by MLIR's folders, and `tag` differs per copy, so that two
    copies of one value stay two. Yields `source`'s elements exactly. Built
    at the current insertion point and location; None for element types
    other than integers and IEEE floats."""
    tensor_type = RankedTensorType(source.type)
    element = tensor_type.element_type
    if _bit_type(element) is None:
        return None
    generic, body = _elementwise_generic(source, _empty_like(source))
    value = body.arguments[0]
    i1 = IntegerType.get_signless(1)
    with InsertionPoint(body):
        as_float = value
        if isinstance(element, IntegerType):
            cast = "arith.uitofp" if element.width == 1 else "arith.sitofp"
            as_float = Operation.create(cast, results=[F32Type.get()], operands=[value]).results[0]

        def compare(predicate: int) -> Value:
            return Operation.create(
                "arith.cmpf",
                results=[i1],
                operands=[as_float, as_float],
                attributes={"predicate": IntegerAttr.get(IntegerType.get_signless(64), predicate)},
            ).results[0]

        never = Operation.create("arith.andi", results=[i1], operands=[compare(_CMPF_UNO), compare(_CMPF_ORD)])
        tag_attr = IntegerAttr.get(element, tag) if isinstance(element, IntegerType) else FloatAttr.get(element, tag)
        tag_value = Operation.create("arith.constant", results=[element], attributes={"value": tag_attr}).results[0]
        chosen = Operation.create("arith.select", results=[element], operands=[never.results[0], tag_value, value])
        Operation.create("linalg.yield", operands=[chosen.results[0]])
    return generic.results[0]
