"""torch_purity.compile: a callable that behaves like the eager program.

Per call: the inputs' signature (shapes, dtypes, strides, storage offsets,
which inputs share storage, values of non-tensor inputs) selects a compiled
entry, compiling on a miss: trace -> mutable Torch IR -> linalg -> IREE. The
entry's calling convention (read from the last stage's IR) says how to
apply effects after the call: write each written input's final value into the
caller's tensor, apply metadata mutations (`as_strided_`), and return outputs
that are views of inputs as real views of the caller's tensors.

How each call crosses to IREE and back is iree/runtime.py's business
(shared with programs loaded by `torch_purity.load`); this module traces,
lowers, compiles and caches.
"""

from __future__ import annotations

import inspect
import re
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch.export.graph_signature import InputKind
from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

from ..errors import PurityCompilerCrash, PurityError
from ..guards import SymbolGuard, SymbolicShapes
from ..importer import import_graph, new_context, renamed_inputs, trace_to_aten
from ..importer.control_flow import operator_subgraph_nodes
from ..importer.fx_import import DIFFERENTIATED_AS_OPS, drop_unused_inputs, uncompilable_nodes
from ..importer.locations import op_display_name
from ..importer.symbolic import SymbolicInputs
from ..iree.module import (
    IreeCompileError,
    LoadedModule,
    compile_linalg,
    failing_aten_op,
    iree_compile_command,
    program_flags,
    program_text,
)
from ..iree.runtime import (
    Executable,
    ObjectTemplate,
    OutputNumber,
    RepeatedOutput,
    SignatureRepeat,
    flatten_arguments,
    input_signature,
    unflatten_arguments,
    written_inputs_requiring_grad,
)
from ..iree.saved import save_program
from ..iree.targets import get_target
from ..iree.training import run_training
from . import lowering_worker
from .captured import (
    CapturedGuard,
    PythonEffect,
    PythonState,
    Root,
    find_sources,
    roots_of,
    tensors_held_by,
)
from .joint import mark_joint, name_tangents, plan_joint
from .lowering import LoweredProgram, write_failing_ir
from .segments import EagerOp, SegmentedProgram, check_runs_in_eager, segment, warn_eager_ops
from .vendor_kernels import vendor_kernel_nodes

# ----------------------------------------------------------------------------
# Specialization
# ----------------------------------------------------------------------------


@dataclass
class _Specialized:
    """The program as a function of its tensor inputs (and, where they are
    runtime values, its int inputs) only, with flat tensor outputs."""

    function: Callable[..., tuple]
    input_positions: list[int]  # the arguments the function takes, in order
    names: list[str]
    output_spec: list = field(default_factory=list)  # [TreeSpec, {leaf index: constant}]
    # Assignments the last trace made to reachable Python objects; when there
    # are any, the function returns (result, [value assigned, per effect]).
    effects: list[PythonEffect] = field(default_factory=list)


_NUMBER_DTYPES = {"int": torch.int64, "float": torch.float64, "bool": torch.bool}


def _number_kind(number: torch.SymInt | torch.SymFloat | torch.SymBool) -> str:
    return {torch.SymInt: "int", torch.SymFloat: "float", torch.SymBool: "bool"}[type(number)]


def _specialize(
    program, args: Sequence[object], state_names: list[str], state: PythonState, int_positions: Sequence[int] = ()
) -> _Specialized:
    """Every argument that is not a tensor (and not an int at
    `int_positions`) becomes a constant of the traced program."""
    input_positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) or i in int_positions]
    taken = set(input_positions)
    constants = {i: a for i, a in enumerate(args) if i not in taken}
    names = [state_names[i] if i < len(state_names) else f"input:{i - len(state_names)}" for i in input_positions]
    specialized = _Specialized(lambda *t: (), input_positions, names)

    def function(*all_inputs):
        inputs, stand_ins = all_inputs[: len(input_positions)], all_inputs[len(input_positions) :]
        full = list(args)
        for position, value in zip(input_positions, inputs):
            full[position] = value
        for position, constant in constants.items():
            full[position] = constant
        result, effects = state.run(lambda: program(*full), stand_ins)
        specialized.effects[:] = effects
        if effects:
            result = (result, [effect.after for effect in effects])
        leaves, spec = pytree.tree_flatten(result)
        outputs: list[torch.Tensor] = []
        output_constants: dict[int, object] = {}
        first_leaf: dict[int, int] = {}  # id(tensor) -> the leaf it was first returned at
        for index, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                if id(leaf) in first_leaf:  # one tensor returned twice: as eager, the same object at both leaves
                    output_constants[index] = RepeatedOutput(first_leaf[id(leaf)])
                    continue
                first_leaf[id(leaf)] = index
                outputs.append(leaf)
                continue
            if isinstance(leaf, (torch.SymInt, torch.SymFloat, torch.SymBool)) and free_unbacked_symbols(leaf):
                # A number from tensor data: no specialized entry can hold
                # it, so it leaves as a 0-d tensor and is read per call.
                kind = _number_kind(leaf)
                outputs.append(torch.scalar_tensor(leaf, dtype=_NUMBER_DTYPES[kind]))
                output_constants[index] = OutputNumber(kind)
                continue
            if _holds_symbols(leaf):
                # A number computed from a runtime int or size: its value is
                # not in the compiled code (an entry with them specialized is
                # built instead, which returns it as a constant).
                raise _NeedsStaticInts(f"output {index} is a number computed from runtime values")
            if id(leaf) in state.object_ids:  # the caller's own object (a cache passed in): as eager, itself
                output_constants[index] = leaf
                continue
            held, shared, numbers = tensors_held_by(leaf, f"output {index} ({type(leaf).__name__})", state.object_ids)
            if any(not free_unbacked_symbols(n) for n in numbers):
                raise _NeedsStaticInts(f"output {index} holds a number computed from runtime values")
            kinds = tuple(_number_kind(n) for n in numbers)
            if held or numbers:
                output_constants[index] = ObjectTemplate(leaf, tuple(held), tuple(shared), tuple(zip(numbers, kinds)))
            else:
                output_constants[index] = leaf
            outputs.extend(held)
            outputs.extend(torch.scalar_tensor(n, dtype=_NUMBER_DTYPES[k]) for n, k in zip(numbers, kinds))
        specialized.output_spec[:] = [spec, output_constants]
        return tuple(outputs)

    specialized.function = function
    return specialized


# ----------------------------------------------------------------------------
# Compiled entries
# ----------------------------------------------------------------------------


@dataclass(kw_only=True)
class CompiledEntry(Executable):
    """An executable with what building it left: the traced program, the IR
    of each stage and the seconds each stage took."""

    specialized: _Specialized
    lowered: LoweredProgram
    mutable_ir: str
    seconds: dict[str, float]
    # Tensors the program read without taking them as arguments (its last
    # inputs) and the guard that they are still what was traced.
    captured: list[torch.Tensor] = field(default_factory=list)
    captured_guard: CapturedGuard | None = None
    input_names: list[str] = field(default_factory=list)  # per input of the traced graph, arguments then captured
    # A training entry's compiled @backward (this entry runs its @forward),
    # and whether each captured tensor required grad when it was traced.
    backward: Executable | None = None
    captured_requires_grad: tuple[bool, ...] = ()
    # iree-compile's flags for this entry's module (module.program_flags).
    iree_flags: tuple[str, ...] = ()
    # The leaves whose values the cache key leaves out (ints, tensors with
    # dynamic dims) and what this entry holds for: runtime values within the
    # trace's guards, or, where they were specialized, the traced values.
    guarded_leaves: list[int] = field(default_factory=list)
    symbol_guard: SymbolGuard = SymbolGuard(None)
    runtime_ints: bool = False
    ints_specialized_because: str | None = None  # why runtime ints failed, where they did
    # Leaf -> dims left out of this entry's cache key (its guard checks them).
    dynamic_dims: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def serves(self, leaves: list[object]) -> bool:
        """Whether this entry serves the call's ints and dynamic sizes."""
        return self.symbol_guard.holds([leaves[i] for i in self.guarded_leaves]) if self.guarded_leaves else True

    @property
    def guarded(self) -> bool:
        """Whether `still_valid` has anything to check."""
        return bool(self.captured or self.specialized.effects)

    def still_valid(self, leaves: list[object]) -> bool:
        """The guards beyond the arguments' signature: captured tensors (and,
        with grad mode on, whether they require grad) and the Python state
        the trace assigned."""
        if self.captured_guard is not None and not self.captured_guard.holds(leaves):
            return False
        if self.captured and torch.is_grad_enabled():
            if tuple(t.requires_grad for t in self.captured) != self.captured_requires_grad:
                return False
        return all(effect.still_as_traced() for effect in self.specialized.effects)

    def call(self, leaves: list[object], arguments_need_grad: bool = True):
        """One call on the leaves `entry_for` found this entry for.
        `arguments_need_grad=False`: none of them requires grad, or grad
        mode is off (the call's grad key tells)."""
        if self.captured:
            leaves = [*leaves, *self.captured]
            # (Captured parameters need no grad under torch.no_grad(): an optimizer step takes the steady plan.)
            arguments_need_grad = arguments_need_grad or (torch.is_grad_enabled() and any(self.captured_requires_grad))
        if self.backward is not None:
            result = run_training(self, self.backward, leaves)
        elif not arguments_need_grad:
            result = self.run_without_grad(leaves)
        else:
            result = self.run(leaves, arguments_need_grad)
        if not self.specialized.effects:
            return result
        result, values = result
        for effect, value in zip(self.specialized.effects, values):
            effect.apply(value)
        return result


def build_entry(
    program,
    args: Sequence[object],
    state_names: list[str],
    target: str,
    dump_dir: str | None,
    user_code: object,
    program_roots: list[Root] = (),
    runtime_ints: bool = True,
    dynamic_dims: dict[int, tuple[int, ...]] | None = None,
    fallback: str = "eager",
    vendor_kernels: bool = True,
) -> CompiledEntry:
    """Traces, lowers and compiles the program for `args` (the call's
    leaves). With `runtime_ints`, its int arguments are runtime values of
    the compiled code and the dims in `dynamic_dims` (leaf -> dims) are
    dynamic (importer.symbolic); otherwise, or in a training entry, both are
    specialized to this call's values (a guard on them: the cache key
    leaves them out). With `fallback="eager"`, ops that cannot be compiled
    run in eager between compiled segments (driver/segments.py); with
    `vendor_kernels`, so do those PyTorch's own kernel runs faster
    (driver/vendor_kernels.py)."""
    dynamic_dims = dynamic_dims or {}
    seconds: dict[str, float] = {}
    arguments = [a for a in args if not isinstance(a, torch.Tensor)]
    program_roots = [*program_roots, *(Root(f"argument {i}", lambda a=a: a) for i, a in enumerate(arguments))]
    module_state = {id(a) for a in args[: len(state_names)]}
    state = PythonState(program_roots, explicit=module_state)
    int_leaves = [i for i, a in enumerate(args) if type(a) is int]
    guarded_leaves = sorted({*int_leaves, *dynamic_dims})
    training = torch.is_grad_enabled() and any(
        t.requires_grad for t in [*(a for a in args if isinstance(a, torch.Tensor)), *state.tensors]
    )
    runtime_ints = runtime_ints and bool(guarded_leaves) and not training
    specialized = _specialize(program, args, state_names, state, int_leaves if runtime_ints else ())
    tensors = [args[i] for i in specialized.input_positions]
    start = time.perf_counter()
    context = new_context()
    primals = [*tensors, *state.tensors]
    plan = plan_joint(specialized.function, primals, user_code) if training else None
    symbolic = None
    if runtime_ints:
        primal_of = {leaf: k for k, leaf in enumerate(specialized.input_positions)}
        symbolic = SymbolicInputs(
            primals, [primal_of[i] for i in int_leaves], {primal_of[i]: dims for i, dims in dynamic_dims.items()}
        )
        graph, inputs = trace_to_aten(specialized.function, primals, context, user_code, symbolic=symbolic)
    elif plan is None:
        graph, inputs = trace_to_aten(specialized.function, primals, context, user_code)
    else:
        graph, inputs = trace_to_aten(
            plan.function(specialized.function), [*primals, *plan.tangents], context, user_code
        )
    # Where each was found (none past the search's limit: then guarded by identity only).
    sources = find_sources(program_roots, {id(t) for t in state.tensors})
    names = [
        f"captured:{sources[id(t)].describe()}" if id(t) in sources else f"captured:{i}"
        for i, t in enumerate(state.tensors)
    ]
    inputs = drop_unused_inputs(graph, inputs, first=len(tensors), names=names)
    seconds["trace"] = time.perf_counter() - start
    start = time.perf_counter()
    inputs = renamed_inputs(inputs, specialized.names)
    if plan is not None:
        inputs = name_tangents(inputs, plan)
    segmented = partial(
        _segmented_entry,
        graph=graph,
        inputs=inputs,
        training=plan is not None,
        symbolic=symbolic,
        target=target,
        dump_dir=dump_dir,
        specialized=specialized,
        tensor_count=len(tensors),
        sources=sources,
        args=args,
        guarded_leaves=guarded_leaves,
        dynamic_dims=dynamic_dims,
        seconds=seconds,
        fallback=fallback,
    )
    eager = uncompilable_nodes(graph, context) if fallback == "eager" else {}

    def traced_forward() -> tuple[fx.GraphModule, list]:
        forward, forward_inputs = trace_to_aten(
            specialized.function, primals, context, user_code, kept=DIFFERENTIATED_AS_OPS
        )
        forward_inputs = drop_unused_inputs(forward, forward_inputs, first=len(tensors), names=names)
        return forward, renamed_inputs(forward_inputs, specialized.names)

    split = _split_entry(
        segmented,
        graph,
        eager,
        target=target,
        vendor_kernels=vendor_kernels and symbolic is None,
        training=plan is not None,
        trace_forward=traced_forward,
    )
    if split is not None:
        return split
    try:
        module = import_graph(graph, inputs, context)
        if plan is not None:
            mark_joint(module, plan, inputs, primals, first_captured=len(tensors))
            inputs = inputs[: len(inputs) - len(plan.tangents)]
        seconds["import"] = time.perf_counter() - start
        mutable_ir = module.operation.get_asm(enable_debug_info=True)
        captured = [d.value for d in inputs[len(tensors) :]]
        lowered = lowering_worker.lower(mutable_ir, dump_dir)
        seconds.update(lowered.seconds)
        convention = lowered.convention
        symbolic_shapes = None
        if symbolic is not None:
            if any(argument < 0 for argument in convention.views_returned_as_copies.values()):
                raise _NeedsStaticInts("outputs view one intermediate at places given by runtime values")
            symbolic_shapes = _result_shapes(graph, convention, symbolic)
        if lowered.backward_convention is not None:
            _refuse_writes_to_inputs_requiring_grad(convention, [*tensors, *captured], [d.name for d in inputs])
        start = time.perf_counter()
        try:
            vmfb = compile_linalg(lowered.iree_input, target)
        except IreeCompileError as error:
            path = write_failing_ir(program_text(lowered.iree_input, target), "iree-compile", dump_dir)
            reproduce = f"  reproduce with: {iree_compile_command(str(path), target, lowered.iree_input)}"
            died = re.search(r"Error code: (-\d+)", str(error))
            if died:  # iree-compile was killed by a signal: a compiler bug, never "unsupported"
                raise PurityCompilerCrash(
                    "compile",
                    f"iree-compile crashed (signal {lowering_worker.signal_name(int(died.group(1)))}) for target "
                    f"'{target}'; nothing of the caller's was touched\n{reproduce}",
                ) from None
            raise PurityError(
                "compile",
                f"IREE failed for target '{target}': {error}\n{reproduce}",
                op=failing_aten_op(lowered.iree_input, target),
            ) from None
        seconds["iree-compile"] = time.perf_counter() - start
    except PurityError as error:
        # (With runtime values, the static entry built next gets its chance.)
        eager_allowed = fallback == "eager" and type(error) is PurityError and symbolic is None
        failing = failing_nodes(graph, error) if eager_allowed else {}
        if not failing:
            raise
        return segmented(failing, failure=error)
    backward = None
    driver = get_target(target).runtime_driver(lowered.iree_input)
    if lowered.backward_convention is not None:
        backward_convention = lowered.backward_convention
        backward = Executable(
            convention=backward_convention,
            module=LoadedModule(target, vmfb, "backward", driver),
            argument_positions=list(range(len(backward_convention.backward_arguments))),
            devices_fixed=True,
        )
    return CompiledEntry(
        convention=convention,
        symbolic_shapes=symbolic_shapes,
        module=LoadedModule(target, vmfb, "main" if backward is None else "forward", driver),
        argument_positions=[*specialized.input_positions, *range(len(args), len(args) + len(captured))],
        output_spec=specialized.output_spec,
        devices_fixed=True,  # input_signature includes each tensor's device
        specialized=specialized,
        lowered=lowered,
        mutable_ir=mutable_ir,
        seconds=seconds,
        captured=captured,
        captured_guard=CapturedGuard.of(captured, [sources.get(id(t)) for t in captured], args) if captured else None,
        input_names=[d.name for d in inputs],
        backward=backward,
        captured_requires_grad=tuple(t.requires_grad for t in captured),
        iree_flags=tuple(program_flags(lowered.iree_input, target)),
        guarded_leaves=guarded_leaves,
        symbol_guard=symbolic.guard()
        if symbolic is not None
        else SymbolGuard.equal_to([args[i] for i in guarded_leaves], [dynamic_dims.get(i, ()) for i in guarded_leaves]),
        runtime_ints=runtime_ints,
        dynamic_dims=dynamic_dims,
        # Grad mode on and something requiring grad, yet no joint: the trace saw no output requiring grad.
        outputs_without_grad=backward is None and training,
    )


@dataclass(kw_only=True)
class SegmentedEntry(CompiledEntry):
    """An entry whose program runs as compiled segments and eager ops
    (driver/segments.py): it has no IR or IREE module of its own
    (`convention`, `module` and `lowered` are None); each compiled segment
    is a CompiledProgram of its own (`segments.compiled_steps`)."""

    segments: SegmentedProgram

    @property
    def eager_ops(self) -> list[EagerOp]:
        return self.segments.eager_ops

    def run(self, args: Sequence[object], may_need_grad: bool = True):
        return self._rebuild_outputs(self.segments.run([args[i] for i in self.argument_positions]))


def failing_nodes(graph, error: PurityError) -> dict:
    """The graph's nodes of the op a stage failed on (from the error, or the
    first `loc("aten...")` of an IREE diagnostic), with the failure as the
    reason; a cond or while_loop whose subgraph holds that op stands for it."""
    op = error.op
    if op is None:
        found = re.search(r'loc\("((?:aten|prims)\.[\w.]+)"', error.message)
        op = found.group(1) if found else None
    if op is None:
        return {}
    reason = f"{error.stage} failed: {error.message.splitlines()[0]}"
    top = [n for n in graph.graph.nodes if n.op == "call_function"]
    failing = {n: reason for n in top if op_display_name(n) == op}
    if failing:
        return failing
    for node in top:
        if isinstance(node.target, torch._ops.HigherOrderOperator):
            if any(op_display_name(n) == op for n in operator_subgraph_nodes(node)):
                failing[node] = f"its subgraph calls {op}; {reason}"
    return failing


# At most this many rounds of finding one more op that fails to lower and
# running it in eager too.
_MAX_FALLBACK_ROUNDS = 8


def _split_entry(
    segmented: Callable[..., SegmentedEntry],
    graph: fx.GraphModule,
    eager: dict,
    *,
    target: str,
    vendor_kernels: bool,
    training: bool,
    trace_forward: Callable[[], tuple[fx.GraphModule, list]],
) -> SegmentedEntry | None:
    """The entry split at the ops that run in eager (`eager`: they cannot be
    compiled) and at the vendor kernels, or None where it is compiled whole.
    A training entry's graph is its joint graph: with vendor kernels in it
    (and no op that cannot be compiled), its forward (`trace_forward()`)
    is split, each segment training on its own and the vendor ops running
    with autograd between them; where a segment cannot train on its own
    (it writes in place a tensor that requires grad), the entry is compiled
    whole. (`segmented(eager, vendor=..., graph=..., inputs=...)` builds a
    split entry: `_segmented_entry` with the entry's own arguments.)"""
    vendor = vendor_kernel_nodes(graph, target, training=training) if vendor_kernels else {}
    if not training:
        return segmented({**vendor, **eager}, vendor=vendor) if eager or vendor else None
    if eager:
        return segmented(eager)  # (refused: no op runs in eager inside a training program but a vendor kernel)
    if not vendor:
        return None
    forward, inputs = trace_forward()
    vendor = vendor_kernel_nodes(forward, target, training=True)
    if not vendor:
        return None
    try:
        return segmented(vendor, vendor=vendor, graph=forward, inputs=inputs)
    except PurityError:
        return None


def _segmented_entry(
    eager: dict,
    failure: PurityError | None = None,
    *,
    graph,
    inputs,
    training: bool,
    symbolic,
    target: str,
    dump_dir: str | None,
    specialized: _Specialized,
    tensor_count: int,
    sources: dict,
    args: Sequence[object],
    guarded_leaves: list[int],
    dynamic_dims: dict,
    seconds: dict[str, float],
    fallback: str,
    vendor: Collection[fx.Node] = (),
) -> SegmentedEntry:
    """An entry running `eager` (node -> why it runs in eager: it cannot be
    compiled, or it is one of the `vendor` kernels) in eager and compiling
    the rest in segments; with `fallback="eager"`, an op that then fails to
    compile in a segment joins the eager ones. In a training entry (`graph`
    its forward: vendor kernels only), each segment trains on its own and
    the vendor ops run with autograd between them. Where an op joined because
    its lowering failed (`failure`), the program first runs in eager on
    copies of the inputs: a program eager rejects is refused now, not midway
    through a call."""
    names = ", ".join(sorted({op_display_name(n) for n in eager}))
    failing = {node: reason for node, reason in eager.items() if node not in vendor}
    if training and failing:
        raise PurityError(
            "compile",
            f"{', '.join(sorted({op_display_name(n) for n in failing}))} cannot be compiled "
            f"({next(iter(failing.values()))}), and running ops in eager inside a training program is not "
            "supported: compile it under torch.no_grad(), or replace the op",
        )
    if symbolic is not None:
        raise _NeedsStaticInts(f"{names} run in eager, between segments compiled for static sizes")
    start = time.perf_counter()
    example_inputs = [d.value for d in inputs]
    eager = dict(eager)

    def compile_step(module):
        return CompiledProgram(module, target, dump_dir, fallback="error", vendor_kernels=False)

    if failure is not None:
        check_runs_in_eager(graph, example_inputs, failure)
    for _ in range(_MAX_FALLBACK_ROUNDS):
        try:
            program = segment(graph, eager, example_inputs, compile_step, vendor=vendor)
            break
        except PurityError as error:
            # (A training split runs vendor kernels only: a segment that fails to compile ends it.)
            more = (
                failing_nodes(graph, error)
                if type(error) is PurityError and fallback == "eager" and not training
                else {}
            )
            if not more or set(more) <= set(eager):
                raise
            if failure is None:
                check_runs_in_eager(graph, example_inputs, error)
                failure = error
            eager.update(more)
    else:
        raise PurityError("compile", f"more than {_MAX_FALLBACK_ROUNDS} ops failed to compile; the last: {names}")
    seconds["segments"] = time.perf_counter() - start
    warn_eager_ops(program.eager_ops)
    captured = example_inputs[tensor_count:]
    return SegmentedEntry(
        convention=None,
        module=None,
        argument_positions=[*specialized.input_positions, *range(len(args), len(args) + len(captured))],
        output_spec=specialized.output_spec,
        specialized=specialized,
        lowered=None,
        mutable_ir="\n".join(step.program.last_mutable_ir() for step in program.compiled_steps),
        seconds=seconds,
        captured=captured,
        captured_guard=CapturedGuard.of(captured, [sources.get(id(t)) for t in captured], args) if captured else None,
        input_names=[d.name for d in inputs],
        captured_requires_grad=tuple(t.requires_grad for t in captured),
        guarded_leaves=guarded_leaves,
        symbol_guard=SymbolGuard.equal_to(
            [args[i] for i in guarded_leaves], [dynamic_dims.get(i, ()) for i in guarded_leaves]
        ),
        dynamic_dims=dynamic_dims,
        segments=program,
    )


def _result_shapes(graph, convention, symbolic: SymbolicInputs) -> SymbolicShapes | None:
    """Per-call shapes of the results whose traced shapes are symbolic: the
    program's outputs (from the trace) and written inputs (the input's)."""
    output = next(n for n in graph.graph.nodes if n.op == "output")
    values = output.args[0] if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    shapes = {result: tuple(node.meta["val"].shape) for result, node in zip(convention.output_results, values)}
    for result, argument in convention.written_inputs:
        shapes[result] = tuple(symbolic.values[argument].shape)
    # Outputs eager returns as views of arguments, at places given by runtime
    # values: their traced layouts, evaluated per call (a view of the caller's tensor).
    views = {
        output: (argument, values[output].meta["val"])
        for output, argument in convention.views_returned_as_copies.items()
    }
    try:
        return symbolic.shapes(shapes, views)
    except ValueError as error:
        raise _NeedsStaticInts(str(error)) from None


def _holds_symbols(value: object) -> bool:
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return True
    return isinstance(value, (tuple, list)) and any(_holds_symbols(item) for item in value)


class _NeedsStaticInts(PurityError):
    """An entry with runtime ints would differ from eager where one with
    the ints specialized does not (an output view eager returns, located
    only once the ints are known): compiled with the ints specialized."""

    def __init__(self, reason: str) -> None:
        super().__init__("compile", reason)


def _refuse_writes_to_inputs_requiring_grad(convention, tensors: list[torch.Tensor], names: list[str]) -> None:
    """A training entry that writes (or restrides) an input requiring grad
    is refused before it runs: eager rebases that input's autograd history,
    which the compiled backward does not model. (A leaf that requires grad
    already failed in the trace, with eager's own error.)"""
    for index in written_inputs_requiring_grad(convention, tensors):
        raise PurityError(
            "compile",
            f"the program writes {names[index]} in place, which requires grad; Purity's training path does "
            "not rebase an input's autograd history: write a clone, or detach the input",
        )


@dataclass(frozen=True)
class _KeywordCall:
    """The argument structure of a call with keyword arguments (their dict
    flattened last), told apart from a positional dict in the cache key."""

    structure: object


FALLBACKS = ("eager", "error")


@dataclass
class _LastCall:
    """The last call whose entry was found in the cache, for the next call's
    `CompiledProgram._repeated_call`. A compile forgets it (entries moved)."""

    repeat: SignatureRepeat
    structure: object
    keywords: bool
    key: tuple
    entry: CompiledEntry
    grad_enabled: bool = field(default_factory=torch.is_grad_enabled)
    # Whether the call's arguments were its leaves (no module state, no
    # list, tuple or dict among them, no keywords).
    leaves_only: bool = False


class CompiledProgram:
    """What `torch_purity.compile` returns: call it like the eager program."""

    def __init__(
        self,
        program,
        target: str = "cpu",
        dump_dir: str | None = None,
        dynamic: bool = False,
        dynamic_dims: dict[int, tuple[int, ...]] | None = None,
        fallback: str = "eager",
        vendor_kernels: bool = True,
    ) -> None:
        """`fallback`: "eager" runs ops that cannot be compiled in eager
        between compiled segments (one EagerFallbackWarning names them);
        "error" refuses the program with the PurityError of the first.
        `vendor_kernels`: on the CPU, large float32 convolutions run
        PyTorch's kernel (oneDNN) between compiled segments, as Inductor's
        do (driver/vendor_kernels.py); False compiles them with IREE.
        `dynamic`: every dim of size 2 or more of every contiguous tensor
        argument is dynamic (as Dynamo's `dynamic=True`); `dynamic_dims`
        (argument -> dims, for arguments that are tensors) names them one by
        one. Dims marked with `torch._dynamo.mark_dynamic` are dynamic too."""
        get_target(target)  # a ValueError naming the known targets
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback={fallback!r}: expected one of {', '.join(map(repr, FALLBACKS))}")
        self.fallback = fallback
        self.vendor_kernels = vendor_kernels
        # (argument, dim) -> (name, low, high) of each dim torch.export made dynamic.
        self.dim_ranges: dict[tuple[int, int], tuple[str, int, int | None]] = {}
        if isinstance(program, torch.export.ExportedProgram):
            # Its module() runs the exported graph (torch.export's default IR
            # keeps in-place ops) on the exported parameters and buffers, the
            # caller's own: buffer mutations land there. Its `Dim`s are
            # dynamic dims here, and their ranges are checked on every call.
            self.dim_ranges = exported_dim_ranges(program)
            dynamic_dims = dict(dynamic_dims or {})
            for argument, dim in self.dim_ranges:
                dynamic_dims[argument] = tuple(sorted({*dynamic_dims.get(argument, ()), dim}))
            program = program.module()
        self.program = program
        self.target = target
        self.dump_dir = dump_dir
        self.cache: dict[tuple, CompiledEntry] = {}
        self._last_call: _LastCall | None = None
        self._module = program if isinstance(program, torch.nn.Module) else None
        self.dynamic = dynamic
        self.declared_dynamic_dims = dict(dynamic_dims or {})

    def _dynamic_dims(self, leaves: list[object], first_argument: int) -> dict[int, tuple[int, ...]]:
        """Leaf -> its dynamic dims, for this call. Only contiguous tensors
        starting their storage and sharing it with no other leaf qualify
        (their strides follow from their sizes); the others stay static."""
        found: dict[int, tuple[int, ...]] = {}
        for position in range(first_argument, len(leaves)):
            tensor = leaves[position]
            if not isinstance(tensor, torch.Tensor):
                continue
            if self.dynamic:
                dims = tuple(d for d, size in enumerate(tensor.shape) if size >= 2)
            else:
                dims = self.declared_dynamic_dims.get(position - first_argument, ())
                marked = getattr(tensor, "_dynamo_dynamic_indices", None)
                if marked:
                    dims = tuple(sorted({*dims, *marked}))
            if dims and tensor.is_contiguous() and tensor.storage_offset() == 0:
                found[position] = dims
        if len(found) > 0:
            storages = [t.untyped_storage().data_ptr() for t in leaves if isinstance(t, torch.Tensor)]
            found = {
                p: dims for p, dims in found.items() if storages.count(leaves[p].untyped_storage().data_ptr()) == 1
            }
        return found

    def _state(self) -> tuple[list[str], list[torch.Tensor]]:
        if self._module is None:
            return [], []
        named = [(f"param:{n}", t) for n, t in self._module.named_parameters()]
        named += [(f"buffer:{n}", t) for n, t in self._module.named_buffers()]
        return [n for n, _ in named], [t for _, t in named]

    def _callable(self, state_count: int):
        if self._module is None:
            return self.program
        module = self._module
        names = [n for n, _ in module.named_parameters()] + [n for n, _ in module.named_buffers()]

        def call_with_state(*args, **kwargs):
            bound = dict(zip(names, args[:state_count]))
            return torch.func.functional_call(module, bound, tuple(args[state_count:]), kwargs)

        return call_with_state

    def _check_arguments(self, args: tuple, kwargs: dict) -> None:
        """A call the program's signature rejects fails here, before any tracing."""
        target = self._module.forward if self._module is not None else self.program
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            return  # builtins and some callables have no signature: tracing will tell
        try:
            signature.bind(*args, **kwargs)
        except TypeError as error:
            name = getattr(target, "__qualname__", type(target).__name__)
            given = f"{len(args)} arguments" + (f" and keywords {', '.join(kwargs)}" if kwargs else "")
            raise PurityError("call", f"{name}{signature} cannot take {given}: {error}") from None

    def entry_for(self, *args, **kwargs) -> tuple[CompiledEntry, list[object]]:
        """The compiled entry for these arguments, and the flat list it takes
        (module state, then the leaves of the arguments and of the keyword
        arguments' dict: lists, tuples and dicts of tensors are flattened).

        The cache key is (structure, signature, grad key, slot): int values
        are not in the signature, so entries for other int values of one
        signature take slots 0, 1, ...; each says which values it serves."""
        entry, leaves, _ = self._entry_and_key(args, kwargs)
        return entry, leaves

    def _entry_and_key(self, args: tuple, kwargs: dict) -> tuple[CompiledEntry, list[object], tuple]:
        state_names, state = self._state() if self._module is not None else ((), ())
        leaves, structure = flatten_arguments(state, (*args, kwargs) if kwargs else args)
        if self.dim_ranges:
            self._check_dim_ranges(leaves, len(state))
        may_be_dynamic = self._may_be_dynamic(leaves, len(state))
        repeated = self._repeated_call(leaves, structure, kwargs) if not may_be_dynamic else None
        if repeated is not None:
            return repeated  # (a repeat keeps the last call's dispatch keys: no lazy bits)
        _refuse_lazy_bits(args, kwargs)
        dynamic_dims = self._dynamic_dims(leaves, len(state)) if may_be_dynamic else None
        # The grad key: with grad mode on, which leaves require grad (a training entry per set);
        # None under torch.no_grad(), where every entry is an inference one.
        requiring_grad = [] if torch.is_grad_enabled() else None
        signature = input_signature(leaves, dynamic_dims, requiring_grad)
        grad_key = tuple(requiring_grad) if requiring_grad is not None else None
        key = (_KeywordCall(structure) if kwargs else structure, signature, grad_key)
        found_at, entry = self._lookup(key, leaves)
        if entry is not None and entry.guarded and not entry.still_valid(leaves):
            entry = None  # a captured tensor was rebound, or Python state changed: compile again, in its slot
        if entry is None:
            self._check_arguments(args, kwargs)
            program = self._callable(len(state))

            def on_leaves(*flat):
                values = unflatten_arguments(list(flat), structure)
                return program(*values[:-1], **values[-1]) if kwargs else program(*values)

            entry = self._build(on_leaves, leaves, state_names, dynamic_dims or {})
            if found_at[:3] != key and entry.backward is not None:
                # It replaces an inference entry of the other grad mode, but a
                # training entry serves this grad mode only: under this call's key.
                found_at, _ = self._in_slots(key, leaves)
            self.cache[found_at] = entry
            self._last_call = None
        elif not may_be_dynamic:
            repeat = SignatureRepeat.of(leaves)
            # (Not for a module, even one without state now: parameters registered later are leaves.)
            leaves_only = self._module is None and not kwargs and isinstance(structure, tuple) and not any(structure)
            self._last_call = (
                None
                if repeat is None
                else _LastCall(repeat, structure, bool(kwargs), key, entry, leaves_only=leaves_only)
            )
        return entry, leaves, key

    def _repeated_call(self, leaves: list[object], structure: object, kwargs: dict):
        """The last call's entry and key where this call repeats its
        signature (SignatureRepeat) and the entry serves it: what the cache
        lookup would find, without building and hashing the key."""
        last = self._last_call
        if (
            last is None
            or last.grad_enabled != torch.is_grad_enabled()
            or last.keywords != bool(kwargs)
            or last.structure != structure
            or not last.repeat.holds(leaves)
        ):
            return None
        entry = last.entry
        if not entry.serves(leaves) or (entry.guarded and not entry.still_valid(leaves)):
            return None
        return entry, leaves, last.key

    def _check_dim_ranges(self, leaves: list[object], first_argument: int) -> None:
        """A size outside an exported `Dim`'s range fails here, before anything runs."""
        for (argument, dim), (name, low, high) in self.dim_ranges.items():
            position = first_argument + argument
            value = leaves[position] if position < len(leaves) else None
            if not isinstance(value, torch.Tensor) or dim >= value.dim():
                continue  # the structure differs: the call fails in the trace, as eager's would
            size = value.shape[dim]
            if size < low or (high is not None and size > high):
                raise PurityError(
                    "call",
                    f"{name}.shape[{dim}] is {size}, outside the range [{low}, {'inf' if high is None else high}] "
                    "the program was exported with (torch.export.Dim); export it again with a wider range",
                )

    def _may_be_dynamic(self, leaves: list[object], first_argument: int) -> bool:
        """Whether any argument (module state never is) can have dynamic dims."""
        if self.dynamic or self.declared_dynamic_dims:
            return True
        for leaf in leaves[first_argument:] if first_argument else leaves:
            if hasattr(leaf, "_dynamo_dynamic_indices"):
                return True
        return False

    def _build(
        self, program, leaves: list[object], state_names: list[str], dynamic_dims: dict[int, tuple[int, ...]]
    ) -> CompiledEntry:
        """An entry with int arguments as runtime values and `dynamic_dims`
        dynamic; where that fails (a construct Purity compiles only with
        static sizes), one with them specialized, which fails as it would
        have without them."""
        roots = roots_of(self.program)
        build = partial(
            build_entry,
            program,
            leaves,
            state_names,
            self.target,
            self.dump_dir,
            self.program,
            roots,
            dynamic_dims=dynamic_dims,
            fallback=self.fallback,
            vendor_kernels=self.vendor_kernels,
        )
        try:
            if not dynamic_dims and not any(type(leaf) is int for leaf in leaves):
                return build()
            try:
                return build(runtime_ints=True)
            except PurityError as error:
                entry = build(runtime_ints=False)
                entry.ints_specialized_because = str(error)
                return entry
        except _NeedsStaticInts as error:
            # With every int already specialized, what is left symbolic came from tensor data.
            raise PurityError(
                "trace",
                f"{error.message}: a number computed from tensor data (`.item()`, `int(t)`, a tensor used as a "
                "size or position) is not compiled; compute it before calling the compiled function and pass it "
                "as an int argument",
            ) from None

    def _lookup(self, key: tuple, leaves: list[object]) -> tuple[tuple, CompiledEntry | None]:
        """The entry serving this call and the key it is cached under: one
        of `key`'s slots, or an inference entry compiled in the other grad
        mode that serves this call as well (with no argument requiring grad,
        grad mode matters only through captured tensors requiring grad).
        Without one: None and the first free slot of `key`."""
        found_at, entry = self._in_slots(key, leaves)
        if entry is not None:
            return found_at, entry
        if key[2] is None:  # grad mode off: any inference entry of these arguments
            other, candidate = self._in_slots((*key[:2], ()), leaves)
            if candidate is not None and candidate.backward is None:
                return other, candidate
        elif key[2] == ():  # grad mode on, no argument requires grad
            other, candidate = self._in_slots((*key[:2], None), leaves)
            if candidate is not None and not any(t.requires_grad for t in candidate.captured):
                return other, candidate
        return found_at, None

    def _in_slots(self, key: tuple, leaves: list[object]) -> tuple[tuple, CompiledEntry | None]:
        slot = 0
        while True:
            entry = self.cache.get((*key, slot))
            if entry is None:
                return (*key, slot), None
            if entry.serves(leaves):
                return (*key, slot), entry
            slot += 1

    def __call__(self, *args, **kwargs):
        last = self._last_call
        if last is not None and last.leaves_only and not kwargs:
            # The arguments are the leaves where they repeat the last call's:
            # the repeat's check fails a list, tuple or dict where a leaf was.
            leaves = list(args)
            repeated = None if self._may_be_dynamic(leaves, 0) else self._repeated_call(leaves, last.structure, kwargs)
            if repeated is not None:
                entry, _, key = repeated
                return entry.call(leaves, arguments_need_grad=bool(key[2]))
        entry, leaves, key = self._entry_and_key(args, kwargs)
        return entry.call(leaves, arguments_need_grad=bool(key[2]))

    def last_mutable_ir(self) -> str:
        """The mutable Torch IR of the entry compiled last."""
        return next(reversed(self.cache.values())).mutable_ir if self.cache else ""

    def save(self, folder: str | Path) -> Path:
        """Writes every compiled entry to `folder`, for `torch_purity.load`
        (which needs torch and IREE's runtime only)."""
        state_names = self._state()[0] if self._module is not None else None
        if any(isinstance(structure, _KeywordCall) for structure, *_ in self.cache):
            raise PurityError(
                "save", "an entry was compiled for a call with keyword arguments; a saved program takes positional ones"
            )
        if any(entry.guarded for entry in self.cache.values()):
            raise PurityError(
                "save",
                "the program reads tensors it does not take as arguments or assigns to Python objects (captured "
                "state), which a saved program cannot reach; pass the tensors as arguments (or compile the "
                "nn.Module that owns them)",
            )
        eager = [op for entry in self.cache.values() if isinstance(entry, SegmentedEntry) for op in entry.eager_ops]
        vendor = next((op for op in eager if op.vendor), None)
        if vendor is not None:
            raise PurityError(
                "save",
                f"{vendor.op} runs PyTorch's kernel (a vendor kernel, chosen for speed); a saved program holds "
                "compiled code only: compile with torch_purity.compile(..., vendor_kernels=False) to save it",
            )
        if eager:
            raise PurityError(
                "save",
                f"{eager[0].op} runs in eager (it cannot be compiled: {eager[0].reason}); a saved program holds "
                "compiled code only",
            )
        if any(entry.backward is not None for entry in self.cache.values()):
            raise PurityError(
                "save",
                "an entry was compiled for training (inputs requiring grad, grad mode on); a saved program runs "
                "inference: compile it under torch.no_grad() before saving",
            )
        entries = [(structure, signature, entry) for (structure, signature, *_), entry in self.cache.items()]
        return save_program(entries, self.target, state_names, folder)


def _refuse_lazy_bits(args: tuple, kwargs: dict) -> None:
    """A tensor with PyTorch's negative or conjugate bit (`torch._neg_view(x)`)
    holds un-negated values in memory, which compiled code reads as they are:
    refused before anything runs (resolving it would copy, and a write into
    it would be lost)."""
    for position, leaf in enumerate((*args, *kwargs.values())):  # (top-level tensors: a cheap check per call)
        if isinstance(leaf, torch.Tensor) and (leaf.is_neg() or leaf.is_conj()):
            raise PurityError(
                "run",
                f"argument {position} has PyTorch's lazy {'negative' if leaf.is_neg() else 'conjugate'} bit, "
                "which compiled code cannot read: pass `t.resolve_neg().resolve_conj()` instead",
            )


def exported_dim_ranges(program: torch.export.ExportedProgram) -> dict[tuple[int, int], tuple[str, int, int | None]]:
    """(user input, dim) -> (input name, low, high: None for no bound) of each dim
    the export made dynamic, from its graph's placeholders and range constraints."""
    user_inputs = [spec.arg.name for spec in program.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT]
    values = {node.name: node.meta.get("val") for node in program.graph.nodes if node.op == "placeholder"}
    ranges: dict[tuple[int, int], tuple[str, int, int | None]] = {}
    for argument, name in enumerate(user_inputs):
        value = values.get(name)
        if not isinstance(value, torch.Tensor):
            continue
        for dim, size in enumerate(value.shape):
            if not isinstance(size, torch.SymInt):
                continue
            bounds = program.range_constraints.get(size.node.expr)
            low = int(bounds.lower) if bounds is not None and bounds.lower.is_finite else 0
            high = int(bounds.upper) if bounds is not None and bounds.upper.is_finite else None
            ranges[(argument, dim)] = (name, low, high)
    return ranges


def compile(
    program,
    *example_inputs,
    target: str = "cpu",
    dump_dir: str | None = None,
    dynamic: bool = False,
    fallback: str = "eager",
    vendor_kernels: bool = True,
) -> CompiledProgram:
    """Compiles `program` (a function or nn.Module) for `target` (`iree.targets.TARGETS`: "cpu", "cuda").

    With example inputs, the first entry is compiled now (errors surface here);
    other shapes, dtypes, layouts or input aliasing compile on first use.
    Int arguments are runtime values; with `dynamic=True` the sizes of the
    tensor arguments are too (dims marked with `torch._dynamo.mark_dynamic`
    are, always): one entry serves every size its guard admits.

    `fallback="eager"` (the default) runs ops Purity cannot compile (custom
    ops, ops without a lowering) in eager between compiled segments, with
    one EagerFallbackWarning naming them; `fallback="error"` refuses them.

    `vendor_kernels=True` (the default) runs large float32 convolutions on
    the CPU with PyTorch's kernel (oneDNN), between compiled segments, as
    Inductor does; `False` compiles every op with IREE (a saved program
    needs that)."""
    compiled = CompiledProgram(
        program, target, dump_dir, dynamic=dynamic, fallback=fallback, vendor_kernels=vendor_kernels
    )
    if example_inputs:
        compiled.entry_for(*example_inputs)
    return compiled
