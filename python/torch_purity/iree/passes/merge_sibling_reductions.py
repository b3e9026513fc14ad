"""purity-merge-sibling-reductions: reductions over the same data become one multi-result reduction.

Runs on linalg-on-tensors, in the iree-abi stage. IREE 3.13 makes one
dispatch per reduction `linalg.generic` and fuses each one's elementwise
producers into it; it does not fuse two reductions side by side. Two
reductions that read the same tensor (a variance's sum and sum of squares,
BatchNorm's backward sums of the gradient and of the gradient times the
centred input) then read it from memory twice, once per dispatch: for a
BatchNorm over 64×256×28×28 that is 51 MB more per call.

The pass merges such a pair into one `linalg.generic` with both reductions'
inputs, inits and results, its body both bodies side by side: IREE makes
one dispatch of it and reads the shared tensor once. Two reductions B and
an earlier A are merged where:

- both are `linalg.generic`s with a reduction iterator, the same iterator
  types and the same static loop ranges;
- they read the same data: a tensor of as many elements as their loop
  space reaches both, directly or through elementwise generics (unrelated
  reductions of one size stay apart, so a contraction IREE recognises as
  such is not folded into another kernel);
- B does not depend on A. The merged op takes B's place, where every
  operand of both is defined; the ops between them that use A's results
  (directly or through one another: a cast of A's sum to float32) move
  right after it, in order, where they are only linalg, tensor, arith or
  math ops (free of side effects), else the pair stays apart.

The merged op can merge again with a later one (three sums over one tensor
become one reduction). Values and their order are unchanged: each result is
computed by its own body's ops as before; only where the two run changes.
Its location is the fusion of both ops' locations.

Not a workaround: a schedule IREE 3.13 does not find by itself. Measured
with `iree-benchmark-module` (the programs `torch_purity.compile` makes):
a training-mode BatchNorm's statistics over 64×256×28×28, 1.25 + 1.32 ms
for the two sums as two reductions, 1.80 ms as one; over the conv block's
8×32×32×32, 38.6 + 35.9 µs against 62.5 µs. Tests:
test/e2e/test_sibling_reductions.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch_mlir.ir import (
    AffineDimExpr,
    AffineMapAttr,
    ArrayAttr,
    Block,
    DenseI32ArrayAttr,
    InsertionPoint,
    Location,
    Operation,
    OpResult,
    RankedTensorType,
    Value,
)

from ...ir_helpers.functions import function_ops, terminator
from ...ir_helpers.queries import static_elements, values_used
from ...passes.base import ModulePass

_GENERIC = "linalg.generic"
# Ops that only compute values: a user of the earlier reduction of these kinds may move after the merged op.
_SIDE_EFFECT_FREE = ("linalg.", "tensor.", "arith.", "math.")


@dataclass(frozen=True)
class MergeSiblingReductions(ModulePass):
    """Merges reductions of one loop space that read the same tensor into one multi-result linalg.generic."""

    name = "purity-merge-sibling-reductions"
    # How far up elementwise generics the shared tensor is looked for, per input.
    max_depth: int = 8

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            block = function.regions[0].blocks[0]
            while self._merge_one(block):
                pass

    def _merge_one(self, block: Block) -> bool:
        """Merges the first mergeable pair in block order; whether one was found."""
        ops = [o.operation for o in block.operations]
        position = {op: index for index, op in enumerate(ops)}
        seen: list[tuple[Operation, tuple, set[Value]]] = []
        for op in ops:
            space = _reduction_space(op)
            if space is None:
                continue
            leaves = _full_size_leaves(op, math.prod(space[1]), self.max_depth)
            for earlier, earlier_space, earlier_leaves in reversed(seen):
                if earlier_space != space or not leaves & earlier_leaves:
                    continue
                dependents = _dependents_between(earlier, op, ops[position[earlier] + 1 : position[op]])
                if dependents is not None:
                    merged = _merge(earlier, op)
                    for dependent in reversed(dependents):
                        dependent.move_after(merged)
                    return True
            seen.append((op, space, leaves))
        return False


def _reduction_space(op: Operation) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """(iterator types, static loop ranges) of a reduction generic; None for
    other ops and where a range is not static or not read off an operand."""
    if op.name != _GENERIC or len(op.regions[0].blocks) != 1:
        return None
    kinds = tuple(str(kind) for kind in ArrayAttr(op.attributes["iterator_types"]))
    if not any(kind.endswith("reduction>") for kind in kinds):
        return None
    ranges: list[int | None] = [None] * len(kinds)
    for operand, map_attr in zip(op.operands, ArrayAttr(op.attributes["indexing_maps"])):
        if not isinstance(operand.type, RankedTensorType):
            return None
        shape = RankedTensorType(operand.type).shape
        for size, expression in zip(shape, AffineMapAttr(map_attr).value.results):
            if isinstance(expression, AffineDimExpr) and size >= 0:
                ranges[expression.position] = size
    if any(r is None for r in ranges):
        return None
    return kinds, tuple(ranges)


def _full_size_leaves(op: Operation, elements: int, max_depth: int) -> set[Value]:
    """The tensors of `elements` elements that the op's inputs are computed
    from through elementwise generics (the inputs themselves included)."""
    inputs = DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]
    found: set[Value] = set()
    pending = [(op.operands[i], 0) for i in range(inputs)]
    visited: set[Value] = set()
    while pending:
        value, depth = pending.pop()
        if value in visited:
            continue
        visited.add(value)
        if static_elements(value) == elements:
            found.add(value)
        if depth < max_depth and isinstance(value, OpResult) and _is_elementwise(value.owner):
            producer = value.owner
            producer_inputs = DenseI32ArrayAttr(producer.attributes["operandSegmentSizes"])[0]
            pending.extend((producer.operands[i], depth + 1) for i in range(producer_inputs))
    return found


def _is_elementwise(op: Operation) -> bool:
    return op.name == _GENERIC and all(
        str(kind).endswith("parallel>") for kind in ArrayAttr(op.attributes["iterator_types"])
    )


def _dependents_between(earlier: Operation, later: Operation, between: list[Operation]) -> list[Operation] | None:
    """The ops of `between` that use `earlier`'s results, directly or
    through one another (they move after the merged op, in order); None
    where `later` is one of them or one cannot move (an op that is not known
    to be free of side effects)."""
    reached = set(earlier.results)
    dependents = []
    for op in between:
        if any(value in reached for value in values_used(op)):
            if not op.name.startswith(_SIDE_EFFECT_FREE):
                return None
            dependents.append(op)
            reached.update(op.results)
    return None if any(value in reached for value in values_used(later)) else dependents


def _merge(first: Operation, second: Operation) -> Operation:
    """Replaces the two generics by one at `second`'s place; returns it."""
    first_ins = DenseI32ArrayAttr(first.attributes["operandSegmentSizes"])[0]
    second_ins = DenseI32ArrayAttr(second.attributes["operandSegmentSizes"])[0]

    def ins_then_outs(first_items, second_items) -> list:
        """Both ops' items for their inputs, then both ops' items for their inits."""
        first_items, second_items = list(first_items), list(second_items)
        inputs = [*first_items[:first_ins], *second_items[:second_ins]]
        return [*inputs, *first_items[first_ins:], *second_items[second_ins:]]

    operands = ins_then_outs(first.operands, second.operands)
    maps = ins_then_outs(ArrayAttr(first.attributes["indexing_maps"]), ArrayAttr(second.attributes["indexing_maps"]))
    first_body, second_body = first.regions[0].blocks[0], second.regions[0].blocks[0]
    arguments = ins_then_outs(first_body.arguments, second_body.arguments)
    location = Location.fused([first.location, second.location], context=second.context)
    with InsertionPoint(second), location:
        merged = Operation.create(
            _GENERIC,
            results=[r.type for r in (*first.results, *second.results)],
            operands=operands,
            attributes={
                "indexing_maps": ArrayAttr.get(maps),
                "iterator_types": second.attributes["iterator_types"],
                "operandSegmentSizes": DenseI32ArrayAttr.get(
                    [first_ins + second_ins, len(operands) - first_ins - second_ins]
                ),
            },
            regions=1,
        )
        body = merged.regions[0].blocks.append(*[a.type for a in arguments])
    first_yield, second_yield = terminator(first_body), terminator(second_body)
    with InsertionPoint(body), location:
        yielded = Operation.create("linalg.yield", operands=[*first_yield.operands, *second_yield.operands])
    for old, new in zip(arguments, body.arguments):
        old.replace_all_uses_with(new)
    for old_body in (first_body, second_body):
        for inner in [o.operation for o in old_body.operations][:-1]:
            inner.move_before(yielded)
    results = list(merged.results)
    for old, new in zip([*first.results, *second.results], results):
        old.replace_all_uses_with(new)
    first.erase()
    second.erase()
    return merged
