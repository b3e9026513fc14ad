"""Copies of traced graphs that the importer's rewrites may change, and the
fake mode their values were traced in (to give new nodes their `val`)."""

from __future__ import annotations

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
