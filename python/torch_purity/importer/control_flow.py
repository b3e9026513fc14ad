"""`torch.cond` and `while_loop` -> `torch.prim.If` and `torch.prim.Loop`.

make_fx records PyTorch's control-flow operators as higher-order operators
whose branches and bodies are subgraphs (`get_attr` GraphModules):
`cond(pred, true_graph, false_graph, operands)` and
`while_loop(cond_graph, body_graph, carried, additional)`. They are imported
inline, as regions, so that every pass sees the branch and loop bodies (no
private function calls to inline first):

- `cond` is `torch.prim.If` on `torch.aten.Bool.Tensor(pred)`, one region per
  branch ending in `torch.prim.If.yield`;
- `while_loop` is the while-like form of `torch.prim.Loop` (trip count
  INT64_MAX, torch-mlir lowers it to `scf.while`): the condition subgraph is
  imported once before the loop (its first test) and again at the end of the
  body, on the body's results, for `torch.prim.Loop.condition`.

Operands handed to a subgraph are value snapshots (`torch.copy.to_vtensor`
of a written or aliased tensor) taken where the operator runs: PyTorch
forbids a branch or body to write its inputs or to return an alias of
them, so a branch sees exactly the value the tensor has at that point, and
writes before and after the operator stay outside the regions.
Inside a subgraph, a tensor it creates and writes (`t = x.clone(); t.mul_(2)`)
is a non-value tensor of the region, typed by the subgraph's own alias
analysis (`AliasesOfGraphs`); purity-functionalize removes those writes
region by region. Results are value tensors, made non-value (`copy.to_tensor`)
where the outer graph writes or aliases them afterwards.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence

import torch
import torch.fx as fx
from torch_mlir.ir import Block, InsertionPoint, IntegerAttr, IntegerType, Location, Operation, Value
from torch_mlir.ir import Type as IrType

from ..errors import PurityError
from ..ir_helpers.queries import is_non_value, non_value_type, value_type
from .locations import source_of


def nodes_with_subgraphs(gm: fx.GraphModule) -> Iterator[fx.Node]:
    """The graph's nodes and, recursively, those of the subgraphs its
    control-flow operators run."""
    for node in gm.graph.nodes:
        yield node
        if node.op == "get_attr":
            attribute = getattr(gm, node.target, None)
            if isinstance(attribute, fx.GraphModule):
                yield from nodes_with_subgraphs(attribute)


def operator_subgraph_nodes(node: fx.Node) -> Iterator[fx.Node]:
    """The nodes of the subgraphs a control-flow operator node runs (its
    `get_attr` operands), recursively."""
    root = node.graph.owning_module
    for operand in node.all_input_nodes:
        if operand.op == "get_attr":
            yield from nodes_with_subgraphs(getattr(root, operand.target))


def as_value(value: Value, loc: Location) -> Value:
    """A value snapshot of a non-value tensor (a value tensor as it is)."""
    if not is_non_value(value):
        return value
    return Operation.create("torch.copy.to_vtensor", results=[value_type(value.type)], operands=[value], loc=loc).result


def as_non_value(value: Value, loc: Location) -> Value:
    if not str(value.type).startswith("!torch.vtensor"):
        return value
    return Operation.create(
        "torch.copy.to_tensor", results=[non_value_type(value.type)], operands=[value], loc=loc
    ).result


def _refuse(node: fx.Node, reason: str) -> PurityError:
    return PurityError("import", reason, op=str(node.target.name()), source=source_of(node))


def _subgraph(node: fx.Node, attribute: fx.Node) -> fx.GraphModule:
    return getattr(node.graph.owning_module, attribute.target)


def _operand_values(
    importer, loc: Location, node: fx.Node, operands: Sequence[object], numbers: bool = True
) -> list[Value]:
    """Value snapshots of tensor operands; numbers (a size Dynamo passes to
    a branch, a Python int) as Torch scalars, where `numbers` allows them."""
    values = []
    for operand in operands:
        value = operand.meta.get("val") if isinstance(operand, fx.Node) else operand
        if isinstance(value, torch.Tensor):
            values.append(as_value(importer.resolve_node_value(operand), loc))
        elif numbers and isinstance(value, (int, float, bool, torch.SymInt, torch.SymFloat, torch.SymBool)):
            values.append(importer._import_argument(loc, operand))
        else:
            kind = "a tensor or a number" if numbers else "a tensor (a 0-d tensor for a number)"
            raise _refuse(node, f"'{node.target.name()}' operand {operand!r} is not {kind}")
    return values


def _import_subgraph(importer, gm: fx.GraphModule, block: Block, inputs: Sequence[Value]) -> list[Value]:
    """Imports `gm`'s nodes at the end of `block`, its placeholders bound to
    `inputs`; returns its outputs as value tensors."""
    nested = type(importer)(importer.fx_importer, importer._c, importer._cc, block)
    nested.aliases = importer.aliases
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    output = next(n for n in gm.graph.nodes if n.op == "output")
    with InsertionPoint(block):
        for placeholder, value in zip(placeholders, inputs, strict=True):
            loc = Location.unknown()
            nested.bind_node_value(
                placeholder, as_non_value(value, loc) if nested.aliases.is_non_value(placeholder) else value
            )
    nested.import_nodes(gm.graph.nodes, skip_placeholders_outputs=True)
    results = output.args[0] if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    with InsertionPoint(block):
        values = []
        for result in results:
            if not isinstance(result, fx.Node) or not isinstance(result.meta.get("val"), torch.Tensor):
                raise PurityError("import", f"a control-flow subgraph returns {result!r}, not a tensor")
            values.append(as_value(nested.resolve_node_value(result), Location.unknown()))
    return values


def _tensor_results(node: fx.Node) -> list[torch.Tensor]:
    results = node.meta["val"]
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    if not all(isinstance(r, torch.Tensor) for r in results):
        raise _refuse(node, f"'{node.target.name()}' returning non-tensors is not supported: return 0-d tensors")
    return results


def _bind_results(importer, loc: Location, node: fx.Node, operation: Operation) -> None:
    """Binds result k to the node's element k; non-value where the outer graph
    writes or aliases that element afterwards."""
    importer._multi_result_nodes.add(node)
    non_value_elements = {
        user.args[1] for user in node.users if user.target is operator.getitem and importer.aliases.is_non_value(user)
    }
    for index, result in enumerate(operation.results):
        value = as_non_value(result, loc) if index in non_value_elements else result
        importer.bind_node_value(node, value, index)


def _to_bool(value: Value, loc: Location) -> Value:
    return Operation.create(
        "torch.aten.Bool.Tensor", results=[IrType.parse("!torch.bool", value.context)], operands=[value], loc=loc
    ).result


def import_cond(importer, loc: Location, node: fx.Node) -> None:
    predicate, true_graph, false_graph, operands = node.args
    if not isinstance(predicate, fx.Node) or not isinstance(predicate.meta.get("val"), torch.Tensor):
        raise _refuse(node, "torch.cond with a predicate that is not a tensor is not supported: pass a bool tensor")
    result_types = [importer._cc.value_info_to_type(r) for r in _tensor_results(node)]
    with InsertionPoint(importer._b):
        condition = _to_bool(as_value(importer.resolve_node_value(predicate), loc), loc)
        inputs = _operand_values(importer, loc, node, operands)
        branch = Operation.create("torch.prim.If", results=result_types, operands=[condition], regions=2, loc=loc)
    for region, graph in zip(branch.regions, (true_graph, false_graph), strict=True):
        block = Block.create_at_start(region, [])
        yielded = _import_subgraph(importer, _subgraph(node, graph), block, inputs)
        with InsertionPoint(block):
            Operation.create("torch.prim.If.yield", results=[], operands=yielded, loc=loc)
    with InsertionPoint(importer._b):
        _bind_results(importer, loc, node, branch)


def import_while_loop(importer, loc: Location, node: fx.Node) -> None:
    condition_graph, body_graph, carried, additional = node.args
    condition_gm, body_gm = _subgraph(node, condition_graph), _subgraph(node, body_graph)
    result_types = [importer._cc.value_info_to_type(r) for r in _tensor_results(node)]
    with InsertionPoint(importer._b):
        initial = _operand_values(importer, loc, node, carried, numbers=False)
        extra = _operand_values(importer, loc, node, additional)
    first_test = _import_subgraph(importer, condition_gm, importer._b, [*initial, *extra])
    with InsertionPoint(importer._b):
        int_type = IrType.parse("!torch.int", importer._c)
        trip_count = Operation.create(
            "torch.constant.int",
            results=[int_type],
            attributes={"value": IntegerAttr.get(IntegerType.get_signless(64), torch.iinfo(torch.int64).max)},
            loc=loc,
        ).result
        loop = Operation.create(
            "torch.prim.Loop",
            results=result_types,
            operands=[trip_count, _to_bool(first_test[0], loc), *initial],
            regions=1,
            loc=loc,
        )
    with loc:
        block = Block.create_at_start(loop.regions[0], [int_type, *result_types])
    next_values = _import_subgraph(importer, body_gm, block, [*block.arguments[1:], *extra])
    test = _import_subgraph(importer, condition_gm, block, [*next_values, *extra])
    with InsertionPoint(block):
        Operation.create(
            "torch.prim.Loop.condition", results=[], operands=[_to_bool(test[0], loc), *next_values], loc=loc
        )
    with InsertionPoint(importer._b):
        _bind_results(importer, loc, node, loop)


IMPORTERS: dict[str, Callable] = {"cond": import_cond, "while_loop": import_while_loop}
