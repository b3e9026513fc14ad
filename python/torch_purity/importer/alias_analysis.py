"""Which FX nodes share storage, and which storages are written.

The analysis reads only ATen schemas' alias annotations, so it needs no real
or fake storage: `Tensor(a) self -> Tensor(a)` is a view, `Tensor(a!) self`
a write (data or metadata), `Tensor(a -> *) self -> Tensor(a)[]` a multi-output
view whose list elements, unpacked by `getitem`, alias the input.

Inputs that share storage at the call (the same tensor twice, a tensor and one
of its rows) are declared by the caller and start in one class.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass

import torch
import torch.fx as fx


class _UnionFind:
    def __init__(self) -> None:
        self._parent: dict[fx.Node, fx.Node] = {}

    def find(self, node: fx.Node) -> fx.Node:
        parent = self._parent.setdefault(node, node)
        if parent is node:
            return node
        root = self.find(parent)
        self._parent[node] = root
        return root

    def union(self, a: fx.Node, b: fx.Node) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self._parent[ra] = rb


@dataclass
class AliasClasses:
    """The result: storage classes of tensor-valued nodes."""

    _classes: _UnionFind
    _class_sizes: dict[fx.Node, int]
    _written_classes: set[fx.Node]

    def is_non_value(self, node: fx.Node) -> bool:
        """True when the node's storage is written or has another alias."""
        root = self._classes.find(node)
        return root in self._written_classes or self._class_sizes.get(root, 1) > 1


def _tensor_nodes(argument: object) -> Iterable[fx.Node]:
    if isinstance(argument, fx.Node):
        yield argument
    elif isinstance(argument, (list, tuple)):
        for item in argument:
            yield from _tensor_nodes(item)


def _schema_argument_values(node: fx.Node, schema: torch.FunctionSchema):
    for index, parameter in enumerate(schema.arguments):
        if index < len(node.args):
            yield parameter, node.args[index]
        elif parameter.name in node.kwargs:
            yield parameter, node.kwargs[parameter.name]


# One walk over the graph, one branch per kind of schema annotation: splitting it
# would spread one rule over several functions.
def analyze_aliases(  # noqa: C901
    graph: fx.Graph, input_storage_groups: Iterable[Iterable[fx.Node]] = ()
) -> AliasClasses:
    classes = _UnionFind()
    written_members: list[fx.Node] = []
    view_producers: set[fx.Node] = set()

    for group in input_storage_groups:
        members = list(group)
        for other in members[1:]:
            classes.union(members[0], other)

    for node in graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem:
            source = node.args[0]
            if source in view_producers:
                classes.union(node, source)
            continue
        if not isinstance(node.target, torch._ops.OpOverload):
            continue
        schema = node.target._schema
        has_results = len(schema.returns) > 0
        for parameter, value in _schema_argument_values(node, schema):
            alias = parameter.alias_info
            if alias is None:
                continue
            for operand in _tensor_nodes(value):
                if alias.is_write:
                    written_members.append(operand)
                if has_results:
                    classes.union(node, operand)
                    view_producers.add(node)

    sizes: dict[fx.Node, int] = {}
    for node in graph.nodes:
        if node.op in ("placeholder", "call_function"):
            root = classes.find(node)
            sizes[root] = sizes.get(root, 0) + 1
    written = {classes.find(node) for node in written_members}
    # An input returned as it is aliases its output: keep it non-value so the
    # output is recorded as a view of the input.
    for node in graph.nodes:
        if node.op == "output":
            for returned in _tensor_nodes(node.args[0]):
                if returned.op == "placeholder":
                    written_or_aliased = classes.find(returned)
                    sizes[written_or_aliased] = max(sizes.get(written_or_aliased, 1), 2)
    return AliasClasses(classes, sizes, written)


class AliasesOfGraphs:
    """Alias classes of a graph and of the subgraphs its control-flow
    operators run (a `cond` branch, a `while_loop` body): each subgraph is
    analysed on its own, when first asked about, since its placeholders are
    the values the operator hands it, never storage it shares with the outer
    graph (the importer passes it value snapshots)."""

    def __init__(self, graph: fx.Graph, classes: AliasClasses) -> None:
        self._by_graph: dict[fx.Graph, AliasClasses] = {graph: classes}

    def is_non_value(self, node: fx.Node) -> bool:
        classes = self._by_graph.get(node.graph)
        if classes is None:
            classes = self._by_graph[node.graph] = analyze_aliases(node.graph)
        return classes.is_non_value(node)
