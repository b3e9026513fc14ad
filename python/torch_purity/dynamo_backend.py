"""`torch.compile(fn, backend="purity")`, registered when torch_purity is imported.

Dynamo hands the backend a torch-level FX graph and example inputs; the graph
is compiled like any program (make_fx to ATen without functionalization, then
the Purity pipeline), and graph breaks are Dynamo's business as with any
backend. Example inputs may be fake tensors: the first real call compiles.
Symbolic sizes Dynamo hands over (`dynamic=True`, automatic dynamic shapes)
stay dynamic: the dims of tensor inputs it made symbolic are dynamic dims of
the compiled entry, and its SymInt inputs are runtime ints.
"""

from __future__ import annotations

import torch
from torch._dynamo import register_backend

from .iree.targets import describe_targets

# torch.compile's modes choose among inductor's strategies; Purity has one
# pipeline, so each is accepted and means the same.
KNOWN_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
# torch.compile(..., options={...}) keys this backend reads.
OPTIONS = {
    "target": f"one of {describe_targets()}; default 'cpu'",
    "dump_dir": "a folder for the IR of every stage",
    "fallback": "'eager' (default: ops Purity cannot compile run in eager between compiled segments) or 'error'",
    "vendor_kernels": "True (default: large float32 convolutions on the CPU run PyTorch's oneDNN kernel) or False",
}


def purity_backend(
    graph_module: torch.fx.GraphModule,
    example_inputs,
    mode: str | None = None,
    options: dict | None = None,
    target: str = "cpu",
):
    """`torch.compile(fn, backend="purity", mode=..., options={...})`: `mode`
    is accepted and ignored (one pipeline); `options` may set `target`,
    `dump_dir`, `fallback` and `vendor_kernels`. `dynamic` and `fullgraph` are Dynamo's own and work as with
    any backend."""
    from .driver.compiled import CompiledProgram  # torch-mlir is imported when a graph is compiled
    from .errors import PurityError

    if mode not in KNOWN_MODES:
        raise PurityError(
            "compile", f"unknown torch.compile mode {mode!r} (known: {', '.join(m for m in KNOWN_MODES if m)})"
        )
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        known = "; ".join(f"{key}: {meaning}" for key, meaning in OPTIONS.items())
        raise PurityError("compile", f"unknown option(s) {', '.join(unknown)} for backend 'purity' (known: {known})")
    if not isinstance(options.get("vendor_kernels", True), bool):
        raise PurityError("compile", f"option vendor_kernels={options['vendor_kernels']!r}: expected True or False")
    compiled = CompiledProgram(
        graph_module.forward,
        target=options.get("target", target),
        dump_dir=options.get("dump_dir"),
        dynamic_dims=symbolic_dims(graph_module),
        fallback=options.get("fallback", "eager"),
        vendor_kernels=options.get("vendor_kernels", True),
    )

    def run(*args):
        return compiled(*args)

    run.purity_compiled = compiled
    return run


def symbolic_dims(graph_module: torch.fx.GraphModule) -> dict[int, tuple[int, ...]]:
    """Input -> the dims Dynamo made symbolic (`dynamic=True`, automatic
    dynamic shapes, `mark_dynamic`), read from its placeholders' example
    values: Purity keeps them dynamic. Its int inputs (sizes, positions) are
    runtime values anyway."""
    found = {}
    placeholders = [node for node in graph_module.graph.nodes if node.op == "placeholder"]
    for index, node in enumerate(placeholders):
        value = node.meta.get("example_value", node.meta.get("val"))
        if isinstance(value, torch.Tensor):
            dims = tuple(d for d, size in enumerate(value.shape) if isinstance(size, torch.SymInt))
            if dims:
                found[index] = dims
    return found


def register() -> None:
    try:
        register_backend(name="purity")(purity_backend)
    except Exception as error:  # already registered by an earlier import
        if "purity" not in str(error):
            raise
