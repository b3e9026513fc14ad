"""purity-dispatch-tied-writes: slice writes into a tied argument become dispatches that read what they overwrite.

Runs on linalg-on-tensors, after `purity-expose-input-writes` has tied
written arguments to their results (`iree.abi.output`) and the linalg
lowering. A row or slice write into a tied argument is a `tensor.insert_slice`
into it; IREE lowers that to a transfer (a buffer copy, or a fill when the
source is a splat) into the argument's buffer. IREE 3.13 runs transfers only
on buffers that allow DISCARD_WRITE access, and buffers imported through
DLPack (how the runtime hands the caller's tensors to IREE, on the CPU and on
the GPU) allow READ|WRITE only: the call fails with PERMISSION_DENIED
(measured on a one-row KV-cache write). A dispatch that reads its destination
binds it read-write, which such a buffer allows.

The pass rewrites each `tensor.insert_slice` on the chain of writes that
produces a tied result (following destinations back from the returned
value) into

    %old = tensor.extract_slice %dest[...]
    %new = linalg.generic ins(%source) outs(%old) { select(bits(source) == bits(old), old, source) }
    tensor.insert_slice %new into %dest[...]

The payload yields the source exactly (where the bit patterns agree, the
destination's element is the same bits), yet reads the destination, which
folding cannot see through. IREE fuses the generic with the insertion into
one dispatch that writes only the slice, in place: the cost stays the bytes
written (a 128k-row cache costs what a 1k-row cache does). Element types
other than integers and IEEE floats (complex) are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    AffineMap,
    AffineMapAttr,
    ArrayAttr,
    Attribute,
    DenseI32ArrayAttr,
    F16Type,
    F32Type,
    F64Type,
    BF16Type,
    InsertionPoint,
    IntegerAttr,
    IntegerType,
    Operation,
    OpResult,
    RankedTensorType,
    Type,
)

from .base import ModulePass
from .function_attrs import arg_attr, function_ops, function_type

_CMPI_EQ = 0  # arith.cmpi predicate "eq"


@dataclass(frozen=True)
class DispatchTiedWrites(ModulePass):
    """Turns slice writes into tied arguments into dispatches that read their destination (DLPack-imported buffers refuse transfers)."""

    name = "purity-dispatch-tied-writes"

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            for insert in _tied_slice_writes(function):
                _read_destination(insert)


def _tied_slice_writes(function: Operation) -> list[Operation]:
    """The insert_slice ops whose results flow, destination by destination,
    into a result tied to an argument."""
    block = function.regions[0].blocks[0]
    return_op = block.operations[len(block.operations) - 1].operation
    tied_results = []
    for index in range(len(function_type(function).inputs)):
        output = arg_attr(function, index, "iree.abi.output")
        if output is not None:
            tied_results.append(return_op.operands[IntegerAttr(output).value])
    writes: list[Operation] = []
    for value in tied_results:
        while isinstance(value, OpResult) and value.owner.name == "tensor.insert_slice":
            write = value.owner
            if write in writes:  # two tied results ending in one chain
                break
            writes.append(write)
            value = write.operands[1]  # its destination
    return writes


def _bit_type(element: Type) -> Type | None:
    """The integer type of the element's bits, or None where the element is not a plain number."""
    if isinstance(element, IntegerType):
        return element
    for kind, width in ((F16Type, 16), (BF16Type, 16), (F32Type, 32), (F64Type, 64)):
        if isinstance(element, kind):
            return IntegerType.get_signless(width)
    return None


def _read_destination(insert: Operation) -> None:
    source, destination = insert.operands[0], insert.operands[1]
    source_type = RankedTensorType(source.type)
    element = source_type.element_type
    bits = _bit_type(element)
    if bits is None:
        return
    segments = list(DenseI32ArrayAttr(insert.attributes["operandSegmentSizes"]))
    dynamic = list(insert.operands)[2:]
    rank = source_type.rank
    with InsertionPoint(insert), insert.location:
        old = Operation.create(
            "tensor.extract_slice",
            results=[source_type],
            operands=[destination, *dynamic],
            attributes={
                "static_offsets": insert.attributes["static_offsets"],
                "static_sizes": insert.attributes["static_sizes"],
                "static_strides": insert.attributes["static_strides"],
                "operandSegmentSizes": DenseI32ArrayAttr.get([1, *segments[2:]]),
            },
        ).results[0]
        identity = AffineMapAttr.get(AffineMap.get_identity(rank))
        parallel = Attribute.parse("#linalg.iterator_type<parallel>")
        generic = Operation.create(
            "linalg.generic",
            results=[source_type],
            operands=[source, old],
            attributes={
                "indexing_maps": ArrayAttr.get([identity, identity]),
                "iterator_types": ArrayAttr.get([parallel] * rank),
                "operandSegmentSizes": DenseI32ArrayAttr.get([1, 1]),
            },
            regions=1,
        )
        body = generic.regions[0].blocks.append(element, element)
    new_value, old_value = body.arguments
    with InsertionPoint(body), insert.location:
        new_bits, old_bits = new_value, old_value
        if bits != element:
            new_bits = Operation.create("arith.bitcast", results=[bits], operands=[new_value]).results[0]
            old_bits = Operation.create("arith.bitcast", results=[bits], operands=[old_value]).results[0]
        difference = Operation.create("arith.xori", results=[bits], operands=[new_bits, old_bits]).results[0]
        zero = Operation.create("arith.constant", results=[bits], attributes={"value": IntegerAttr.get(bits, 0)}).results[0]
        same = Operation.create(
            "arith.cmpi",
            results=[IntegerType.get_signless(1)],
            operands=[difference, zero],
            attributes={"predicate": IntegerAttr.get(IntegerType.get_signless(64), _CMPI_EQ)},
        ).results[0]
        chosen = Operation.create("arith.select", results=[element], operands=[same, old_value, new_value]).results[0]
        Operation.create("linalg.yield", operands=[chosen])
    insert.operands[0] = generic.results[0]
