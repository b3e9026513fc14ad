"""torch_purity.compile: a callable that behaves like the eager program.

Per call: the inputs' signature (shapes, dtypes, strides, storage offsets,
which inputs share storage, values of non-tensor inputs) selects a compiled
entry, compiling on a miss: trace -> mutable Torch IR -> linalg -> IREE. The
entry's calling convention (read from the value-boundary Torch IR) says how to
apply effects after the call: write each written input's final value into the
caller's tensor, apply metadata mutations (`as_strided_`), and return outputs
that are views of inputs as real views of the caller's tensors.

IREE may write into argument buffers it was not told are written
(design.md). On the CPU, only two kinds of input therefore cross as the
caller's own memory: a written input tied to its result (`iree.abi.output`,
written in place by the compiled code) and an input the linalg IR only reads
(`purity.unwritten`); every other input is a copy, and every other write
reaches the caller's tensor after a successful call. IREE checks argument
shapes and types before its first dispatch, so a call it rejects writes
nothing.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.utils._pytree as pytree
from torch_mlir import ir

from ..errors import PurityError
from ..importer import import_graph, new_context, renamed_inputs, trace_to_aten
from ..passes.function_attrs import dict_entries
from .iree_runtime import HostResults, IreeCompileError, LoadedModule, compile_linalg, iree_compile_command, to_host
from .lowering import LoweredProgram, lower_to_linalg, write_failing_ir

_TORCH_DTYPES = {
    "f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
    "si64": torch.int64, "si32": torch.int32, "si16": torch.int16, "si8": torch.int8,
    "ui8": torch.uint8, "i1": torch.bool,
}


@dataclass(frozen=True)
class ViewGeometry:
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


@dataclass
class CallingConvention:
    """How the compiled `main`'s results map back onto the eager program."""

    output_results: list[int]  # result index of each program output
    output_views: dict[int, tuple[int, ViewGeometry]]  # program output -> (input, view of it)
    written_inputs: list[tuple[int, int]]  # (result index, input index)
    metadata_mutations: dict[int, ViewGeometry]  # input index -> its new layout
    result_dtypes: list[torch.dtype]
    # Extra trailing arguments: (members, length) of each synthetic base, a
    # 1-d view of the members' storage from its first element.
    synthetic_bases: list[tuple[tuple[int, ...], int]] = field(default_factory=list)
    # purity-functionalize's records "kind|op|location|target|view chain", for reports.
    mutations: list[str] = field(default_factory=list)
    # Written inputs whose final value IREE stores into their own buffer (iree.abi.output).
    tied_inputs: set[int] = field(default_factory=set)
    # Arguments the compiled code only reads (purity.unwritten, from the linalg IR).
    unwritten_inputs: set[int] = field(default_factory=set)

    @classmethod
    def from_value_boundary_ir(cls, text: str) -> CallingConvention:
        context = new_context()
        with context:
            module = ir.Module.parse(text)
            function = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
            result_attrs = _attr_dicts(function, "res_attrs")
            arg_attrs = _attr_dicts(function, "arg_attrs")
            result_types = [str(t) for t in ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).results]
            mutations = (
                [ir.StringAttr(a).value for a in ir.ArrayAttr(function.attributes["purity.mutations"])]
                if "purity.mutations" in function.attributes
                else []
            )
        convention = cls([], {}, [], {}, [_dtype_of(t) for t in result_types], mutations=mutations)
        result_attrs += [{}] * (len(result_types) - len(result_attrs))
        for index, attrs in enumerate(result_attrs):
            if "purity.written_input" in attrs:
                convention.written_inputs.append((index, attrs["purity.written_input"]))
                continue
            output = len(convention.output_results)
            convention.output_results.append(index)
            if "purity.aliases_input" in attrs and "purity.view_sizes" in attrs:
                convention.output_views[output] = (
                    attrs["purity.aliases_input"],
                    ViewGeometry(attrs["purity.view_sizes"], attrs["purity.view_strides"], attrs["purity.view_storage_offset"]),
                )
        for index, attrs in enumerate(arg_attrs):
            if "iree.abi.output" in attrs:
                convention.tied_inputs.add(index)
            if "purity.synthetic_base_of" in attrs:
                convention.synthetic_bases.append((attrs["purity.synthetic_base_of"], attrs["purity.sizes"][0]))
            if "purity.new_sizes" in attrs:
                convention.metadata_mutations[index] = ViewGeometry(
                    attrs["purity.new_sizes"], attrs["purity.new_strides"], attrs["purity.new_storage_offset"]
                )
        return convention

    def arguments(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        """The compiled function's arguments: the inputs, then each synthetic
        base as a view of its members' storage (writes to it reach them all)."""
        bases = [torch.as_strided(tensors[members[0]], (length,), (1,), 0) for members, length in self.synthetic_bases]
        return [*tensors, *bases]


def _attr_dicts(function, key: str) -> list[dict[str, object]]:
    if key not in function.attributes:
        return []
    return [
        {name: _python_value(attr) for name, attr in dict_entries(d).items() if name.startswith(("purity.", "iree.abi."))}
        for d in ir.ArrayAttr(function.attributes[key])
    ]


def _python_value(attr):
    for kind, convert in (
        (ir.DenseI64ArrayAttr, lambda a: tuple(a)),
        (ir.IntegerAttr, lambda a: a.value),
        (ir.StringAttr, lambda a: a.value),
    ):
        try:
            return convert(kind(attr))
        except (ValueError, TypeError):
            continue
    return str(attr)


def _dtype_of(type_text: str) -> torch.dtype | None:
    element = type_text.rsplit(",", 1)[-1].rstrip(">")
    return _TORCH_DTYPES.get(element)


# ----------------------------------------------------------------------------
# Signatures and specialization
# ----------------------------------------------------------------------------


def input_signature(args: Sequence[object]) -> tuple:
    """What a compiled entry depends on: tensor layouts, storage sharing, other values.

    Runs on every call, so it reads only cheap attributes (under 1 µs per
    tensor; `benchmarks/guard_cost.py`)."""
    storages: dict[int, int] = {}
    objects: dict[int, int] = {}
    key: list[object] = []
    append = key.append
    for position, arg in enumerate(args):
        if isinstance(arg, torch.Tensor):
            storage = arg.untyped_storage().data_ptr()
            group = storages.setdefault(storage, len(storages)) if arg.numel() else -1
            # The same object twice differs from two views of one storage: a
            # metadata mutation of one is then seen through the other.
            same_object_as = objects.setdefault(id(arg), position)
            append((arg.shape, arg.dtype, arg.stride(), arg.storage_offset(), arg.device, group, same_object_as))
        else:
            try:
                hash(arg)
                append(("value", type(arg), arg))
            except TypeError:
                append(("value", type(arg), repr(arg)))
    return tuple(key)


@dataclass
class _Specialized:
    """The program as a function of its tensor inputs only, with flat tensor outputs."""

    function: Callable[..., tuple]
    tensor_positions: list[int]
    names: list[str]
    output_spec: list = field(default_factory=list)  # [TreeSpec, {leaf index: constant}]


def _specialize(program, args: Sequence[object], state_names: list[str]) -> _Specialized:
    tensor_positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    constants = {i: a for i, a in enumerate(args) if not isinstance(a, torch.Tensor)}
    names = [state_names[i] if i < len(state_names) else f"input:{i - len(state_names)}" for i in tensor_positions]
    specialized = _Specialized(lambda *t: (), tensor_positions, names)

    def function(*tensors):
        full = list(args)
        for position, tensor in zip(tensor_positions, tensors):
            full[position] = tensor
        for position, constant in constants.items():
            full[position] = constant
        leaves, spec = pytree.tree_flatten(program(*full))
        specialized.output_spec[:] = [spec, {i: v for i, v in enumerate(leaves) if not isinstance(v, torch.Tensor)}]
        return tuple(v for v in leaves if isinstance(v, torch.Tensor))

    specialized.function = function
    return specialized


# ----------------------------------------------------------------------------
# Compiled entries
# ----------------------------------------------------------------------------


@dataclass
class CompiledEntry:
    specialized: _Specialized
    convention: CallingConvention
    module: LoadedModule
    lowered: LoweredProgram
    mutable_ir: str
    seconds: dict[str, float]

    # Per input slot: (data_ptr, buffer view over the caller's memory, storage
    # address range) of the last call, reused while the same memory comes
    # again. Holding the view keeps that tensor's storage alive until another
    # tensor takes the slot.
    imports: dict[int, tuple[int, object, tuple[int, int]]] = field(default_factory=dict)
    zero_copy_inputs: set[int] | None = None
    output_form: str | None = None  # "leaf", "tuple" or "tree", found on the first call

    def run(self, args: Sequence[object]):
        convention = self.convention
        tensors = convention.arguments([args[i] for i in self.specialized.tensor_positions])
        try:
            if self.module.target == "cpu":
                results, imported = self._invoke_on_host(tensors)
            else:
                results, imported = self._invoke_generic(tensors)
        except PurityError:
            raise
        except Exception as error:  # argument checks fail before any write
            raise PurityError("run", f"{type(error).__name__}: {error}") from error

        in_place = convention.tied_inputs.intersection(imported)
        copied_back = [(r, i) for r, i in convention.written_inputs if i not in in_place]
        if copied_back or convention.metadata_mutations:
            with torch.no_grad():
                for result_index, input_index in copied_back:
                    # Straight from IREE's buffer into the caller's tensor: one copy.
                    tensors[input_index].copy_(torch.from_numpy(results[result_index]))
                for input_index, layout in convention.metadata_mutations.items():
                    tensors[input_index].as_strided_(layout.sizes, layout.strides, layout.offset)
        outputs = []
        handed_out: list[tuple[int, int]] | None = None
        for output, result_index in enumerate(convention.output_results):
            if output in convention.output_views:
                input_index, view = convention.output_views[output]
                outputs.append(tensors[input_index].as_strided(view.sizes, view.strides, view.offset))
                continue
            if handed_out is None:
                handed_out = [self.imports[i][2] for i in imported]
            outputs.append(_to_torch(results[result_index], convention.result_dtypes[result_index], handed_out))
        return self._rebuild_outputs(outputs)

    def _rebuild_outputs(self, outputs: list[torch.Tensor]):
        """The program's return value (its pytree, with non-tensor leaves) from the tensor outputs."""
        spec, constants = self.specialized.output_spec
        if self.output_form is None:
            simple = not constants and (spec.is_leaf() or (spec.type is tuple and all(c.is_leaf() for c in spec.children())))
            self.output_form = ("leaf" if spec.is_leaf() else "tuple") if simple else "tree"
        # The common forms, without pytree's cost on every call.
        if self.output_form == "leaf":
            return outputs[0]
        if self.output_form == "tuple":
            return tuple(outputs)
        leaves, tensor_outputs = [], iter(outputs)
        for index in range(spec.num_leaves):
            leaves.append(constants[index] if index in constants else next(tensor_outputs))
        return pytree.tree_unflatten(leaves, spec)

    def _invoke_on_host(self, tensors: list[torch.Tensor]) -> tuple[HostResults, list[int]]:
        """CPU: tied inputs (written in place) and inputs IREE only reads go as
        the caller's own memory (returned: their indices); the others as copies
        IREE may write into."""
        if self.zero_copy_inputs is None:
            self.zero_copy_inputs = self._zero_copy_candidates(tensors)
        arguments, imported = [], []
        for index, tensor in enumerate(tensors):
            view = self._import(index, tensor) if index in self.zero_copy_inputs else None
            if view is None:
                arguments.append(self.module.copy_in(_host_array(tensor)))
                continue
            arguments.append(view)
            imported.append(index)
        return self.module.invoke_on_host(arguments, len(self.convention.result_dtypes)), imported

    def _zero_copy_candidates(self, tensors: list[torch.Tensor]) -> set[int]:
        """Tied inputs, and inputs IREE cannot write (purity.unwritten) that
        share no storage with a tied input: such a view would see the write
        before IREE's reads of it, unlike the copy the program was compiled for."""
        convention = self.convention
        tied_storages = {tensors[i].untyped_storage().data_ptr() for i in convention.tied_inputs}
        return set(convention.tied_inputs) | {
            i for i in convention.unwritten_inputs if tensors[i].untyped_storage().data_ptr() not in tied_storages
        }

    def _import(self, index: int, tensor: torch.Tensor):
        address = tensor.data_ptr()
        cached = self.imports.get(index)
        if cached is not None and cached[0] == address:
            return cached[1]  # the entry's signature fixes device, dtype and layout
        if not tensor.is_cpu or tensor.dtype == torch.bfloat16:
            return None
        view = self.module.wrap_in_place(tensor.detach().numpy())
        if view is not None:
            self.imports[index] = (address, view, _address_range(tensor))
        return view

    def _invoke_generic(self, tensors: list[torch.Tensor]) -> tuple[list[np.ndarray], list[int]]:
        """Other targets: inputs go as host copies through IREE's invoker."""
        results = self.module([_host_array(t) for t in tensors])
        return [to_host(r) for r in results], []


def _address_range(tensor: torch.Tensor) -> tuple[int, int]:
    start = tensor.untyped_storage().data_ptr()
    return start, start + tensor.untyped_storage().nbytes()


def _host_array(tensor: torch.Tensor) -> np.ndarray:
    """The tensor as a C-contiguous host array for IREE. IREE copies such an
    array into a buffer of its own when it converts the argument (checked by
    test_iree_copies_host_array_arguments), so a contiguous CPU tensor is
    handed over as a view: the caller's memory is only read."""
    if tensor.dtype == torch.bfloat16:
        raise PurityError("run", "bfloat16 inputs are not supported by the host runtime yet")
    array = tensor.detach().cpu().numpy()
    if array.flags.c_contiguous:
        return array
    # np.ascontiguousarray would turn a 0-d array into shape (1,).
    return np.array(array, copy=True, order="C")


def _to_torch(array: np.ndarray, dtype: torch.dtype | None, handed_out: list[tuple[int, int]]) -> torch.Tensor:
    """An output over IREE's result buffer, without a copy, unless that memory
    is already somebody's: a caller's tensor handed over in place, or an
    earlier output (CSE can merge two outputs into one buffer). `handed_out`
    collects the ranges given away so far."""
    tensor = torch.from_numpy(array)
    start = tensor.data_ptr()
    end = start + array.nbytes
    for other_start, other_end in handed_out:
        if start < other_end and other_start < end:
            tensor = tensor.clone()
            break
    else:
        if array.nbytes:
            handed_out.append((start, end))
    return tensor.to(dtype) if dtype is not None and tensor.dtype != dtype else tensor


def build_entry(
    program, args: Sequence[object], state_names: list[str], target: str, dump_dir: str | None, user_code: object
) -> CompiledEntry:
    seconds: dict[str, float] = {}
    specialized = _specialize(program, args, state_names)
    tensors = [args[i] for i in specialized.tensor_positions]
    start = time.perf_counter()
    context = new_context()
    graph, inputs = trace_to_aten(specialized.function, tensors, context, user_code)
    seconds["trace"] = time.perf_counter() - start
    start = time.perf_counter()
    module = import_graph(graph, renamed_inputs(inputs, specialized.names), context)
    seconds["import"] = time.perf_counter() - start
    mutable_ir = module.operation.get_asm(enable_debug_info=True)
    lowered = lower_to_linalg(module, dump_dir)
    seconds.update(lowered.seconds)
    convention = CallingConvention.from_value_boundary_ir(lowered.value_boundary)
    convention.unwritten_inputs = set(lowered.unwritten_arguments)
    start = time.perf_counter()
    try:
        vmfb = compile_linalg(lowered.linalg, target)
    except IreeCompileError as error:
        path = write_failing_ir(lowered.linalg, "iree-compile", dump_dir)
        raise PurityError(
            "compile",
            f"IREE failed for target '{target}': {error}\n  reproduce with: {iree_compile_command(str(path), target)}",
        ) from None
    seconds["iree-compile"] = time.perf_counter() - start
    loaded = LoadedModule(target, vmfb)
    return CompiledEntry(specialized, convention, loaded, lowered, mutable_ir, seconds)


def _flatten(state: Sequence[object], args: Sequence[object]) -> tuple[list[object], object]:
    """The leaves of `[*state, *args]` and their structure. Arguments that are
    leaves or flat lists/tuples of leaves (an optimizer's parameter lists) are
    flattened here, cheaply on every call; anything nested goes to pytree."""
    leaves = list(state)
    shape: list[object] = [None] * len(state)
    for arg in args:
        kind = type(arg)
        if kind is list or kind is tuple:
            for item in arg:
                if isinstance(item, (list, tuple, dict)):
                    return pytree.tree_flatten([*state, *args])
            leaves.extend(arg)
            shape.append((kind, len(arg)))
        elif isinstance(arg, (list, tuple, dict)):
            return pytree.tree_flatten([*state, *args])
        else:
            leaves.append(arg)
            shape.append(None)
    return leaves, tuple(shape)


def _unflatten(leaves: list[object], structure: object) -> list[object]:
    """The inverse of `_flatten`: state and arguments, in order."""
    if not isinstance(structure, tuple):
        return pytree.tree_unflatten(leaves, structure)
    values, position = [], 0
    for entry in structure:
        if entry is None:
            values.append(leaves[position])
            position += 1
        else:
            kind, length = entry
            values.append(kind(leaves[position : position + length]))
            position += length
    return values


class CompiledProgram:
    """What `torch_purity.compile` returns: call it like the eager program."""

    def __init__(self, program, target: str = "cpu", dump_dir: str | None = None) -> None:
        if target not in ("cpu", "cuda"):
            raise ValueError(f"unknown target '{target}' (known: cpu, cuda)")
        self.program = program
        self.target = target
        self.dump_dir = dump_dir
        self.cache: dict[tuple, CompiledEntry] = {}
        self._module = program if isinstance(program, torch.nn.Module) else None

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

        def call_with_state(*args):
            bound = dict(zip(names, args[:state_count]))
            return torch.func.functional_call(module, bound, tuple(args[state_count:]))

        return call_with_state

    def _check_arguments(self, args: tuple) -> None:
        """A call the program's signature rejects fails here, before any tracing."""
        target = self._module.forward if self._module is not None else self.program
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            return  # builtins and some callables have no signature: tracing will tell
        try:
            signature.bind(*args)
        except TypeError as error:
            name = getattr(target, "__qualname__", type(target).__name__)
            raise PurityError("call", f"{name}{signature} cannot take {len(args)} arguments: {error}") from None

    def entry_for(self, *args) -> tuple[CompiledEntry, list[object]]:
        """The compiled entry for these arguments, and the flat list it takes
        (module state, then the leaves of the arguments: lists, tuples and
        dicts of tensors are flattened)."""
        state_names, state = self._state() if self._module is not None else ((), ())
        leaves, structure = _flatten(state, args)
        key = (structure, input_signature(leaves))
        entry = self.cache.get(key)
        if entry is None:
            self._check_arguments(args)
            program = self._callable(len(state))

            def on_leaves(*flat):
                return program(*_unflatten(list(flat), structure))

            entry = build_entry(on_leaves, leaves, state_names, self.target, self.dump_dir, self.program)
            self.cache[key] = entry
        return entry, leaves

    def __call__(self, *args):
        entry, full = self.entry_for(*args)
        return entry.run(full)


def compile(program, *example_inputs, target: str = "cpu", dump_dir: str | None = None) -> CompiledProgram:
    """Compiles `program` (a function or nn.Module) for `target` ("cpu" or "cuda").

    With example inputs, the first entry is compiled now (errors surface here);
    other shapes, dtypes, layouts or input aliasing compile on first use."""
    compiled = CompiledProgram(program, target, dump_dir)
    if example_inputs:
        compiled.entry_for(*example_inputs)
    return compiled
