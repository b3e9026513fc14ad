"""`torch.compile(fn, backend="purity")`, registered when torch_purity is imported.

Dynamo hands the backend a torch-level FX graph and example inputs; the graph
is compiled like any program (make_fx to ATen without functionalization, then
the Purity pipeline), and graph breaks are Dynamo's business as with any
backend. Example inputs may be fake tensors: the first real call compiles.
"""

from __future__ import annotations

import torch
from torch._dynamo import register_backend


def purity_backend(graph_module: torch.fx.GraphModule, example_inputs, target: str = "cpu"):
    from .compiled import CompiledProgram  # torch-mlir is imported when a graph is compiled

    compiled = CompiledProgram(graph_module.forward, target=target)

    def run(*args):
        return compiled(*args)

    run.purity_compiled = compiled
    return run


def register() -> None:
    try:
        register_backend(name="purity")(purity_backend)
    except Exception as error:  # already registered by an earlier import
        if "purity" not in str(error):
            raise
