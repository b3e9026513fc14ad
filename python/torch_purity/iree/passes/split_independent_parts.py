"""purity-split-independent-parts: adds, beside a function, parts of it that share no buffer, for torch's threads.

Runs on linalg-on-tensors that keeps the iree-abi stage's contract
(every result stored in a tied argument): `iree/module.py`'s
`program_text` runs it on a CPU program for the calling thread, in no
stage of the pipeline. A function whose work falls
into independent pieces (an optimizer step over many parameters: each
parameter's update reads and writes only its own tensors) runs on one core
as one IREE invocation. The pass finds the pieces and adds `@<name>$part<k>`
functions, each with the function's own arguments and a share of its
results: the runtime (iree/parallel_parts.py) invokes the parts at once on
torch's own intra-op (OpenMP) threads with one argument list, and each part
writes its results into their arguments as the function would.

Two top-level ops are in one piece where one uses a value the other makes
(directly or from inside a region), and where one reads an argument that
the other's value is written into (the argument's `iree.abi.output` tie):
the write must not overtake the read, and across parts nothing orders
them (a function whose tied argument takes an argument's or a constant's
value, with no op of its own to join, stays whole). Constants,
`tensor.empty` and fills of those belong to no piece; each part keeps its
own copy. Pieces are weighed by the elements their ops
touch (each op's largest static operand or result) and dealt, heaviest
first, to the lightest of `parts` parts (`program_text` asks for one per
thread torch computes with: `parallel_parts.part_count`). A part's function is a copy of the
function returning its share of the results (in their order, each tie
renumbered, the ties of other parts' results dropped) with every op its
results do not need erased.

Only where it pays: the function (option `function`, `main`: the one the
runtime's steady call plan invokes, not a training program's `forward`
and `backward`) has static sizes, its ops are all linalg, tensor, arith,
math, tm_tensor, IREE's linalg_ext or `util.optimization_barrier` ops (no
control flow, nothing with effects), they touch at least `min_elements`
elements in all, and no piece holds more than `max_share` of them (a
BatchNorm, one piece, is left alone: the parts would take as long as that
piece, however many there are; a part may hold more than that share, as
two of three equal pieces dealt to two parts do, and still save a third
of the time). A function already split is not
split again.

Measured (benchmarks/compare_systems.py, SGD over 50×256×256 parameters
on 2 cores): see docs/architecture.md, "Independent parts on torch's
threads".
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.ir import (
    ArrayAttr,
    BlockArgument,
    DictAttr,
    FunctionType,
    InsertionPoint,
    IntegerAttr,
    Operation,
    OpResult,
    RankedTensorType,
    StringAttr,
    TypeAttr,
    Value,
)

from ...ir_helpers.functions import function_ops, terminator
from ...ir_helpers.queries import static_elements, values_used
from ...passes.base import ModulePass
from ..parallel_parts import PART_SEPARATOR

_TIE = "iree.abi.output"
_SPLITTABLE = ("linalg.", "tensor.", "arith.", "math.", "tm_tensor.", "iree_linalg_ext.")
_BARRIER = "util.optimization_barrier"
# Ops every part may compute for itself: they read no tensor of the program.
_FREE = ("arith.constant", "tensor.empty")


@dataclass(frozen=True)
class SplitIndependentParts(ModulePass):
    """Adds `@f$part<k>` functions computing independent shares of f's results (run on torch's threads)."""

    name = "purity-split-independent-parts"
    function: str = "main"  # the function split (the one the runtime's steady call plan invokes)
    parts: int = 4  # at most this many parts
    min_elements: int = 1 << 21  # elements the function's ops touch, in all, below which it stays whole
    max_share: float = 0.6  # the most of them one piece may hold

    def apply(self, module: Operation) -> None:
        for function in function_ops(module):
            name = StringAttr(function.attributes["sym_name"]).value
            if name != self.function or _already_split(module, name) or not _static_signature(function):
                continue
            shares = self._shares(function)
            last = function
            for number, results in enumerate(shares or []):
                last = _add_part(function, last, f"{name}{PART_SEPARATOR}{number}", results)

    def _shares(self, function: Operation) -> list[list[int]] | None:
        """The result indices of each part, or None where the function stays whole."""
        block = function.regions[0].blocks[0]
        ops = [o.operation for o in block.operations][:-1]
        if not ops or any(not _splittable(op) for op in ops):
            return None
        free = _free_ops(ops)
        pieces = _Pieces([op for op in ops if op not in free])
        for op in pieces.members:
            for value in values_used(op):
                producer = _top_level_producer(value, block)
                if producer is not None and producer not in free:
                    pieces.join(op, producer)
        returned = list(terminator(block).operands)
        for argument in block.arguments:
            tie = _tie_of(function, argument.arg_number)
            if tie is None:
                continue
            writer = _top_level_producer(returned[tie], block)
            if writer is None or writer in free:
                return None  # (an argument or a constant written into it: no op to order its readers before)
            for use in argument.uses:
                reader = _top_level_ancestor(use.owner.operation, block)
                if reader is not None and reader not in free:
                    pieces.join(reader, writer)
        weights: dict[Operation, int] = {}
        for op in pieces.members:
            root = pieces.find(op)
            weights[root] = weights.get(root, 0) + _elements_touched(op)
        total = sum(weights.values())
        if total < self.min_elements or len(weights) < 2:
            return None
        if max(weights.values()) > self.max_share * total:
            return None  # (one piece bounds the parts' time, however many there are)
        loads = [0] * min(self.parts, len(weights))
        part_of: dict[Operation, int] = {}
        for root in sorted(weights, key=lambda r: -weights[r]):
            lightest = loads.index(min(loads))
            part_of[root] = lightest
            loads[lightest] += weights[root]
        shares: list[list[int]] = [[] for _ in loads]
        for index, value in enumerate(returned):
            producer = _top_level_producer(value, block)
            in_piece = producer is not None and producer in pieces.parent
            shares[part_of[pieces.find(producer)] if in_piece else 0].append(index)
        return [share for share in shares if share]


class _Pieces:
    """Union-find over ops."""

    def __init__(self, members: list[Operation]) -> None:
        self.members = members
        self.parent: dict[Operation, Operation] = {op: op for op in members}

    def find(self, op: Operation) -> Operation:
        root = op
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[op] != root:
            self.parent[op], op = root, self.parent[op]
        return root

    def join(self, first: Operation, second: Operation) -> None:
        self.parent[self.find(first)] = self.find(second)


def _already_split(module: Operation, name: str) -> bool:
    prefix = f"{name}{PART_SEPARATOR}"
    return any(StringAttr(f.attributes["sym_name"]).value.startswith(prefix) for f in function_ops(module))


def _static_signature(function: Operation) -> bool:
    """Whether every argument and result has static sizes (the runtime's
    call plan, which runs the parts, takes no program with dynamic ones)."""
    signature = FunctionType(TypeAttr(function.attributes["function_type"]).value)
    return all(
        not isinstance(t, RankedTensorType) or RankedTensorType(t).has_static_shape
        for t in (*signature.inputs, *signature.results)
    )


def _splittable(op: Operation) -> bool:
    return op.name.startswith(_SPLITTABLE) or op.name == _BARRIER


def _free_ops(ops: list[Operation]) -> set[Operation]:
    """Constants, empty tensors of static shape, and fills of those with constants."""
    free: set[Operation] = set()
    for op in ops:
        if op.name in _FREE and not list(op.operands):
            free.add(op)
        elif op.name == "linalg.fill" and all(
            isinstance(v, OpResult) and v.owner.operation in free for v in op.operands
        ):
            free.add(op)
    return free


def _top_level_ancestor(op: Operation, block) -> Operation | None:
    """The op of `block` that is `op` or holds it."""
    owner = block.owner.operation
    while op is not None:
        parent = op.parent
        if parent is None:
            return None
        if parent.operation == owner:
            return op
        op = parent.operation
    return None


def _top_level_producer(value: Value, block) -> Operation | None:
    """The op of `block` that makes `value`; None for an argument."""
    if isinstance(value, BlockArgument) or not isinstance(value, OpResult):
        return None
    return _top_level_ancestor(value.owner.operation, block)


def _tie_of(function: Operation, index: int) -> int | None:
    """The result index tied to argument `index`, if any."""
    if "arg_attrs" not in function.attributes:
        return None
    attributes = DictAttr(ArrayAttr(function.attributes["arg_attrs"])[index])
    return IntegerAttr(attributes[_TIE]).value if _TIE in attributes else None


def _elements_touched(op: Operation) -> int:
    """The most elements one of the op's static tensor operands or results holds."""
    return max((static_elements(value) or 0 for value in (*op.operands, *op.results)), default=0)


def _add_part(function: Operation, after: Operation, name: str, results: list[int]) -> Operation:
    """A copy of `function` named `name` returning `results` (in order), placed after `after`."""
    part = function.clone(ip=InsertionPoint.after(after))
    part.attributes["sym_name"] = StringAttr.get(name)
    block = part.regions[0].blocks[0]
    returned = terminator(block)
    kept = [returned.operands[i] for i in results]
    with InsertionPoint(returned), returned.location:
        Operation.create("func.return", operands=kept)
    returned.erase()
    old_type = FunctionType(TypeAttr(part.attributes["function_type"]).value)
    part.attributes["function_type"] = TypeAttr.get(
        FunctionType.get(old_type.inputs, [old_type.results[i] for i in results])
    )
    if "res_attrs" in part.attributes:
        result_attributes = list(ArrayAttr(part.attributes["res_attrs"]))
        part.attributes["res_attrs"] = ArrayAttr.get([result_attributes[i] for i in results])
    if "arg_attrs" in part.attributes:
        renumbered = {old: new for new, old in enumerate(results)}
        argument_attributes = []
        for attributes in ArrayAttr(part.attributes["arg_attrs"]):
            entries = {a.name: a.attr for a in DictAttr(attributes)}
            if _TIE in entries:
                tie = IntegerAttr(entries.pop(_TIE)).value
                if tie in renumbered:
                    entries[_TIE] = IntegerAttr.get(IntegerAttr(attributes[_TIE]).type, renumbered[tie])
            argument_attributes.append(DictAttr.get(entries))
        part.attributes["arg_attrs"] = ArrayAttr.get(argument_attributes)
    _erase_unused(block)
    return part


def _erase_unused(block) -> None:
    """Erases, last first, the ops none of whose results is used (all side-effect free here)."""
    for op in reversed([o.operation for o in block.operations][:-1]):
        if all(not list(result.uses) for result in op.results):
            op.erase()
