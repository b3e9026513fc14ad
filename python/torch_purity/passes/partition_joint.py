"""purity-partition-joint: a training program's joint function split into `@forward` and `@backward`.

Runs on value-boundary Torch IR, right after purity-expose-input-writes, where
the joint function `(primals, tangents) -> (outputs, gradients, final values
of written inputs)` is functional and every input write is a result. The
driver marks a joint when it imports one: an argument `purity.tangent = j` is
the incoming gradient of program output j, a result `purity.gradient_of = i`
the gradient of argument i. Functions without these marks are left alone.

The pass replaces the joint function by
- `@forward(primals) -> (outputs, final values of written inputs, saved)`:
  every op the outputs and the input writes need, so each input write (a
  BatchNorm's running statistics, a buffer, an input written in place)
  happens once, here; a saved value is a result `purity.saved = k`, the
  backward's argument k;
- `@backward(saved, tangents) -> gradients`: what only the gradients need.
  A backward argument `purity.saved_argument = i` is the forward's argument i
  itself (the caller's tensor, kept by reference as eager autograd keeps
  inputs; once the forward ran it holds the final value of a written input,
  so a saved final value is kept that way too); each other saved argument comes from the forward's result
  `purity.saved` = its index; tangent arguments keep `purity.tangent`,
  results `purity.gradient_of`.

What is saved (memory near eager's; the idea of PyTorch's min-cut
partitioner, simplified):
1. Ops that depend on no tangent and that the forward's results do not need
   run in the backward: computed once either way, and nothing is kept for
   them. Random ops stay in the forward, where eager draws them.
2. For a forward value a backward op reads: a forward argument is passed by
   reference, unless the forward writes that argument (then its original
   value is saved); ops without tensor operands (constants) and ops making
   non-tensor values are cloned; any other value is saved.
3. With `recompute` (the default): a saved value made by a cheap op
   (`RECOMPUTABLE`: pointwise, views, dtype conversions) is recomputed in the
   backward instead, when the operands it needs that are not yet available
   take fewer bytes than it does; repeated until nothing changes, so
   elementwise and view chains are recomputed from their saved roots.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir.dialects import func
from torch_mlir.ir import (
    ArrayAttr,
    Block,
    DictAttr,
    FunctionType,
    InsertionPoint,
    IntegerAttr,
    Operation,
    StringAttr,
    TypeAttr,
)

from .. import contract
from ..contract.ir import element_types_attr
from ..ir_helpers.functions import dict_entries, function_ops, function_type, i64_attr, set_results, terminator
from ..ir_helpers.queries import walk
from ..ir_helpers.torch_values import static_sizes
from ..ir_helpers.types import element_type_text
from ..ops import POINTWISE_OPS, VIEW_OPS
from .base import LocatedPassError, ModulePass, PassFailed

# Cheap to recompute from their operands: pointwise ops, views and conversions.
RECOMPUTABLE = (
    POINTWISE_OPS
    | VIEW_OPS
    | frozenset(
        "torch.aten." + name
        for name in (
            "clone",
            "to.dtype",
            "_to_copy",
            "gelu",
            "silu",
            "le.Scalar",
            "ge.Scalar",
            "eq.Scalar",
            "threshold",
            "leaky_relu",
            "hardtanh",
            "square",
            "erf",
        )
    )
    | frozenset({"torch.prims.convert_element_type"})
)

# Ops drawing random numbers: they stay where eager runs them (the forward).
_RANDOM_WORDS = ("rand", "bernoulli", "normal", "uniform", "exponential", "dropout", "multinomial", "geometric")

# Result attributes about aliasing that do not carry over to a gradient
# (a backward result is always a tensor of its own).
_ALIAS_ATTRS = (
    contract.ALIASES_INPUT,
    contract.ALIAS_GROUP,
    contract.ALIAS_BASE,
    contract.VIEW_SIZES,
    contract.VIEW_STRIDES,
    contract.VIEW_STORAGE_OFFSET,
)


@dataclass(frozen=True)
class PartitionJoint(ModulePass):
    """Splits a joint function into @forward (outputs, input writes, saved values) and @backward (gradients)."""

    name = "purity-partition-joint"
    recompute: bool = True  # recompute cheap ops in the backward instead of saving their results

    def apply(self, module: Operation) -> None:
        joints = [function for function in function_ops(module) if _is_joint(function)]
        for extra in joints[1:]:
            extra.location.emit_error(f"{self.name}: a module holds one joint function (the first is partitioned)")
        self.for_each(joints[:1], lambda function: _Partition(function, self.recompute).run())
        if len(joints) > 1:
            raise PassFailed()


class _JointError(LocatedPassError):
    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(op.location, message)


def _attr_dicts(function: Operation, key: str, count: int) -> list[dict[str, object]]:
    found = list(ArrayAttr(function.attributes[key])) if key in function.attributes else []
    dicts = [dict_entries(d) for d in found]
    return dicts + [{} for _ in range(count - len(dicts))]


def _is_joint(function: Operation) -> bool:
    types = function_type(function)
    arguments = _attr_dicts(function, "arg_attrs", len(types.inputs))
    results = _attr_dicts(function, "res_attrs", len(types.results))
    return any(contract.TANGENT in a for a in arguments) or any(contract.GRADIENT_OF in r for r in results)


def _is_tensor(value) -> bool:
    return str(value.type).startswith("!torch.vtensor")


def _bytes(value) -> int:
    """The value's size in bytes (a large number where its shape is not static)."""
    sizes = static_sizes(value.type)
    if sizes is None:
        return 1 << 62
    count = 1
    for size in sizes:
        count *= size
    dtype = contract.TORCH_DTYPES.get(element_type_text(value.type))
    return count * (dtype.itemsize if dtype is not None else 1)


def _is_random(op: Operation) -> bool:
    return any(word in op.name for word in _RANDOM_WORDS)


class _Partition:
    def __init__(self, function: Operation, recompute: bool) -> None:
        self.function = function
        self.recompute = recompute
        self.block = function.regions[0].blocks[0]
        self.return_op = terminator(self.block)
        self.ops = [op.operation for op in self.block.operations][:-1]
        self.position = {op: index for index, op in enumerate(self.ops)}
        types = function_type(function)
        self.arg_attrs = _attr_dicts(function, "arg_attrs", len(types.inputs))
        self.res_attrs = _attr_dicts(function, "res_attrs", len(types.results))
        self.tangents = [i for i, attrs in enumerate(self.arg_attrs) if contract.TANGENT in attrs]
        results = list(self.return_op.operands)
        self.gradient_results = [i for i, attrs in enumerate(self.res_attrs) if contract.GRADIENT_OF in attrs]
        self.forward_results = [i for i in range(len(results)) if i not in self.gradient_results]
        self.results = results
        self.written_arguments = {
            _int(attrs[contract.WRITTEN_INPUT]) for attrs in self.res_attrs if contract.WRITTEN_INPUT in attrs
        }

    # -- dataflow ---------------------------------------------------------------

    def _defining_op(self, value) -> Operation | None:
        """The top-level op of the function body defining `value` (None for arguments)."""
        owner = value.owner
        if isinstance(owner, Block):
            return None
        return owner.operation

    def _operands(self, op: Operation) -> list:
        """Values `op` reads, including those its regions read from outside."""
        values = list(op.operands)
        for nested in walk(op):
            values.extend(nested.operation.operands)
        return [v for v in values if self._is_outer(v)]

    def _is_outer(self, value) -> bool:
        owner = value.owner
        if isinstance(owner, Block):
            return owner == self.block
        return owner.operation.parent == self.function

    def _closure(self, values: list) -> set[Operation]:
        """The ops that compute `values`."""
        needed: set[Operation] = set()
        stack = [op for op in (self._defining_op(v) for v in values) if op is not None]
        while stack:
            op = stack.pop()
            if op in needed:
                continue
            needed.add(op)
            stack.extend(d for d in (self._defining_op(v) for v in self._operands(op)) if d is not None)
        return needed

    def _tangent_dependent(self) -> set[Operation]:
        tangent_values = {self.block.arguments[i] for i in self.tangents}
        dependent: set[Operation] = set()
        for op in self.ops:
            if any(v in tangent_values or self._defining_op(v) in dependent for v in self._operands(op)):
                dependent.add(op)
        return dependent

    # -- the split ----------------------------------------------------------------

    def run(self) -> None:
        tangent_values = {self.block.arguments[i] for i in self.tangents}
        dependent = self._tangent_dependent()
        forward = self._closure([self.results[i] for i in self.forward_results])
        for index in self.forward_results:
            value = self.results[index]
            if value in tangent_values or self._defining_op(value) in dependent:
                raise _JointError(self.return_op, f"result {index} is not a gradient but depends on a tangent")
        gradient_ops = self._closure([self.results[i] for i in self.gradient_results])
        # Rule 1: random ops (and what they need) stay in the forward.
        for op in gradient_ops - forward - dependent:
            if _is_random(op):
                forward |= self._closure(list(op.results))
        backward = gradient_ops - forward
        saved, backward = self._saved_values(forward, backward)
        with self.function.location:
            self._build_backward(backward, saved)
            self._shrink_to_forward(forward)

    def _cloned(self, op: Operation) -> bool:
        """Ops cloned into the backward rather than saved: constants and
        non-tensor values (never a random op: its draw is the forward's)."""
        if _is_random(op):
            return False
        return not any(_is_tensor(v) for v in self._operands(op)) or not any(_is_tensor(r) for r in op.results)

    def _saved_values(self, forward: set[Operation], backward: set[Operation]) -> tuple[list, set[Operation]]:
        """Rules 2 and 3: the forward values the backward takes as arguments,
        and the backward's ops (grown by clones and recomputed ops)."""
        backward = set(backward)
        while True:
            needed = self._inputs_of(backward)
            clones = {self._defining_op(v) for v in needed if self._defining_op(v) is not None}
            clones = {op for op in clones if self._cloned(op)}
            if clones:
                backward |= clones
                continue
            saved = [v for v in needed if self._is_tensor_to_save(v, forward)]
            if not self.recompute:
                return self._ordered(saved), backward
            recomputed = self._recomputations(saved)
            if not recomputed:
                return self._ordered(saved), backward
            backward |= recomputed

    def _inputs_of(self, backward: set[Operation]) -> list:
        """Values the backward's ops (and its results) read that it does not compute itself."""
        values: dict[object, None] = {}  # in first-read order
        for op in self.ops:
            if op in backward:
                values.update(dict.fromkeys(self._operands(op)))
        values.update(dict.fromkeys(self.results[i] for i in self.gradient_results))
        tangent_values = {self.block.arguments[i] for i in self.tangents}
        return [v for v in values if v not in tangent_values and self._defining_op(v) not in backward]

    def _is_tensor_to_save(self, value, forward: set[Operation]) -> bool:
        op = self._defining_op(value)
        return op is None or (op in forward and _is_tensor(value))

    def _recomputations(self, saved: list) -> set[Operation]:
        """Rule 3: every saved value recomputable from what the backward has
        already (no extra bytes), or else the one that saves most bytes."""
        saved_set = set(saved)
        free, best = set(), None
        for value in saved:
            op = self._defining_op(value)
            if op is None or op.name not in RECOMPUTABLE or len(op.results) != 1:
                continue
            extra = sum(
                _bytes(v)
                for v in self._operands(op)
                if _is_tensor(v) and v not in saved_set and not self._argument_by_reference(v)
            )
            if extra == 0:
                free.add(op)
            elif extra < _bytes(value):
                candidate = (_bytes(value) - extra, self.position[op], op)
                best = candidate if best is None or candidate[:2] > best[:2] else best
        if free:
            return free
        return {best[2]} if best is not None else set()

    def _argument_by_reference(self, value) -> bool:
        return self._defining_op(value) is None and value.arg_number not in self.written_arguments

    def _ordered(self, values: list) -> list:
        """Arguments first (in order), then values in the order the body defines them."""
        arguments = sorted((v for v in values if self._defining_op(v) is None), key=lambda v: v.arg_number)
        defined = [v for v in values if self._defining_op(v) is not None]
        defined.sort(key=lambda v: self.position[self._defining_op(v)])
        return arguments + defined

    def _output_numbers(self) -> dict[object, int]:
        """Program output number (as the runtime counts them) of each value a
        plain forward output returns, the first where several do."""
        numbers: dict[object, int] = {}
        count = 0
        for index in self.forward_results:
            attrs = self.res_attrs[index]
            if any(k in attrs for k in (contract.WRITTEN_INPUT, contract.INDEX_CHECKS, contract.ALIAS_BASE)):
                continue
            if not any(k in attrs for k in _ALIAS_ATTRS):
                numbers.setdefault(self.results[index], count)
            count += 1
        return numbers

    def _build_backward(self, backward: set[Operation], saved: list) -> None:
        outputs = self._output_numbers()
        # The caller's tensor of a written input holds its final value once the forward ran.
        final_values = {
            self.results[i]: _int(self.res_attrs[i][contract.WRITTEN_INPUT])
            for i in self.forward_results
            if contract.WRITTEN_INPUT in self.res_attrs[i]
        }
        arguments = {v: v.arg_number for v in saved if self._argument_by_reference(v)}
        arguments |= {v: final_values[v] for v in saved if v in final_values and v not in arguments}
        by_reference = [v for v in saved if v in arguments]
        as_outputs = [v for v in saved if v not in arguments and v in outputs]
        kept = [v for v in saved if v not in arguments and v not in outputs]
        self.first_saved_result, self.saved_results = len(by_reference) + len(as_outputs), kept
        inputs = [*by_reference, *as_outputs, *kept]
        tangent_values = [self.block.arguments[i] for i in self.tangents]
        gradients = [self.results[i] for i in self.gradient_results]
        with InsertionPoint(self.function.parent.regions[0].blocks[0]):
            backward_function = func.FuncOp(
                "backward",
                FunctionType.get([v.type for v in inputs + tangent_values], [v.type for v in gradients]),
            )
        body = backward_function.add_entry_block()
        mapping = dict(zip(inputs + tangent_values, body.arguments))
        with InsertionPoint(body):
            for op in self.ops:
                if op in backward:
                    clone = op.clone()
                    _remap(clone.operation, mapping)
                    for old, new in zip(op.results, clone.operation.results):
                        mapping[old] = new
            with self.return_op.location:
                func.ReturnOp([mapping[v] for v in gradients])
        arg_attrs = [
            DictAttr.get({contract.SAVED_ARGUMENT: i64_attr(self._forward_index(arguments[v]))}) for v in by_reference
        ]
        arg_attrs += [DictAttr.get({contract.SAVED_OUTPUT: i64_attr(outputs[v])}) for v in as_outputs]
        arg_attrs += [DictAttr.get({}) for _ in kept]
        arg_attrs += [DictAttr.get({contract.TANGENT: self.arg_attrs[i][contract.TANGENT]}) for i in self.tangents]
        operation = backward_function.operation
        operation.attributes["arg_attrs"] = ArrayAttr.get(arg_attrs)
        res_attrs = []
        for index in self.gradient_results:
            entries = {k: v for k, v in self.res_attrs[index].items() if k not in _ALIAS_ATTRS}
            res_attrs.append(DictAttr.get(entries))
        operation.attributes["res_attrs"] = ArrayAttr.get(res_attrs)
        operation.attributes[contract.RESULT_ELEMENT_TYPES] = element_types_attr([v.type for v in gradients])
        operation.move_after(self.function)

    def _forward_index(self, joint_argument: int) -> int:
        """The forward's index of a joint argument (the tangents are gone)."""
        return joint_argument - sum(1 for t in self.tangents if t < joint_argument)

    def _shrink_to_forward(self, forward: set[Operation]) -> None:
        function, block = self.function, self.block
        results = [self.results[i] for i in self.forward_results] + self.saved_results
        res_attrs = []
        for index in self.forward_results:
            entries = dict(self.res_attrs[index])
            for name in (contract.WRITTEN_INPUT, contract.ALIASES_INPUT):
                if name in entries:
                    entries[name] = i64_attr(self._forward_index(_int(entries[name])))
            res_attrs.append(DictAttr.get(entries))
        res_attrs += [
            DictAttr.get({contract.SAVED: i64_attr(self.first_saved_result + k)})
            for k in range(len(self.saved_results))
        ]
        set_results(function, self.return_op, results)
        for op in reversed(self.ops):
            if op not in forward:
                op.erase()
        for index in reversed(self.tangents):
            block.erase_argument(index)
        arg_attrs = [DictAttr.get(a) for i, a in enumerate(self.arg_attrs) if i not in self.tangents]
        function.attributes["arg_attrs"] = ArrayAttr.get(arg_attrs)
        function.attributes["res_attrs"] = ArrayAttr.get(res_attrs)
        function.attributes["function_type"] = TypeAttr.get(
            FunctionType.get([a.type for a in block.arguments], [v.type for v in results])
        )
        function.attributes["sym_name"] = StringAttr.get("forward")
        function.attributes[contract.RESULT_ELEMENT_TYPES] = element_types_attr([v.type for v in results])


def _int(attr) -> int:
    return IntegerAttr(attr).value


def _remap(op: Operation, mapping: dict) -> None:
    """Points the operands of a cloned op (and of ops in its regions) at their backward values."""
    for index, value in enumerate(op.operands):
        if value in mapping:
            op.operands[index] = mapping[value]
    for nested in walk(op):
        nested_op = nested.operation
        for index, value in enumerate(nested_op.operands):
            if value in mapping:
                nested_op.operands[index] = mapping[value]
