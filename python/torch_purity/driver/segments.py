"""Eager fallback: a program split at the ops Purity cannot compile.

An op that cannot be compiled (a custom op, an ATen op without a Torch op or
decomposition, an op torch-mlir or IREE fails to lower) runs in eager between
compiled segments, as Inductor's fallback kernels do. The traced ATen graph
(mutations and views intact, `trace_to_aten`) is cut into steps, in graph
order, which is program order:

- a **compiled step** is a run of consecutive compilable nodes, made a
  GraphModule of its own and compiled by `CompiledProgram` like any program
  (its inputs are the caller's or earlier steps' tensors, so its writes to
  them land in place, as writes to a caller's inputs do);
- an **eager step** is one node that cannot be compiled, called on real tensors.

Tensors crossing a boundary are always **storage bases**: a view (`x[1:]`,
`t()`, an element of `split`) is never handed over; each step that uses it
replays its view chain on its base (a compiled step as ops of its own graph,
an eager step or the program's outputs with the eager view ops). So a write
through a view in one step is seen by every later view of that base, outputs
are real views where eager's are, and no step receives two aliases of one
storage that Purity would have to reconcile. An in-place op's result is its
written argument (the same tensor). A step made only of views computes
nothing and is skipped.

Refused (a PurityError naming the ops): a program with a metadata mutation
(`t_`, `as_strided_`; a tensor's view chain would change under it), and
training with an op that cannot be compiled. A training program is split
only at vendor kernels (driver/vendor_kernels.py), in its forward graph:
each compiled step is then a training program of its own, and autograd
joins them through the vendor ops, as it joins eager ops.
"""

from __future__ import annotations

import atexit
import contextlib
import operator
import sys
import warnings
import weakref
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.fx as fx
from torch.fx.node import map_arg

from ..checking import clone_preserving_aliasing
from ..errors import EagerFallbackWarning, PurityError
from ..importer.fx_import import unmarked_writes
from ..importer.locations import op_display_name, source_of


@dataclass(frozen=True)
class EagerOp:
    """An op of the program that runs in eager, and why."""

    op: str
    source: str | None
    reason: str
    vendor: bool = False  # run by choice (driver/vendor_kernels.py), not because it cannot be compiled

    def describe(self) -> str:
        where = f" at {self.source}" if self.source else ""
        return f"{self.op}{where}: {self.reason}"


# ----------------------------------------------------------------------------
# Aliasing between nodes, from ATen schemas
# ----------------------------------------------------------------------------


def _alias_parent(node: fx.Node) -> tuple[str, fx.Node] | None:
    """("same", written argument) for an op whose result is the tensor it
    writes (`add_`, `out=`); ("view", viewed argument) for a view or an
    element of a multi-output view; None for a fresh value."""
    if node.op != "call_function":
        return None
    if node.target is operator.getitem:
        source = node.args[0]
        if isinstance(source, fx.Node) and _alias_parent(source) is not None and _alias_parent(source)[0] == "view":
            return ("view", source)
        return None
    if not isinstance(node.target, torch._ops.OpOverload):
        return None
    schema = node.target._schema
    if len(schema.returns) != 1 or schema.returns[0].alias_info is None:
        return None  # a fresh result (an op may write an argument and return a new tensor)
    returned = set(schema.returns[0].alias_info.before_set)
    listed = not returned  # `Tensor(a)[]` (split, unbind): the elements alias `Tensor(a -> *) self`
    for index, parameter in enumerate(schema.arguments):
        alias = parameter.alias_info
        if alias is None or not (returned & set(alias.before_set) or (listed and not alias.is_write)):
            continue
        value = node.args[index] if index < len(node.args) else node.kwargs.get(parameter.name)
        if isinstance(value, fx.Node):
            if parameter.alias_info.is_write and _geometry(node) != _geometry(value):
                return None  # `resize_`, `set_`: the written tensor now has another shape, its own value
            return ("same" if parameter.alias_info.is_write else "view", value)
    return None


def _geometry(node: fx.Node) -> tuple | None:
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor):
        return None
    return tuple(value.shape), value.stride(), value.storage_offset()


def _is_pure_view(node: fx.Node) -> bool:
    parent = _alias_parent(node)
    return parent is not None and parent[0] == "view"


def _bases_needed(value: object, found: set[fx.Node], run_in_eager: set[fx.Node]) -> None:
    """The nodes from which `value` is rebuilt where it is used: its storage
    base, and what the views on the way take (a `narrow`'s start tensor).
    A view that runs in eager (in `run_in_eager`) is not replayed: it is its
    own value (a compiled step takes it as an input aliasing its base)."""

    def visit(node: fx.Node) -> fx.Node:
        parent = _alias_parent(node) if node not in run_in_eager else None
        if parent is None or node.op != "call_function":
            found.add(node)
        elif parent[0] == "same":
            visit(parent[1])
        else:
            map_arg((node.args, node.kwargs), visit)
        return node

    map_arg(value, visit)


# ----------------------------------------------------------------------------
# Steps
# ----------------------------------------------------------------------------


class StepGraph:
    """A compiled step's graph as the program to compile: run node by node
    (fx.Interpreter), so that the trace gives each node the stack trace of
    the user's line it came from (mutation reports, error locations)."""

    def __init__(self, graph_module: fx.GraphModule) -> None:
        self.graph_module = graph_module

    def __call__(self, *args: object) -> object:
        return fx.Interpreter(self.graph_module).run(*args)


@dataclass
class _CompiledStep:
    program: Callable[..., object]  # a CompiledProgram of the step's GraphModule
    inputs: list[fx.Node]  # the values it takes (bases), in order
    outputs: list[fx.Node]  # the bases it makes that later steps need
    module: fx.GraphModule
    strides: list[tuple[int, ...] | None]  # each output's strides in eager (from the trace)
    nodes: list[fx.Node] = field(default_factory=list)  # its nodes in the program's graph


@dataclass
class _EagerStep:
    node: fx.Node
    op: EagerOp


@dataclass(eq=False)
class SegmentedProgram:
    """The steps of one traced graph, and how to run them on its inputs."""

    graph: fx.GraphModule
    steps: list[_CompiledStep | _EagerStep]
    eager_ops: list[EagerOp]
    placeholders: list[fx.Node] = field(default_factory=list)
    results: list[object] = field(default_factory=list)
    # Each node's alias parent (`_alias_parent`), read once: a call replays views from it.
    parents: dict[fx.Node, tuple[str, fx.Node] | None] = field(default_factory=dict)

    run_in_eager: set[fx.Node] = field(default_factory=set)
    # Positions of the inputs a step that a later step may fail after writes (found on the first call).
    restored_inputs: list[int] | None = None

    def __post_init__(self) -> None:
        self.parents = {
            node: _alias_parent(node) if node not in self.run_in_eager else None for node in self.graph.graph.nodes
        }

    @property
    def compiled_steps(self) -> list[_CompiledStep]:
        return [s for s in self.steps if isinstance(s, _CompiledStep)]

    def run(self, inputs: Sequence[object]) -> list[object]:
        """One call: the graph's flat outputs, the inputs written as eager writes them.
        A step that fails (an index out of range found by a later step's
        check, an eager op raising) leaves the inputs as they were: the ones
        a step writes are copied first and restored. What only a compiled
        last step writes is not copied: its own checks (arguments, indices)
        fail before it writes, as a program compiled whole does (a
        BatchNorm's running statistics after a vendor convolution are not
        copied on every call); like that program, it does not undo writes
        where IREE itself fails midway."""
        if self.restored_inputs is None:
            last = self.steps[-1] if self.steps and isinstance(self.steps[-1], _CompiledStep) else None
            earlier = [n for step in self.steps if step is not last for n in _step_nodes(step)]
            self.restored_inputs = written_placeholders(self.graph, self.placeholders, earlier)
        with torch.no_grad():  # (the copies are no part of a training program's autograd graph)
            kept = [(tensor, tensor.clone()) for tensor in _sharing_storage(inputs, self.restored_inputs)]
        try:
            return self._run(inputs)
        except BaseException:
            with torch.no_grad():
                for tensor, copy in kept:
                    if tensor.shape == copy.shape:
                        tensor.copy_(copy)
            raise

    def _run(self, inputs: Sequence[object]) -> list[object]:
        values: dict[fx.Node, object] = dict(zip(self.placeholders, inputs, strict=True))
        rebuild = _Rebuilder(self.graph, values, self.parents)
        for step in self.steps:
            if isinstance(step, _EagerStep):
                node = step.node
                args, kwargs = map_arg((node.args, node.kwargs), rebuild)
                values[node] = node.target(*args, **kwargs)
                continue
            results = step.program(*[_without_lazy_bits(rebuild(n)) for n in step.inputs])
            results = results if isinstance(results, tuple) else (results,)
            for node, result, strides in zip(step.outputs, results, step.strides, strict=True):
                values[node] = _with_strides(result, strides)
        return [rebuild(r) if isinstance(r, fx.Node) else r for r in self.results]


def _step_nodes(step: _CompiledStep | _EagerStep) -> list[fx.Node]:
    return step.nodes if isinstance(step, _CompiledStep) else [step.node]


def written_placeholders(
    graph: fx.GraphModule, placeholders: list[fx.Node], nodes: Sequence[fx.Node] | None = None
) -> list[int]:
    """Positions of the placeholders whose storage an op of the graph (of
    `nodes`, where given) writes (an argument its schema marks written, or
    one it writes unmarked: `fx_import.unmarked_writes`; followed through
    views to its base, views made by eager ops included: a write through an
    eager `as_strided` of an input writes that input)."""
    written: set[fx.Node] = set()
    for node in graph.graph.nodes if nodes is None else nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        marked = [
            node.args[index] if index < len(node.args) else node.kwargs.get(parameter.name)
            for index, parameter in enumerate(node.target._schema.arguments)
            if parameter.alias_info is not None and parameter.alias_info.is_write
        ]
        for value in [*marked, *unmarked_writes(node)]:
            while isinstance(value, fx.Node) and (parent := _alias_parent(value)) is not None:
                value = parent[1]
            if isinstance(value, fx.Node):
                written.add(value)
    return [position for position, node in enumerate(placeholders) if node in written]


def _sharing_storage(inputs: Sequence[object], written: list[int]) -> list[torch.Tensor]:
    """The written inputs and every input sharing storage with one (an eager
    `as_strided` of one input may write another's elements)."""
    storages = {inputs[i].untyped_storage()._cdata for i in written if isinstance(inputs[i], torch.Tensor)}
    return [
        tensor
        for index, tensor in enumerate(inputs)
        if isinstance(tensor, torch.Tensor) and (index in written or tensor.untyped_storage()._cdata in storages)
    ]


def _without_lazy_bits(value: object) -> object:
    """An eager view with PyTorch's negative or conjugate bit (`_neg_view`)
    holds its values un-negated in memory: a compiled step, which reads
    memory, gets them resolved (a copy)."""
    if isinstance(value, torch.Tensor) and (value.is_neg() or value.is_conj()):
        return value.resolve_neg().resolve_conj()
    return value


def _with_strides(result: object, strides: tuple[int, ...] | None) -> object:
    """The result laid out as eager lays it out (a compiled step returns its
    results contiguous; eager keeps, say, `x.t() * 2` column-major): what
    eager hands the next op, which may read storage order, is what it gets.
    A copy only where the layouts differ in a dim of more than one element."""
    if strides is None or not isinstance(result, torch.Tensor):
        return result
    if all(size < 2 or a == b for size, a, b in zip(result.shape, result.stride(), strides)):
        return result
    laid_out = torch.empty_strided(result.shape, strides, dtype=result.dtype, device=result.device)
    return laid_out.copy_(result)


class _Rebuilder:
    """A node's value from the steps' values: a view replayed, in eager, on
    its base (once per call, so one view is one tensor)."""

    def __init__(
        self, graph: fx.GraphModule, values: dict[fx.Node, object], parents: dict[fx.Node, tuple | None]
    ) -> None:
        self.graph = graph
        self.values = values
        self.parents = parents

    def __call__(self, node: fx.Node) -> object:
        if node in self.values:
            return self.values[node]
        if node.op == "get_attr":
            return getattr(self.graph, node.target)
        parent = self.parents[node]
        if parent is None:
            raise PurityError("run", f"the eager fallback lost the value of {node.name}")  # a bug of this module
        if parent[0] == "same":
            value = self(parent[1])
        else:
            args, kwargs = map_arg((node.args, node.kwargs), self)
            value = node.target(*args, **kwargs)
        self.values[node] = value
        return value


def _groups(gm: fx.GraphModule, eager: dict[fx.Node, str]) -> list[list[fx.Node] | fx.Node]:
    """Runs of compilable nodes, and eager nodes one by one, in graph order.
    An element taken out of an eager node's result (`getitem`) runs with it."""
    groups: list[list[fx.Node] | fx.Node] = []
    run: list[fx.Node] = []
    eager_sources = set(eager)
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if node in eager or (node.target is operator.getitem and node.args[0] in eager_sources):
            if node not in eager:
                eager_sources.add(node)
            if run:
                groups.append(run)
                run = []
            groups.append(node)
        else:
            run.append(node)
    if run:
        groups.append(run)
    return groups


def _step_graph(
    gm: fx.GraphModule, nodes: list[fx.Node], needed_later: set[fx.Node], run_in_eager: set[fx.Node]
) -> tuple[fx.GraphModule, list[fx.Node], list[fx.Node]]:
    """The GraphModule of one compiled step: its placeholders are the bases
    it reads from outside (and views made in eager), other views of them
    replayed in it."""
    graph = fx.Graph()
    local: dict[fx.Node, fx.Node] = {}
    origin: dict[fx.Node, fx.Node] = {}  # placeholder -> the node it stands for
    own = set(nodes)

    def place(node: fx.Node) -> fx.Node:
        if node in local:
            return local[node]
        if node.op == "get_attr":
            copied = graph.node_copy(node)
        else:
            parent = _alias_parent(node) if node not in own and node not in run_in_eager else None
            if parent is not None and parent[0] == "same":
                copied = place(parent[1])
            elif parent is not None:
                copied = graph.node_copy(node, place)
            else:
                # Placeholders stay first, in the order the step's inputs are listed.
                first_op = next((n for n in graph.nodes if n.op != "placeholder"), None)
                with graph.inserting_before(first_op) if first_op is not None else contextlib.nullcontext():
                    copied = graph.placeholder(node.name)
                copied.meta = dict(node.meta)
                origin[copied] = node
        local[node] = copied
        return copied

    for node in nodes:
        local[node] = graph.node_copy(node, place)
    outputs = [n for n in nodes if n in needed_later]
    graph.output(tuple(local[n] for n in outputs))
    inputs = [origin[n] for n in graph.nodes if n.op == "placeholder"]
    return fx.GraphModule(gm, graph), inputs, outputs


def _example(node: fx.Node, real: dict[fx.Node, object], requires_grad: bool = False) -> object:
    """A tensor of the traced layout, to compile a step before any call
    (real inputs where the step reads the program's inputs), requiring grad
    where the value will (the step's entry is then the training one its
    calls take)."""
    if node in real:
        return real[node]
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor):
        raise PurityError(
            "compile",
            "a number read from tensor data (`.item()`, a tensor used as a size or position) would cross "
            "between a compiled step and an op that runs in eager, which the eager fallback cannot hand over: "
            "compute it before calling the compiled function and pass it as an int argument",
            op=op_display_name(node),
            source=source_of(node),
        )
    example = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=value.device)
    return example.requires_grad_() if requires_grad and example.is_floating_point() else example


# Ops whose result never requires grad, whatever they read.
_WITHOUT_GRAD = (torch.ops.aten.detach.default,)


def _requiring_grad(gm: fx.GraphModule, real: dict[fx.Node, object]) -> set[fx.Node]:
    """The nodes whose values require grad when the program runs with grad
    mode on: the inputs that do, and the floating results (or tuples of
    results) of ops reading one."""
    found: set[fx.Node] = set()
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            value = real.get(node)
            if isinstance(value, torch.Tensor) and value.requires_grad:
                found.add(node)
        elif (
            node.op == "call_function"
            and node.target not in _WITHOUT_GRAD
            and any(argument in found for argument in node.all_input_nodes)
        ):
            value = node.meta.get("val")
            if isinstance(value, (tuple, list)) or (isinstance(value, torch.Tensor) and value.is_floating_point()):
                found.add(node)
    return found


def segment(
    gm: fx.GraphModule,
    eager: dict[fx.Node, str],
    example_inputs: Sequence[object],
    compile_step: Callable[[StepGraph], Callable[..., object]],
    vendor: Collection[fx.Node] = (),
) -> SegmentedProgram:
    """Splits `gm` at the `eager` nodes (node -> reason) and compiles each
    compiled step now, on tensors of the traced layouts, so errors surface
    here (`compile_step(StepGraph)` returns a CompiledProgram of it). The
    `vendor` ones among them run in eager by choice (vendor kernels)."""
    metadata_mutations = [n for n in gm.graph.nodes if n.op == "call_function" and changes_metadata(n)]
    if metadata_mutations:
        node = metadata_mutations[0]
        raise PurityError(
            "compile",
            "ops that cannot be compiled ("
            + ", ".join(sorted({op_display_name(n) for n in eager}))
            + ") would run in eager, but the program also changes a tensor's metadata in place, which the "
            "eager fallback does not support",
            op=op_display_name(node),
            source=source_of(node),
        )
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    output = next(n for n in gm.graph.nodes if n.op == "output")
    groups = _groups(gm, eager)
    # Views made by eager ops cross boundaries as values; an eager in-place op still resolves to what it wrote.
    run_in_eager = {group for group in groups if not isinstance(group, list) and _is_pure_view(group)}
    # What each group, and the program's output, rebuilds from outside itself.
    needs: list[set[fx.Node]] = []
    for group in groups:
        found: set[fx.Node] = set()
        members = group if isinstance(group, list) else [group]
        own = set(members)
        for node in members:
            for argument in node.all_input_nodes:
                if argument not in own:
                    _bases_needed(argument, found, run_in_eager)
        needs.append(found)
    final: set[fx.Node] = set()
    _bases_needed(output.args[0], final, run_in_eager)

    steps: list[_CompiledStep | _EagerStep] = []
    real = dict(zip(placeholders, example_inputs, strict=True))
    examples: dict[fx.Node, object] = dict(real)
    requiring_grad = _requiring_grad(gm, real) if torch.is_grad_enabled() else set()
    eager_ops = []
    for index, group in enumerate(groups):
        if not isinstance(group, list):
            reason = eager.get(group, "an element of an eager op's result")
            op = EagerOp(op_display_name(group), source_of(group), reason, vendor=group in vendor)
            if group in eager:
                eager_ops.append(op)
            steps.append(_EagerStep(group, op))
            continue
        if all(_is_pure_view(n) for n in group):
            continue  # replayed where used
        needed_later = set(final).union(*needs[index + 1 :])
        module, inputs, outputs = _step_graph(gm, group, needed_later, run_in_eager)
        program = compile_step(StepGraph(module))
        program.entry_for(*[_example(n, examples, n in requiring_grad) for n in inputs])
        strides = [n.meta["val"].stride() if isinstance(n.meta.get("val"), torch.Tensor) else None for n in outputs]
        steps.append(_CompiledStep(program, inputs, outputs, module, strides, nodes=group))
        for node in outputs:
            examples[node] = _example(node, {}, node in requiring_grad)
    results = list(output.args[0]) if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    program = SegmentedProgram(gm, steps, eager_ops, placeholders, results, run_in_eager=run_in_eager)
    _live_programs.add(program)
    return program


# A segmented program still alive when Python exits (held by a script's
# global) would otherwise release its segments' IREE modules after IREE's
# bindings are torn down, which then report every object as leaked.
_live_programs: weakref.WeakSet[SegmentedProgram] = weakref.WeakSet()


@atexit.register
def _release_segments() -> None:
    for program in list(_live_programs):
        program.steps.clear()


# What fx.Interpreter appends to an error raised by a node.
_INTERPRETER_NOTE = "\n\nWhile executing"


class _Recording(fx.Interpreter):
    """Runs a graph in eager, remembering the node it is at."""

    current: fx.Node | None = None

    def run_node(self, node: fx.Node) -> object:
        self.current = node
        return super().run_node(node)


def check_runs_in_eager(gm: fx.GraphModule, example_inputs: Sequence[object], failure: PurityError) -> None:
    """Runs the whole traced program in eager on copies of the inputs (the
    random generators' states restored afterwards). An op whose lowering
    failed may fail because the program is wrong (`mm` of float and int64
    tensors, a write through `expand`): eager then fails too, and it must
    fail here, while compiling, rather than in the eager step after
    compiled segments have written the caller's tensors."""
    stand_ins = clone_preserving_aliasing(example_inputs)
    devices = sorted({t.device.index or 0 for t in stand_ins if isinstance(t, torch.Tensor) and t.is_cuda})
    interpreter = _Recording(gm)
    try:
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            interpreter.run(*stand_ins)
    except Exception as error:  # eager's own error: the program is wrong
        node = interpreter.current
        raise PurityError(
            "compile",
            f"{type(error).__name__} in eager too: {str(error).split(_INTERPRETER_NOTE)[0]}\n"
            f"  (it did not compile: {failure})",
            op=op_display_name(node) if node is not None else None,
            source=source_of(node) if node is not None else None,
        ) from None


def changes_metadata(node: fx.Node) -> bool:
    from ..importer.fx_import import is_metadata_mutation

    return isinstance(node.target, torch._ops.OpOverload) and is_metadata_mutation(node.target)


def warn_eager_ops(eager_ops: Sequence[EagerOp]) -> None:
    """One EagerFallbackWarning naming the ops that run in eager because
    they cannot be compiled (vendor kernels are a choice: not named)."""
    eager_ops = [op for op in eager_ops if not op.vendor]
    if not eager_ops:
        return
    listed = "; ".join(op.describe() for op in eager_ops)
    warnings.warn(
        f"Purity runs {len(eager_ops)} op(s) in eager between compiled segments: {listed} "
        '(torch_purity.compile(..., fallback="error") refuses them instead)',
        EagerFallbackWarning,
        stacklevel=_caller_level(),
    )


_PACKAGE = str(Path(__file__).resolve().parent.parent)


def _caller_level() -> int:
    """The stack level of the first frame outside Purity (the user's call)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
