"""purity-functionalize: removes mutation and aliasing from Torch IR.

Turns non-value Torch IR (`!torch.tensor` values and arguments, in-place ops,
views of non-value tensors, metadata mutations, `torch.copy.to_tensor` /
`torch.copy.to_vtensor`, `torch.overwrite.tensor.contents`) into value
semantics, in one walk over each function body:

- every non-value tensor is an alias (root, view chain): the root is a function
  argument or a fresh tensor, the chain the views taken from it;
- the walk keeps the current value of every root; a read of an alias replays
  its chain on that value; a write (in-place op, `copy_`, overwrite) computes
  the new value of the alias with the op's value-semantic variant and scatters
  it back through the chain with each view's inverse (select_scatter,
  slice_scatter, diagonal_scatter, as_strided_scatter, reshape back, inverse
  permutation, ...);
- a metadata mutation (`t_`, `transpose_`, `unsqueeze_`, `squeeze_`,
  `as_strided_`) extends the chain of the mutated tensor, not its data;
- at the end a written argument stays `!torch.tensor` and receives exactly one
  `torch.overwrite.tensor.contents` with its final value; an argument that is
  never written becomes `!torch.vtensor`.

Recorded as attributes for the runtime (names in `contract`): on an argument
whose metadata was mutated, its new `purity.new_sizes` / `purity.new_strides`
/ `purity.new_storage_offset`; on each result that is a view of an argument
of known layout, `purity.aliases_input` (argument index) with the view's
sizes, strides and storage offset; on results that are views of one
intermediate, a shared `purity.alias_group` with the same layout attributes,
and that intermediate returned too with `purity.alias_base`; with
`record-mutations=true`, `purity.mutations` on the function (a
`contract.MutationRecord` per write and metadata mutation).

Errors (at the op's location): a write through `expand`/`unfold`; an unknown
op or a region-holding op using a non-value tensor; an in-place op without a
value-semantic variant; dynamic shapes where a view's inverse needs them.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field

import torch
from torch_mlir.dialects.torch import (
    AtenAddIntOp,
    AtenAsStridedScatterOp,
    AtenBroadcastToOp,
    AtenDiagonalScatterOp,
    AtenFullOp,
    AtenIntTensorOp,
    AtenSelectScatterOp,
    AtenSliceScatterOp,
    AtenToDtypeOp,
    AtenViewOp,
    CopyToValueTensorOp,
    OverwriteTensorContentsOp,
    ValueTensorLiteralOp,
)
from torch_mlir.ir import (
    BlockArgument,
    FunctionType,
    InsertionPoint,
    IntegerAttr,
    Location,
    Operation,
    StringAttr,
    Type,
    TypeAttr,
    Value,
)

from .. import contract
from .. import ops as op_catalog
from ..contract import MutationRecord
from ..contract.ir import NEW_LAYOUT, VIEW_LAYOUT, input_layout, layout_attrs, mutations_attr
from ..ir_helpers.functions import (
    arg_attr,
    function_ops,
    i64_attr,
    set_arg_attrs,
    set_result_attrs,
    set_results,
    terminator,
)
from ..ir_helpers.queries import TypeQueries, aten_name, source_location
from ..ir_helpers.torch_values import (
    NotConstant,
    bool_constant,
    constant_of,
    int_constant,
    int_list_constant,
    int_type,
    none_constant,
    static_sizes,
)
from ..ir_helpers.types import TORCH_SCALAR_TYPE_CODES, element_type_text, with_element_type
from ..layout import Layout, inverse_permutation
from ..views import VIEWS, Inverse, Writable
from .base import LocatedPassError, ModulePass

# ----------------------------------------------------------------------------
# Aliases
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewStep:
    """One view applied to a value: `op_name(value, *operands) -> result_type`."""

    op_name: str
    operands: tuple[Value, ...]
    result_type: Type  # value-semantic
    location: Location

    def apply(self, value: Value) -> Value:
        return Operation.create(
            self.op_name, results=[self.result_type], operands=[value, *self.operands], loc=self.location
        ).result


@dataclass
class Root:
    """A storage: a function argument or a fresh tensor, and its current value."""

    current: Value
    argument_index: int | None = None
    written: bool = False
    id: int = 0


@dataclass
class TensorObject:
    """What a non-value SSA value denotes: a root seen through a chain of views.

    In-place ops return the same object as their operand, so a metadata
    mutation through any of its SSA names is seen through all of them."""

    root: Root
    chain: list[ViewStep] = field(default_factory=list)


class FunctionalizeError(LocatedPassError):
    pass


# ----------------------------------------------------------------------------
# The pass
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Functionalize(ModulePass):
    """Removes mutation and aliasing: non-value Torch IR to value semantics, one edge overwrite per written argument."""

    name = "purity-functionalize"

    # Record every write and metadata mutation as `purity.mutations` on the
    # function (for reports): a contract.MutationRecord per write.
    record_mutations: bool = False

    def apply(self, module: Operation) -> None:
        # The walk allocates many short-lived, acyclic Python objects; with a
        # large traced program alive, cyclic-GC sweeps would dominate.
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._apply(module)
        finally:
            if collecting:
                gc.enable()

    def _apply(self, module: Operation) -> None:
        self.for_each(function_ops(module), lambda function: _FunctionRewriter(function, self.record_mutations).run())


class _FunctionRewriter:
    def __init__(self, function: Operation, record_mutations: bool = False) -> None:
        self.function = function
        self.mutations: list[MutationRecord] | None = [] if record_mutations else None
        self.types = TypeQueries()
        self.block = function.regions[0].blocks[0]
        self.objects: dict[Value, TensorObject] = {}
        self.lists: dict[Value, tuple[TensorObject, Operation]] = {}
        self.roots: list[Root] = []
        self.erase: list[Operation] = []
        self.argument_reads: dict[int, Operation] = {}
        self.returned: list[TensorObject | None] = []
        self.fresh_results: list[Value] = []
        self.regenerated_inputs: dict[int, tuple[TensorObject, list[ViewStep]]] = {}
        # Per enclosing control-flow region: how many roots existed when it was entered.
        self.region_floors: list[int] = []

    # -- state -----------------------------------------------------------

    def new_root(self, current: Value, argument_index: int | None = None) -> Root:
        root = Root(current, argument_index, id=len(self.roots))
        self.roots.append(root)
        return root

    def object_of(self, value: Value, user: Operation) -> TensorObject:
        found = self.objects.get(value)
        if found is None:
            raise FunctionalizeError(
                user.location, f"'{user.name}' uses a non-value tensor whose origin is not modelled"
            )
        return found

    def read(self, tensor: TensorObject) -> Value:
        value = tensor.root.current
        for step in tensor.chain:
            value = step.apply(value)
        return value

    def record(self, kind: str, tensor: TensorObject, at: Operation) -> None:
        if self.mutations is None:
            return
        root = tensor.root
        target = f"argument {root.argument_index}" if root.argument_index is not None else "an intermediate"
        op = aten_name(at).removeprefix("torch.")
        where = source_location(at.location) or ""
        self.mutations.append(MutationRecord(kind, op, where, target, _describe_chain(self.function, tensor.chain)))

    def write(self, tensor: TensorObject, new_value: Value, at: Operation) -> None:
        self.refuse_write_from_region(tensor, at)
        self.record("write", tensor, at)
        for step in tensor.chain:
            view = VIEWS.get(step.op_name)
            # A step the table does not know is rejected by _scatter below.
            writable = Writable.ALWAYS if view is None else view.writable
            if writable is Writable.NEVER or (writable is Writable.WINDOWS_APART and not _windows_apart(step)):
                raise FunctionalizeError(
                    at.location,
                    f"a write through '{step.op_name}' would write overlapping memory; eager PyTorch rejects it too",
                )
        bases = [tensor.root.current]
        for step in tensor.chain[:-1]:
            bases.append(step.apply(bases[-1]))
        for step, base in zip(reversed(tensor.chain), reversed(bases)):
            new_value = _scatter(step, base, new_value, at, self.types)
        tensor.root.current = new_value
        tensor.root.written = True

    # -- walk --------------------------------------------------------------

    def run(self) -> None:
        entry = self.block
        original_ops = [op.operation for op in entry.operations]
        first = original_ops[0] if original_ops else None
        for index, argument in enumerate(entry.arguments):
            if not self.types.is_non_value(argument):
                continue
            with InsertionPoint(first), Location.unknown(argument.context):
                snapshot = CopyToValueTensorOp(argument, results=[self.types.value_type(argument.type)]).operation
            self.argument_reads[index] = snapshot
            self.objects[argument] = TensorObject(self.new_root(snapshot.result, index))

        for op in original_ops:
            with InsertionPoint(op), op.location:
                self.visit(op)
        self.finish()

    def visit(self, op: Operation) -> None:
        name = aten_name(op)
        uses_non_value = any(self.types.non_value_kind(v) for v in op.operands)
        produces_non_value = any(self.types.non_value_kind(r) for r in op.results)
        if any(len(r.blocks) for r in op.regions):
            self.visit_control_flow(op, name, produces_non_value)
            return
        if not uses_non_value and not produces_non_value:
            return

        view = VIEWS.get(name)
        if view is not None and not view.multi_output and not produces_non_value:
            # A view op the importer typed as a value (`_unsafe_view`, whose
            # schema claims no alias): it reads its base, like any value op.
            self.visit_value_op(op, name)
        elif view is not None and not view.multi_output and self.types.is_non_value(op.operands[0]):
            self.visit_view(op, name)
        elif view is not None and view.multi_output and self.types.is_non_value(op.operands[0]):
            # Its elements become views when the list is unpacked (visit_list_unpack).
            self.lists[op.results[0]] = (self.object_of(op.operands[0], op), op)
            self.erase.append(op)
        elif name == "torch.prim.ListUnpack" and op.operands[0] in self.lists:
            self.visit_list_unpack(op)
        elif name in op_catalog.METADATA_MUTATIONS:
            self.visit_metadata_mutation(op, name)
        elif op_catalog.is_in_place(name):
            self.visit_in_place(op, name)
        elif name == "torch.overwrite.tensor.contents":
            source = self.mapped(op.operands[0], op)
            self.write(self.object_of(op.operands[1], op), source, op)
            self.erase.append(op)
        elif name == "torch.copy.to_vtensor":
            op.results[0].replace_all_uses_with(self.read(self.object_of(op.operands[0], op)))
            self.erase.append(op)
        elif name == "torch.copy.to_tensor":
            self.objects[op.results[0]] = TensorObject(self.new_root(op.operands[0]))
            self.erase.append(op)
        elif name == "torch.tensor.literal":
            literal = ValueTensorLiteralOp(op.attributes["value"], results=[self.types.value_type(op.results[0].type)])
            self.objects[op.results[0]] = TensorObject(self.new_root(literal.result))
            self.erase.append(op)
        elif name == "func.return":
            self.visit_return(op)
        elif op.name == "torch.operator":
            raise FunctionalizeError(op.location, f"unknown op '{name}' uses a non-value tensor")
        else:
            self.visit_value_op(op, name)

    def visit_control_flow(self, op: Operation, name: str, produces_non_value: bool) -> None:
        if produces_non_value:
            raise FunctionalizeError(
                op.location, f"'{name}' returns a non-value tensor: control-flow ops return value tensors"
            )
        for index, operand in enumerate(op.operands):
            if self.types.is_non_value(operand):
                # A value snapshot whose read resolved to a fresh result not yet retyped.
                op.operands[index] = self.mapped(operand, op)
        self.visit_regions(op)

    def visit_regions(self, op: Operation) -> None:
        """A control-flow op (`torch.prim.If`, `torch.prim.Loop`): the ops of
        its regions are walked in place, in order, as ops of the function.
        Tensors a region creates are roots of their own; a region may read a
        tensor from outside (its value where the op runs) but not write one:
        a write would make the tensor's value depend on the path taken, which
        PyTorch's cond and while_loop forbid too."""
        self.region_floors.append(len(self.roots))
        try:
            for region in op.regions:
                for block in region.blocks:
                    if any(self.types.non_value_kind(a) for a in block.arguments):
                        raise FunctionalizeError(
                            op.location, f"a region of '{aten_name(op)}' takes a non-value tensor argument"
                        )
                    for inner in list(block.operations):
                        with InsertionPoint(inner), inner.location:
                            self.visit(inner)
        finally:
            self.region_floors.pop()

    def refuse_write_from_region(self, tensor: TensorObject, at: Operation) -> None:
        if self.region_floors and tensor.root.id < self.region_floors[-1]:
            raise FunctionalizeError(
                at.location,
                f"'{aten_name(at)}' inside a control-flow region writes a tensor created outside that region, "
                "which is not supported (PyTorch's cond and while_loop forbid it too): write a clone, and return it",
            )

    def mapped(self, value: Value, user: Operation) -> Value:
        return self.read(self.object_of(value, user)) if self.types.is_non_value(value) else value

    def visit_value_op(self, op: Operation, name: str) -> None:
        """A value-semantic op: reads its operands; a non-value result is a fresh root."""
        for index, operand in enumerate(op.operands):
            if self.types.is_non_value(operand):
                op.operands[index] = self.mapped(operand, op)
            elif self.types.non_value_kind(operand) == "list":
                raise FunctionalizeError(
                    op.location, f"'{name}' takes a list of non-value tensors, which is not supported"
                )
        for result in op.results:
            if self.types.is_non_value(result):
                # Retyped in finish(): until then the type marks later uses as aliases.
                self.fresh_results.append(result)
                self.objects[result] = TensorObject(self.new_root(result))
            elif self.types.non_value_kind(result) == "list":
                result.set_type(Type.parse("!torch.list<vtensor>", result.context))

    def step_operands(self, op: Operation) -> tuple[Value, ...]:
        """A view's operands after its base, each non-value tensor among them
        (`expand_as`'s other, `narrow.Tensor`'s start) read now: the op that
        made it is erased at the end, and the step outlives it."""
        return tuple(
            self.read(self.object_of(operand, op)) if self.types.is_non_value(operand) else operand
            for operand in op.operands[1:]
        )

    def visit_view(self, op: Operation, name: str) -> None:
        base = self.object_of(op.operands[0], op)
        step = ViewStep(name, self.step_operands(op), self.types.value_type(op.results[0].type), op.location)
        view = TensorObject(base.root, self.extended_chain(base, step, op))
        self.objects[op.results[0]] = view
        if contract.REGENERATES_INPUT in op.attributes:
            # An input regenerated from a synthetic base: its metadata
            # mutations are reported for that input.
            member = IntegerAttr(op.attributes[contract.REGENERATES_INPUT]).value
            self.regenerated_inputs[member] = (view, view.chain)
        self.erase.append(op)

    def extended_chain(self, base: TensorObject, step: ViewStep, at: Operation) -> list[ViewStep]:
        """`base.chain + [step]`; but `as_strided` addresses the storage, not
        the view it is applied to, so after a view that does not start at the
        storage's first element contiguously it replaces the chain."""
        if step.op_name != "torch.aten.as_strided" or not base.chain:
            if step.op_name == "torch.aten.as_strided":
                self.require_contiguous_root(base.root, at)
            return base.chain + [step]
        prefix = _geometry(self.function, base.root, base.chain)
        if prefix is not None and prefix.is_contiguous_from_start():
            return base.chain + [step]
        self.require_contiguous_root(base.root, at)
        size, stride, storage_offset = step.operands
        if str(storage_offset.type) == "!torch.none":
            # Without an offset, as_strided starts where the view it is
            # applied to starts, not at the storage's first element.
            if prefix is None:
                raise FunctionalizeError(at.location, "as_strided without an offset on a view of non-constant geometry")
            step = ViewStep(step.op_name, (size, stride, int_constant(prefix.offset)), step.result_type, step.location)
        return [step]

    def require_contiguous_root(self, root: Root, at: Operation) -> None:
        geometry = _root_geometry(self.function, root)
        if geometry is None or not geometry.is_contiguous_from_start():
            raise FunctionalizeError(
                at.location,
                "as_strided on a tensor whose storage is not laid out contiguously from its first element "
                "(a non-contiguous input or one with a storage offset) is not supported",
            )

    def visit_list_unpack(self, op: Operation) -> None:
        """Each element of a multi-output view becomes the single view its
        table entry names: consecutive slices along the dimension (their
        lengths read from the element types), or one select per index."""
        base, producer = self.lists[op.operands[0]]
        view = VIEWS[aten_name(producer)]
        try:
            dim = constant_of(producer.operands[view.dim_operand])
        except NotConstant:
            raise FunctionalizeError(producer.location, "a multi-output view with a non-constant dimension") from None
        input_sizes = static_sizes(producer.operands[0].type)
        if input_sizes is None:
            raise FunctionalizeError(producer.location, "a multi-output view of a tensor with dynamic shape")
        dim = dim + len(input_sizes) if dim < 0 else dim
        start = 0
        for index, result in enumerate(op.results):
            result_type = self.types.value_type(result.type)
            if view.inverse is Inverse.SELECT_SCATTER:  # the pieces are selects
                operands = (int_constant(dim), int_constant(index))
            else:
                length = static_sizes(result.type)[dim]
                operands = (int_constant(dim), int_constant(start), int_constant(start + length), int_constant(1))
                start += length
            step = ViewStep(view.piece, operands, result_type, op.location)
            self.objects[result] = TensorObject(base.root, base.chain + [step])
        self.erase.append(op)

    def visit_metadata_mutation(self, op: Operation, name: str) -> None:
        tensor = self.object_of(op.operands[0], op)
        self.refuse_write_from_region(tensor, op)
        view_name = op_catalog.METADATA_MUTATIONS[name]
        step = ViewStep(view_name, self.step_operands(op), self.types.value_type(op.results[0].type), op.location)
        tensor.chain = self.extended_chain(tensor, step, op)
        self.record("metadata", tensor, op)
        self.objects[op.results[0]] = tensor
        self.erase.append(op)

    def visit_in_place(self, op: Operation, name: str) -> None:
        target = self.object_of(op.operands[0], op)
        if op.results and op.results[0].type != op.operands[0].type:
            raise FunctionalizeError(
                op.location,
                f"in-place op '{name}' changes the shape or dtype of the tensor it writes, which is not supported",
            )
        functional = op_catalog.functional_variant(name, op.context)
        if functional is None:
            raise FunctionalizeError(
                op.location, f"in-place op '{name}' has no value-semantic variant in the Torch dialect"
            )
        written_type = self.types.value_type(op.operands[0].type)
        # What copy_, fill_ and zero_ write does not depend on the old contents:
        # computing it without reading the tensor keeps a row write a pure
        # insert into it. (It also kept torch-mlir's fill lowering, a generic
        # reading its input and yielding a constant, away from
        # IREE-WORKAROUND(uniform-reduction-input): `x.fill_(3);
        # x.copy_(x.sum())` had left x at 3.)
        if name in ("torch.aten.copy_", "torch.aten.fill_.Tensor"):
            overwritten = _copied_value(self.mapped(op.operands[1], op), written_type, op.location)
        elif name in ("torch.aten.fill_.Scalar", "torch.aten.zero_"):
            value = op.operands[1] if name == "torch.aten.fill_.Scalar" else int_constant(0)
            overwritten = _filled_value(value, written_type, op.location)
        else:
            overwritten = None
        if overwritten is not None:
            self.write(target, overwritten, op)
            for result in op.results:
                self.objects[result] = target
            self.erase.append(op)
            return
        operands = [self.read(target)] + [self.mapped(v, op) for v in op.operands[1:]]
        if functional.split(".")[2] in op_catalog.BOOLEAN_RESULT_OPS:
            # `ge` computes booleans; `ge_` stores them in the tensor's own dtype.
            compared = Operation.create(
                functional, results=[with_element_type(written_type, "i1")], operands=operands, loc=op.location
            ).result
            new_value = _convert_element_type(compared, written_type, op.location)
        else:
            new_value = Operation.create(functional, results=[written_type], operands=operands, loc=op.location).result
        self.write(target, new_value, op)
        for result in op.results:
            self.objects[result] = target
        self.erase.append(op)

    def visit_return(self, op: Operation) -> None:
        for index, operand in enumerate(op.operands):
            if str(operand.type) == "!torch.list<tensor>":
                # Its producer (a multi-output view) is erased at the end.
                raise LocatedPassError(op.location, "returning a list of views (unpack it first) is not supported")
            if self.types.is_non_value(operand):
                tensor = self.object_of(operand, op)
                self.returned.append(TensorObject(tensor.root, list(tensor.chain)))
                op.operands[index] = self.read(tensor)
            else:
                self.returned.append(None)

    # -- the edge ----------------------------------------------------------

    def finish(self) -> None:
        context = self.function.context
        return_op = terminator(self.block)
        if not self.returned:
            self.returned = [None] * len(return_op.operands)
        argument_roots = {root.argument_index: root for root in self.roots if root.argument_index is not None}
        # Every overwrite first: a final value may be another argument's
        # unchanged read (`dst.copy_(src)`), which the second loop erases.
        for index in self.argument_reads:
            if argument_roots[index].written:
                with InsertionPoint(return_op), return_op.location:
                    OverwriteTensorContentsOp(argument_roots[index].current, self.block.arguments[index])
        for index, snapshot in self.argument_reads.items():
            if not argument_roots[index].written:
                argument = self.block.arguments[index]
                argument.set_type(self.types.value_type(argument.type))
                snapshot.results[0].replace_all_uses_with(argument)
                snapshot.erase()
        for op in reversed(self.erase):
            user = next((use.owner for result in op.results for use in result.uses), None)
            if user is not None:
                # Erasing it would leave a dangling use (a crash of the process).
                raise FunctionalizeError(
                    op.location,
                    f"internal error: '{aten_name(op)}' is replaced, but '{aten_name(user)}' still uses its result",
                )
            op.erase()
        for result in self.fresh_results:
            result.set_type(self.types.value_type(result.type))
        new_type = FunctionType.get(
            [a.type for a in self.block.arguments], [v.type for v in return_op.operands], context=context
        )
        self.function.attributes["function_type"] = TypeAttr.get(new_type)
        self.record_metadata_mutations()
        bases = self.record_output_aliases()
        if bases:
            # Outputs viewing one intermediate: that intermediate is returned
            # too, and the runtime hands out views of it, as eager does.
            results = list(return_op.operands) + [value for value, _ in bases]
            set_results(self.function, return_op, results)
            for offset, (_, root_id) in enumerate(bases):
                set_result_attrs(
                    self.function, len(results) - len(bases) + offset, {contract.ALIAS_BASE: i64_attr(root_id)}
                )
        if self.mutations is not None:
            self.function.attributes[contract.MUTATIONS] = mutations_attr(self.mutations)

    def record_metadata_mutations(self) -> None:
        mutated: dict[int, TensorObject] = {}
        for argument in self.block.arguments:
            tensor = self.objects.get(argument)
            if tensor is not None and tensor.chain:
                mutated[argument.arg_number] = tensor
        for member, (tensor, initial_chain) in self.regenerated_inputs.items():
            if tensor.chain is not initial_chain:
                mutated[member] = tensor
        for index, tensor in mutated.items():
            geometry = _geometry(self.function, tensor.root, tensor.chain)
            if geometry is None:
                raise FunctionalizeError(
                    tensor.chain[-1].location, "cannot compute the new sizes of a metadata-mutated argument"
                )
            set_arg_attrs(self.function, index, layout_attrs(geometry, NEW_LAYOUT))

    def record_output_aliases(self) -> list[tuple[Value, int]]:
        """Result attributes of outputs that view an argument or share an
        intermediate; returns (value, group) of each shared intermediate
        whose members' geometry is known."""
        bases: list[tuple[Value, int]] = []
        groups: dict[int, list[int]] = {}
        for index, tensor in enumerate(self.returned):
            if tensor is None:
                continue
            groups.setdefault(tensor.root.id, []).append(index)
        for root_id, outputs in groups.items():
            root = self.roots[root_id]
            all_located = True  # every output's geometry in the root is known
            for output in outputs:
                if root.argument_index is not None:
                    attrs: dict[str, object] = {contract.ALIASES_INPUT: i64_attr(root.argument_index)}
                elif len(outputs) > 1:
                    attrs = {contract.ALIAS_GROUP: i64_attr(root_id)}
                else:
                    continue
                geometry = _geometry(self.function, root, self.returned[output].chain)
                if geometry is None:
                    # A view of unknown layout (a non-constant narrow start):
                    # returned as a value of its own, as a copy, and marked so.
                    all_located = False
                    viewed = -1 if root.argument_index is None else root.argument_index
                    set_result_attrs(self.function, output, {contract.VIEW_RETURNED_AS_COPY: i64_attr(viewed)})
                    continue
                attrs.update(layout_attrs(geometry, VIEW_LAYOUT))
                set_result_attrs(self.function, output, attrs)
            if root.argument_index is None and len(outputs) > 1 and all_located:
                bases.append((root.current, root_id))
        return bases


def _copied_value(source: Value, written_type: Type, location: Location) -> Value | None:
    """`dst.copy_(source)` as a value of dst's type: source converted to dst's
    dtype and broadcast to its sizes. None when shapes are not static."""
    sizes, source_sizes = static_sizes(written_type), static_sizes(source.type)
    if sizes is None or source_sizes is None:
        return None
    element = element_type_text(written_type)
    value = source
    if element_type_text(source.type) != element:
        value = _convert_element_type(value, with_element_type(source.type, element), location)
    if source_sizes != sizes:
        value = AtenBroadcastToOp(written_type, value, int_list_constant(sizes), loc=location).result
    return value


def _filled_value(scalar: Value, written_type: Type, location: Location) -> Value | None:
    """`dst.fill_(scalar)` as a value of dst's type: `full(sizes, scalar, dtype)`."""
    sizes = static_sizes(written_type)
    if sizes is None:
        return None
    element = element_type_text(written_type)
    none, false = none_constant(), bool_constant(False)
    dtype = int_constant(TORCH_SCALAR_TYPE_CODES[element])
    return AtenFullOp(written_type, int_list_constant(sizes), scalar, dtype, none, none, false, loc=location).result


def _convert_element_type(value: Value, to_type: Type, location: Location) -> Value:
    scalar_type = TORCH_SCALAR_TYPE_CODES[element_type_text(to_type)]
    false, none = bool_constant(False), none_constant()
    return AtenToDtypeOp(to_type, value, int_constant(scalar_type), false, false, none, loc=location).result


# ----------------------------------------------------------------------------
# Inverses of views
# ----------------------------------------------------------------------------


def _scatter(step: ViewStep, base: Value, new: Value, at: Operation, types: TypeQueries) -> Value:
    """The value of `base` after writing `new` into `step(base)`: the step's
    inverse, as the view table (views.py) names it."""
    name = step.op_name
    view = VIEWS.get(name)
    # A fresh root keeps its non-value type until the walk ends.
    base_type = types.value_type(base.type) if types.is_non_value(base) else base.type
    loc = step.location

    # The inverses below that are the view's own op: the op name is data, so generic creation.
    def create(op_name: str, operands: list[Value]) -> Value:
        return Operation.create(op_name, results=[base_type], operands=operands, loc=loc).result

    # Chains hold only single views (a multi-output view's elements are
    # slices or selects), so a multi-output entry here would be a bug upstream.
    inverse = Inverse.NONE if view is None or view.multi_output else view.inverse
    match inverse:
        case Inverse.SELECT_SCATTER:
            return AtenSelectScatterOp(base_type, base, new, *step.operands, loc=loc).result
        case Inverse.SLICE_SCATTER:
            return AtenSliceScatterOp(base_type, base, new, *step.operands, loc=loc).result
        case Inverse.NARROW:
            dim, start, end = _narrow_bounds(step, base)
            return AtenSliceScatterOp(base_type, base, new, dim, start, end, int_constant(1), loc=loc).result
        case Inverse.DIAGONAL_SCATTER:
            return AtenDiagonalScatterOp(base_type, base, new, *step.operands, loc=loc).result
        case Inverse.AS_STRIDED_SCATTER:
            return AtenAsStridedScatterOp(base_type, base, new, *step.operands, loc=loc).result
        case Inverse.UNFOLD:
            return AtenAsStridedScatterOp(base_type, base, new, *_unfold_geometry(step, base_type, at), loc=loc).result
        case Inverse.RESHAPE_BACK:
            sizes = static_sizes(base_type)
            if sizes is None:
                raise FunctionalizeError(
                    at.location, f"a write through '{name}' of a tensor with dynamic shape is not supported"
                )
            return AtenViewOp(base_type, new, int_list_constant(sizes), loc=loc).result
        case Inverse.SELF_INVERSE:
            return create(name, [new, *step.operands])
        case Inverse.PERMUTE_INVERSE:
            try:
                dims = constant_of(step.operands[0])
            except NotConstant:
                raise FunctionalizeError(at.location, "a write through a permute with non-constant dims") from None
            return create(name, [new, int_list_constant(inverse_permutation(dims))])
        case Inverse.MOVEDIM_SWAPPED:
            source, destination = step.operands
            return create(name, [new, destination, source])
        case Inverse.IDENTITY:
            return new
    raise FunctionalizeError(at.location, f"a write through '{name}' is not supported")


def _narrow_bounds(step: ViewStep, base: Value) -> tuple[Value, Value, Value]:
    """(dim, start, start + length) of a narrow (`narrow.Tensor`: the start is a 0-d tensor)."""
    dim, start, length = step.operands
    loc = step.location
    if str(start.type).startswith("!torch.vtensor"):
        start = AtenIntTensorOp(start, results=[int_type(base)], loc=loc).result
    end = AtenAddIntOp(start, length, results=[int_type(base)], loc=loc).result
    return dim, start, end


def _unfold_geometry(step: ViewStep, base_type: Type, at: Operation) -> list[Value]:
    """Sizes, strides and offset of an unfold's windows in its (contiguous)
    base: with the windows apart (write() checked _windows_apart), the view is
    that as_strided."""
    sizes = static_sizes(base_type)
    if sizes is None:
        raise FunctionalizeError(at.location, "a write through unfold of a tensor with dynamic shape is not supported")
    window = torch.empty(sizes, device="meta").unfold(*[constant_of(v) for v in step.operands])
    return [int_list_constant(list(window.shape)), int_list_constant(list(window.stride())), int_constant(0)]


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


def _windows_apart(step: ViewStep) -> bool:
    """An unfold whose step is at least its window size: no element is in two
    windows, so a write through it is well defined (eager accepts it).
    Writable.WINDOWS_APART is unfold's alone, so its operands are unfold's
    (dimension, size, step)."""
    view = VIEWS.get(step.op_name)
    if view is None or view.writable is not Writable.WINDOWS_APART:
        return False
    try:
        _, size, stride = (constant_of(v) for v in step.operands)
    except NotConstant:
        return False
    return stride >= size


def _root_geometry(function: Operation, root: Root) -> Layout | None:
    """The root's layout in its storage: an argument's recorded layout, or
    contiguous from offset 0 for a fresh tensor (and an argument without attributes)."""
    if root.argument_index is not None:
        recorded = input_layout(function, root.argument_index)
        if recorded is not None:
            return recorded
        sizes = static_sizes(function.regions[0].blocks[0].arguments[root.argument_index].type)
    else:
        sizes = static_sizes(root.current.type)
    return None if sizes is None else Layout.contiguous(sizes)


def _apply_chain(layout: Layout, chain: list[ViewStep]) -> Layout | None:
    """Sizes, strides and storage offset after `chain`, computed on meta tensors."""
    storage = layout.extent()[1] if all(layout.sizes) else 1
    tensor = torch.empty(storage, device="meta").as_strided(layout.sizes, layout.strides, layout.offset)
    for step in chain:
        try:
            arguments = [constant_of(v) for v in step.operands]
        except NotConstant:
            return None
        namespace, packet, overload = (step.op_name.removeprefix("torch.").split(".") + ["default"])[:3]
        overload_op = getattr(getattr(getattr(torch.ops, namespace), packet), overload)
        # The dialect passes every argument in order; ATen takes keyword-only
        # ones (expand's `implicit`) by name.
        parameters = overload_op._schema.arguments[1:]
        positional = [a for a, p in zip(arguments, parameters) if not p.kwarg_only]
        keywords = {p.name: a for a, p in zip(arguments, parameters) if p.kwarg_only}
        tensor = overload_op(tensor, *positional, **keywords)
    return Layout.of(tensor.shape, tensor.stride(), tensor.storage_offset())


def _geometry(function: Operation, root: Root, chain: list[ViewStep]) -> Layout | None:
    root_geometry = _root_geometry(function, root)
    return None if root_geometry is None else _apply_chain(root_geometry, chain)


def _describe_chain(function: Operation, chain: list[ViewStep]) -> str:
    """`aten.select.int(0, 2) -> ...`; an operand that is an argument (a
    runtime int) by its name, one computed at run time as `?`."""

    def describe(value: Value) -> str:
        try:
            return repr(constant_of(value))
        except NotConstant:
            if isinstance(value, BlockArgument):
                name = arg_attr(function, value.arg_number, contract.INPUT_NAME)
                return StringAttr(name).value if name is not None else "?"
            return "?"

    parts = []
    for step in chain:
        arguments = ", ".join(describe(v) for v in step.operands)
        parts.append(f"{step.op_name.removeprefix('torch.')}({arguments})")
    return " -> ".join(parts)
