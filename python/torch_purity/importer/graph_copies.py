"""Copies of traced graphs that the importer's rewrites may change, and the
fake mode their values were traced in (to give new nodes their `val`)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.fx as fx


def copied_with_subgraphs(gm: fx.GraphModule) -> fx.GraphModule:
    """A copy of `gm` whose nodes (and subgraphs' nodes) can be changed
    without changing `gm`'s; each node's meta is a shallow copy."""
    graph = fx.Graph()
    output = graph.graph_copy(gm.graph, {})
    graph.output(output)
    copied = fx.GraphModule(gm, graph)
    copied.meta = dict(gm.meta)
    for name, child in gm.named_children():
        if isinstance(child, fx.GraphModule):
            setattr(copied, name, copied_with_subgraphs(child))
    return copied


def fake_mode_of(gm: fx.GraphModule):
    """The fake mode the graph was traced in (from its values' meta)."""
    values = [n.meta.get("val") for n in gm.graph.nodes]
    found = torch._guards.detect_fake_mode([v for v in values if isinstance(v, torch.Tensor)])
    return found if found is not None else torch._subclasses.fake_tensor.FakeTensorMode()


def rewritten_copy(
    gm: fx.GraphModule,
    selects: Callable[[fx.Node], bool],
    rewrite: Callable[[fx.GraphModule, object], None],
) -> fx.GraphModule:
    """`gm` itself when `selects` no node of it or of its control-flow
    subgraphs; else a copy with `rewrite(graph_module, fake_mode)` applied to
    it and to each of its subgraphs (the caller keeps its graph, which the
    eager fallback may run)."""
    graphs = [m for m in gm.modules() if isinstance(m, fx.GraphModule)]
    if not any(selects(n) for g in graphs for n in g.graph.nodes):
        return gm
    gm = copied_with_subgraphs(gm)
    fake_mode = fake_mode_of(gm)
    for module in gm.modules():
        if isinstance(module, fx.GraphModule):
            rewrite(module, fake_mode)
    return gm
