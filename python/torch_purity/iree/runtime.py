"""A compiled entry at run time: what it takes, how its inputs cross to IREE,
and how its results become the eager program's effects and outputs.

Needs torch and IREE's runtime only (no torch-mlir, no IREE compiler), so a
program saved with `CompiledProgram.save` runs where no compiler is installed
(`torch_purity.load`).

Memory crosses from torch to IREE only, as DLPack capsules, on the CPU and
on the GPU alike; nothing crosses back (IREE's CUDA allocator cannot export
what it allocated). Inputs: IREE may write into argument buffers it was not
told are written (docs/architecture.md, IREE behaviours;
IREE-WORKAROUND(untied-argument-writes)), so only two kinds of input cross as the
caller's own memory: a written input tied to its result (`iree.abi.output`,
written in place by the compiled code) and an input the iree-abi IR only reads
(`purity.unwritten`). Every other input crosses as a fresh copy, and every
other write reaches the caller's tensor after a successful call. Outputs:
each result has a storage argument (purity-store-results-in-arguments), and
the runtime passes a fresh torch tensor there, which becomes the output
(the steady call plan keeps rank-0 storage from call to call and hands
out copies: `_result_storage`).
IREE checks argument shapes and types before its first dispatch, and
validates buffer access before it runs a submission, so a call it rejects
writes nothing.

On the GPU, IREE runs on its own stream. Each call first waits for torch's
current stream, so IREE reads inputs torch has finished writing, and
(because `main` returns only when its work is done) torch then reads finished
results. The wait also keeps IREE from reusing memory of a freed output that
work torch queued earlier still reads.
"""

from __future__ import annotations

import atexit
import copy
import ctypes
import operator
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import iree.runtime as iree_runtime
import numpy as np
import torch
import torch.utils._pytree as pytree

from ..contract import CallingConvention, IndexCheck
from ..errors import PurityError, PurityIndexError
from ..guards import SymbolicShapes
from .host_memory import fresh_tensor, fresh_tensor_maker
from .module import LoadedModule, to_host

# IREE-WORKAROUND(unaligned-import): IREE's buffers start on 64-byte boundaries. A view starting inside its
# storage (x[1:]) is not aligned that way; writing one through the tie
# crashed on the CPU (found by `purity fuzz`), so such an input is copied.
_IMPORT_ALIGNMENT = 64


def synthetic_base_arguments(convention: CallingConvention, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """The compiled function's arguments: the inputs, then each synthetic
    base as a view of its members' storage (writes to it reach them all)."""
    bases = [
        torch.as_strided(tensors[members[0]], (length,), (1,), 0) for members, length in convention.synthetic_bases
    ]
    return [*tensors, *bases]


# ----------------------------------------------------------------------------
# Signatures and argument structure
# ----------------------------------------------------------------------------


_INT = ("int",)
_CONTIGUOUS = "contiguous"


def input_signature(
    args: Sequence[object],
    dynamic_dims: dict[int, tuple[int, ...]] | None = None,
    requiring_grad: list[int] | None = None,
) -> tuple:
    """What a compiled entry depends on: tensor layouts, storage sharing,
    values other than ints (an int's value is checked by the entry's guard).
    Where `requiring_grad` is given, the positions of the tensors that
    require grad are appended to it (the same walk serves the grad key).

    Runs on every call, so it reads only cheap attributes (under 1 µs per
    tensor; `benchmarks/guard_cost.py`). Sizes along `dynamic_dims` (leaf
    -> dims: contiguous tensors starting their storage) are left out, as
    the strides that follow from them: the entry's guard checks them."""
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
            if requiring_grad is not None and arg.requires_grad:
                requiring_grad.append(position)
            if dynamic_dims and position in dynamic_dims:
                dims = dynamic_dims[position]
                shape = tuple(-1 if d in dims else size for d, size in enumerate(arg.shape))
                append((shape, arg.dtype, _CONTIGUOUS, 0, arg.device, group, same_object_as))
                continue
            append((arg.shape, arg.dtype, arg.stride(), arg.storage_offset(), arg.device, group, same_object_as))
        else:
            append(_value_key(arg))
    return tuple(key)


def _value_key(arg: object) -> object:
    """What the signature holds of a leaf that is not a tensor."""
    if type(arg) is int:
        return _INT  # its value is the entry's guard's business (runtime ints)
    try:
        hash(arg)
        return ("value", type(arg), arg)
    except TypeError:
        return ("value", type(arg), repr(arg))


# Dynamo's C++ check of tensor metadata (dtype, device, requires_grad,
# dispatch keys, sizes, strides): about 50 ns per tensor against the ~0.9 µs
# of `input_signature`'s walk. A private API of torch: without it, every
# call takes the walk (`SignatureRepeat.of` returns None).
try:
    from torch._C._dynamo.guards import TensorGuards as _TensorGuards
except ImportError:  # pragma: no cover - torch builds without Dynamo
    _TensorGuards = None

_data_pointer = torch.Tensor.data_ptr
_storage_offset = torch.Tensor.storage_offset


class SignatureRepeat:
    """Whether a call's leaves have the `input_signature` of the call this
    was made from, checked mostly in C instead of walking them in Python.
    Every part of the signature is checked again: the values that are not
    tensors (as the signature holds them); Dynamo's C++ tensor check
    (dtype, device, requires_grad, dispatch keys, sizes, strides); the
    storage offsets; which leaves are the same object and which share a
    storage. Where the earlier call's tensors were distinct objects in
    distinct storages, each starting its storage (an optimizer's
    parameters, gradients and buffers), the last two are distinct data
    pointers; otherwise the same grouping of ids and storages. So a tensor
    resized, restrided or rebound to other memory (`set_`, `.data =`) fails
    it where its signature changed, and new tensors with the signature of
    the old (fresh gradients each step) pass it. For SGD's 150 tensors:
    about 50 µs against 145 µs for the walk and the key's lookup (median
    of 1000; benchmarks/guard_cost.py); for a one-row KV write's two
    tensors and an int, 1.5 µs against 3.4 µs. Not for signatures with
    dynamic dims (their sizes are not in the signature). Since Dynamo's
    check compares dispatch keys, a repeat also keeps PyTorch's lazy
    negative and conjugate bits as the last call had them."""

    __slots__ = (
        "count",
        "picks",
        "int_positions",
        "value_positions",
        "values",
        "guards",
        "firsts",
        "offsets",
        "objects",
        "storages",
        "plain",
    )

    @classmethod
    def of(cls, leaves: Sequence[object]) -> SignatureRepeat | None:
        """The check for calls repeating these leaves' signature; None where
        there is no tensor or Dynamo's check is missing."""
        tensor_positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        if _TensorGuards is None or not tensor_positions:
            return None
        repeat = cls()
        tensors = [leaves[i] for i in tensor_positions]
        repeat.count = len(leaves)
        if len(tensor_positions) == 1:  # (itemgetter of one position returns the item, not a tuple)
            only = tensor_positions[0]
            repeat.picks = lambda leaves: (leaves[only],)
        else:
            repeat.picks = operator.itemgetter(*tensor_positions)
        is_tensor = set(tensor_positions)
        # Ints by their type alone (their values are the entry's guard's business), other values by their key.
        repeat.int_positions = [i for i in range(len(leaves)) if type(leaves[i]) is int]
        repeat.value_positions = [i for i in range(len(leaves)) if i not in is_tensor and type(leaves[i]) is not int]
        repeat.values = [_value_key(leaves[i]) for i in repeat.value_positions]
        repeat.objects = _object_groups(tensors)
        # Dynamo's check refuses an object passed twice: it checks each
        # object once, the object groups say where it comes again.
        firsts = [k for k, first in enumerate(repeat.objects) if k == first]
        repeat.firsts = None if len(firsts) == len(tensors) else (lambda ts: [ts[k] for k in firsts])
        distinct = [tensors[k] for k in firsts]
        repeat.guards = _TensorGuards(
            *distinct,
            dynamic_dims_sizes=[list(t.shape) for t in distinct],
            dynamic_dims_strides=[list(t.stride()) for t in distinct],
        )
        repeat.offsets = list(map(_storage_offset, tensors))
        repeat.storages = _storage_groups(tensors)
        everything_apart = list(range(len(tensors)))
        repeat.plain = (
            repeat.objects == everything_apart and repeat.storages == everything_apart and not any(repeat.offsets)
        )
        return repeat

    def holds(self, leaves: Sequence[object]) -> bool:
        if len(leaves) != self.count:
            return False
        for position in self.int_positions:
            if type(leaves[position]) is not int:
                return False
        if self.values and [_value_key(leaves[i]) for i in self.value_positions] != self.values:
            return False
        tensors = self.picks(leaves)
        # Objects first: where they match, a leaf that is no tensor sits at
        # a first position and fails Dynamo's check.
        if not self.plain and _object_groups(tensors) != self.objects:
            return False
        checked = tensors if self.firsts is None else self.firsts(tensors)
        if not self.guards.check(*checked) or list(map(_storage_offset, tensors)) != self.offsets:
            return False
        if self.plain:
            # Offsets 0: a data pointer is its storage's, so distinct pointers
            # are distinct storages (and distinct objects).
            return len(set(map(_data_pointer, tensors))) == len(tensors)
        return _storage_groups(tensors) == self.storages


def _object_groups(tensors: Sequence[torch.Tensor]) -> list[int]:
    """Per tensor, the first position holding the same object."""
    first: dict[int, int] = {}
    return [first.setdefault(id(t), position) for position, t in enumerate(tensors)]


def _storage_groups(tensors: Sequence[torch.Tensor]) -> list[int]:
    """Per tensor, its storage's number in order of appearance (-1: empty), as `input_signature` numbers them."""
    numbers: dict[int, int] = {}
    return [numbers.setdefault(t.untyped_storage().data_ptr(), len(numbers)) if t.numel() else -1 for t in tensors]


def flatten_arguments(state: Sequence[object], args: Sequence[object]) -> tuple[list[object], object]:
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


def unflatten_arguments(leaves: list[object], structure: object) -> list[object]:
    """The inverse of `flatten_arguments`: state and arguments, in order."""
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


# ----------------------------------------------------------------------------
# One compiled entry's call
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ObjectTemplate:
    """A returned Python object that pytree does not flatten but that holds
    tensors (a Hugging Face `DynamicCache`): kept as traced, with its tensors
    returned as outputs; each call returns a copy holding that call's tensors
    (no traced, fake tensor escapes)."""

    value: object
    tensors: tuple[torch.Tensor, ...]  # as traced, in output order
    shared: tuple[object, ...] = ()  # objects the caller had before the call: held, not copied
    # Numbers read from tensor data inside it (traced symbol, "int"/"float"/"bool"):
    # 0-d tensor outputs after the tensors, each call's value put in the copy.
    numbers: tuple[tuple[object, str], ...] = ()

    @property
    def output_count(self) -> int:
        return len(self.tensors) + len(self.numbers)

    def rebuild(self, outputs: list[torch.Tensor]) -> object:
        replacements: dict[int, object] = {id(kept): kept for kept in self.shared}
        replacements |= {id(traced): output for traced, output in zip(self.tensors, outputs)}
        number_outputs = outputs[len(self.tensors) :]
        replacements |= {
            id(traced): OutputNumber(kind).rebuild([output])
            for (traced, kind), output in zip(self.numbers, number_outputs)
        }
        return copy.deepcopy(self.value, replacements)


@dataclass(frozen=True)
class OutputNumber:
    """A returned Python number computed from tensor data (`x.sum().item()`,
    arithmetic on it): the program returns it as a 0-d tensor output, and
    each call gives back that call's value as eager's Python type."""

    kind: str  # "int", "float" or "bool"

    def rebuild(self, outputs: list[torch.Tensor]) -> int | float | bool:
        return {"int": int, "float": float, "bool": bool}[self.kind](outputs[0].item())

    def to_json(self) -> dict:
        return {"output_number": self.kind}


@dataclass(frozen=True)
class RepeatedOutput:
    """A tensor leaf of the output that is the tensor at an earlier leaf
    (`s = x.sum(); return s, s`): eager returns one object at both places,
    so a write through one shows through the other. The program returns it
    once; each call gives back that call's tensor at both places."""

    leaf: int  # the earlier leaf's index

    def to_json(self) -> dict:
        return {"repeated_output": self.leaf}


@dataclass
class Executable:
    """A compiled `main` and how to call it like the eager program."""

    convention: CallingConvention
    module: LoadedModule
    # Which of the flat arguments the compiled function takes, in order: the
    # tensors, and ints it takes as runtime values (i64 arguments).
    argument_positions: list[int]
    # [TreeSpec, {leaf index: constant}] of the program's return value, filled
    # when the program is traced (or read from a saved program).
    output_spec: list = field(default_factory=list)

    # Per input slot: (data_ptr, shape, buffer view over the caller's memory)
    # of the last call, reused while the same memory comes again with the
    # same shape (an entry with dynamic dims takes one storage at several
    # sizes). Holding the view keeps that tensor's storage alive until
    # another tensor takes the slot.
    imports: dict[int, tuple[int, torch.Size, object]] = field(default_factory=dict)
    zero_copy_inputs: set[int] | None = None
    # How calls cross to IREE: "unchecked" until the first call, then "in
    # place" (torch's memory, imported) or "host copies" (IREE's invoker).
    # IREE writes imported memory only with dispatches
    # (purity-store-results-in-arguments); should the compiled code still
    # write one with a transfer, IREE refuses the call before running any of
    # it. The first call therefore passes tied inputs as copies, so such a
    # refusal leaves the caller's tensors untouched; the entry then uses host
    # copies, which IREE may write as it likes.
    hand_over: str = "unchecked"
    output_form: str | None = None  # "leaf", "tuple", "none" or "tree", found on the first call
    # Whether the inputs are on the target's device. Fixed per entry where the
    # signature includes devices (CompiledProgram), checked per call otherwise.
    devices_fixed: bool = False
    # Traced with grad mode on and inputs requiring grad, no output required
    # grad (they were detached, or integer): outputs are returned as they are.
    outputs_without_grad: bool = False
    # Shapes of results that depend on runtime ints or dynamic dims, per call.
    symbolic_shapes: SymbolicShapes | None = None
    on_target: bool | None = None
    # Per set of inputs that crossed as the caller's memory (a call or two
    # find every set): (result, input) of the written inputs to copy back,
    # and the inputs IREE wrote in place through their tie.
    _effects: dict[tuple[int, ...], tuple[list[tuple[int, int]], list[int]]] = field(default_factory=dict)
    # The index checks' flag buffer and its IREE import, reused by every call.
    _flags: tuple[torch.Tensor, object] | None = None
    # `run_without_grad`'s plan: None until decided, False for `run` always.
    _plan: Callable[[Sequence[object]], object] | bool | None = None
    # The inputs' device, kept where it is fixed (devices_fixed).
    _device: torch.device | None = None

    def __post_init__(self) -> None:
        _live_executables[id(self)] = self  # (dataclasses are unhashable: keyed by id)

    def release_iree_objects(self) -> None:
        """Drops what this executable holds of IREE's runtime (the opened
        module, imported buffers, the call plan); a later call opens them again."""
        self.imports.clear()
        self._flags = None
        self._plan = None
        if self.module is not None:
            self.module.close()

    def run(self, args: Sequence[object], may_need_grad: bool = True):
        """One call on the flat arguments. `may_need_grad=False`: the caller
        knows no input requires grad (or grad mode is off)."""
        tensors = self._arguments(args)
        needing_grad = (
            _inputs_needing_grad(tensors, self.convention) if may_need_grad and torch.is_grad_enabled() else ()
        )
        _, outputs = self.execute(tensors)
        if needing_grad and not self.outputs_without_grad:
            outputs = _without_backward(outputs, self.convention, needing_grad)
        return self._rebuild_outputs(outputs)

    def run_without_grad(self, args: Sequence[object]):
        """`run(args, may_need_grad=False)`; once the entry's calls reach
        their steady state (the second call), through the plan
        `_steady_call` makes of it where the entry has one."""
        plan = self._plan
        if plan:
            return plan(args)
        result = self.run(args, may_need_grad=False)
        if plan is None:
            self._plan = self._steady_call(args)
        return result

    def _steady_call(self, args: Sequence[object]) -> Callable[[Sequence[object]], object] | bool | None:
        """A call of this entry on the CPU with every tensor argument crossing
        as the caller's memory already imported by an earlier call (written
        ones tied, read ones unwritten) and every output a result of its own:
        what `run` does there, without the steps such an entry never takes
        (host copies, synthetic bases, a random seed, results sized per call,
        metadata changes, outputs that are views) and the layers between
        them. A KV row write's call took 18 µs through `run`. Written inputs
        that are not tied (a rank-0 one: BatchNorm's `num_batches_tracked`)
        are copied back from their results, as `run` does; a training-mode
        BatchNorm's call took about 60 µs more through `run`.
        None while the entry's calls have not settled (after a call or two),
        False for an entry that needs `run`. An argument whose memory was not
        imported before (another tensor of the same layout) makes the plan
        fall back on `run` for that call, before anything is written."""
        convention = self.convention
        if (
            convention is None
            or not self.devices_fixed
            or self.on_target is False
            or self._on_cuda
            or self.hand_over == "host copies"
        ):
            return False
        if self.hand_over != "in place" or self.zero_copy_inputs is None or self._device is None:
            return None
        tensor_indices = [i for i, p in enumerate(self.argument_positions) if type(args[p]) is not int]
        effects = self._effects.get(tuple(tensor_indices))
        if (
            convention.synthetic_bases
            or convention.rng_seed_input is not None
            or self.symbolic_shapes is not None
            or convention.metadata_mutations
            or not self._outputs_are_results
            or self.output_form not in ("leaf", "tuple", "none")
            or not self.zero_copy_inputs.issuperset(tensor_indices)
            or effects is None
        ):
            return False
        return _steady_plan(self, set(tensor_indices), effects)

    def execute(self, tensors: list[torch.Tensor]) -> tuple[dict[int, torch.Tensor] | list[torch.Tensor], list]:
        """One call of the compiled function on its arguments (`_arguments`):
        the effects applied to the caller's tensors, and (every result, the
        program's flat tensor outputs)."""
        convention = self.convention
        on_target = self.on_target
        if on_target is None:
            device_type = self.module.device_type
            on_target = all(type(t) is int or t.device.type == device_type for t in tensors)
            if self.devices_fixed:
                self.on_target = on_target
        try:
            if on_target and self.hand_over != "host copies":
                results, imported = self._invoke_in_place(tensors)
            else:
                results, imported = self._invoke_generic(tensors)
        except PurityError:
            raise
        except Exception as error:  # argument checks fail before any write
            raise PurityError("run", f"{type(error).__name__}: {error}") from error

        if convention.index_checks is not None:
            _raise_on_failed_check(results[convention.index_checks[0]], convention.index_checks[1])
        self._apply_effects(tensors, results, imported)
        if self._outputs_are_results:
            return results, [results[r] for r in convention.output_results]
        outputs = []
        symbolic_views = None
        if self.symbolic_shapes is not None and self.symbolic_shapes.views:
            symbolic_views = self.symbolic_shapes.view_layouts(tensors)
        for output, result_index in enumerate(convention.output_results):
            if symbolic_views is not None and output in symbolic_views:
                sizes, strides, offset = symbolic_views[output]
                argument = self.symbolic_shapes.views[output][0]
                outputs.append(tensors[argument].as_strided(sizes, strides, offset))
                continue
            if output in convention.output_views:
                input_index, view = convention.output_views[output]
                outputs.append(tensors[input_index].as_strided(view.sizes, view.strides, view.offset))
                continue
            if output in convention.output_bases:
                base_result, view = convention.output_bases[output]
                outputs.append(results[base_result].as_strided(view.sizes, view.strides, view.offset))
                continue
            outputs.append(results[result_index])  # a storage tensor: the output's own memory
        return results, outputs

    def _apply_effects(self, tensors: list[torch.Tensor], results, imported: list[int]) -> None:
        """The call's effects on the caller's tensors: written inputs IREE did
        not write in place are copied back, metadata mutations applied."""
        convention = self.convention
        effects = self._effects.get(tuple(imported))
        if effects is None:
            in_place = convention.tied_inputs.intersection(imported)
            copied_back = [(r, i) for r, i in convention.written_inputs if i not in in_place]
            written_in_place = [i for _, i in self._tied_results if i in in_place]
            effects = self._effects[tuple(imported)] = (copied_back, written_in_place)
        copied_back, written_in_place = effects
        if written_in_place:
            # IREE wrote the caller's memory directly: bump its version as
            # torch's own in-place ops do, so autograd still refuses a
            # backward through a saved tensor written since (as eager). One
            # call for all of them (an optimizer step writes hundreds).
            torch.autograd.graph.increment_version([tensors[i] for i in written_in_place])
        if copied_back or convention.metadata_mutations:
            with torch.no_grad():
                for result_index, input_index in copied_back:
                    tensors[input_index].copy_(results[result_index])
                for input_index, layout in convention.metadata_mutations.items():
                    tensors[input_index].as_strided_(layout.sizes, layout.strides, layout.offset)

    def _arguments(self, args: Sequence[object]) -> list[torch.Tensor]:
        """The compiled function's inputs: the tensor arguments, the
        synthetic bases of those sharing storage, and the seed of its random
        ops where it has any."""
        if not self.convention.synthetic_bases and self.convention.rng_seed_input is None:
            return [args[i] for i in self.argument_positions]
        tensors = synthetic_base_arguments(self.convention, [args[i] for i in self.argument_positions])
        if self.convention.rng_seed_input is not None:
            tensors.append(_draw_seed(_device_of(tensors, self.module.device_type)))
        return tensors

    def _rebuild_outputs(self, outputs: list[torch.Tensor]):
        """The program's return value (its pytree, with non-tensor leaves) from the tensor outputs."""
        spec, constants = self.output_spec
        if self.output_form is None:
            simple = not constants and (
                spec.is_leaf() or (spec.type is tuple and all(c.is_leaf() for c in spec.children()))
            )
            if spec.is_leaf() and constants.get(0, False) is None:
                self.output_form = "none"  # (an optimizer step's `return None`)
            else:
                self.output_form = ("leaf" if spec.is_leaf() else "tuple") if simple else "tree"
        # The common forms, without pytree's cost on every call.
        if self.output_form == "none":
            return None
        if self.output_form == "leaf":
            return outputs[0]
        if self.output_form == "tuple":
            return tuple(outputs)
        leaves, tensor_outputs = [], iter(outputs)
        for index in range(spec.num_leaves):
            if index not in constants:
                leaves.append(next(tensor_outputs))
            elif isinstance(constants[index], ObjectTemplate):
                template = constants[index]
                leaves.append(template.rebuild([next(tensor_outputs) for _ in range(template.output_count)]))
            elif isinstance(constants[index], OutputNumber):
                leaves.append(constants[index].rebuild([next(tensor_outputs)]))
            elif isinstance(constants[index], RepeatedOutput):
                leaves.append(leaves[constants[index].leaf])
            else:
                leaves.append(constants[index])
        return pytree.tree_unflatten(leaves, spec)

    def _invoke_in_place(self, tensors: list[torch.Tensor]) -> tuple[dict[int, torch.Tensor], list[int]]:
        """Inputs on the target's device, all as torch's memory: tied inputs
        (written in place) and inputs IREE only reads as the caller's own
        (returned: their indices), the others as fresh copies; each result
        into a fresh tensor (its storage argument). Returns the tensor each
        result was written into."""
        if self.zero_copy_inputs is None:
            self.zero_copy_inputs = self._zero_copy_candidates(tensors)
        module, convention = self.module, self.convention
        device = self._device or self._device_for(tensors)
        zero_copy, imports = self.zero_copy_inputs, self.imports
        arguments, imported, passed = [], [], []
        for index, tensor in enumerate(tensors):
            if type(tensor) is int:  # a runtime int: an i64 argument
                arguments.append(tensor)
                passed.append(tensor)
                continue
            view = None
            if index in zero_copy:
                cached = imports.get(index)  # the common case, inlined: the same tensor again
                view = (
                    cached[2]
                    if cached is not None and cached[0] == tensor.data_ptr() and cached[1] == tensor.shape
                    else self._import(index, tensor)
                )
            if view is None:
                # A fresh contiguous tensor starts on an allocation boundary.
                tensor = fresh_tensor(tensor.shape, tensor.dtype, tensor.device).copy_(tensor.detach())
                view = module.import_tensor(tensor)
            else:
                imported.append(index)
            arguments.append(view)
            passed.append(tensor)
        results = {result: passed[index] for result, index in self._tied_results}
        shapes = self.symbolic_shapes.evaluate(tensors) if self.symbolic_shapes is not None else None
        for result, shape, dtype in self._storage:
            if shapes is not None:
                shape = shapes.get(result, shape)
            if result == self._flags_result:
                # The index checks' flags are read here, never handed out: one
                # buffer (and its import) serves every call.
                if self._flags is None or self._flags[0].device != device:
                    buffer = torch.empty(shape, dtype=dtype, device=device)
                    self._flags = (buffer, module.import_tensor(buffer))
                arguments.append(self._flags[1])
                results[result] = self._flags[0]
                continue
            storage = fresh_tensor(shape, dtype, device)
            arguments.append(module.import_tensor(storage))
            results[result] = storage
        if self._on_cuda:
            torch.cuda.current_stream(device).synchronize()
        try:
            module.invoke(arguments, len(convention.result_dtypes))
        except RuntimeError as error:
            if self.hand_over != "unchecked" or "PERMISSION_DENIED" not in str(error):
                raise
            # IREE-WORKAROUND(dlpack-discard-write): IREE refused to write
            # imported memory with a transfer, before running anything. Only
            # copies and fresh tensors were writable: nothing of the caller's
            # changed, and host copies through IREE's invoker take over.
            self.hand_over = "host copies"
            return self._invoke_generic(tensors)
        if self.hand_over == "unchecked":
            self.hand_over = "in place"
            self.zero_copy_inputs = None  # tied inputs join from the next call
        return results, imported

    def _device_for(self, tensors: list[torch.Tensor]) -> torch.device:
        device = _device_of(tensors, self.module.device_type)
        if self.devices_fixed:
            self._device = device
        return device

    @cached_property
    def _on_cuda(self) -> bool:
        return self.module.device_type == "cuda"

    @cached_property
    def _outputs_are_results(self) -> bool:
        """Whether every output is a result's own storage (no view of an
        input or of another result): the common case, built without a loop."""
        convention = self.convention
        views = self.symbolic_shapes is not None and self.symbolic_shapes.views
        return not (views or convention.output_views or convention.output_bases)

    @cached_property
    def _tied_results(self) -> list[tuple[int, int]]:
        """(result, input) of each input IREE writes in place through its tie."""
        return [(r, i) for r, i in self.convention.written_inputs if i in self.convention.tied_inputs]

    @cached_property
    def _flags_result(self) -> int | None:
        checks = self.convention.index_checks
        return None if checks is None else checks[0]

    @cached_property
    def _storage(self) -> list[tuple[int, tuple[int, ...], torch.dtype]]:
        dtypes = self.convention.result_dtypes
        return [(result, shape, dtypes[result]) for result, shape in self.convention.result_storage]

    def _zero_copy_candidates(self, tensors: list[torch.Tensor]) -> set[int]:
        """Tied inputs (from the second call on), and inputs IREE cannot
        write (purity.unwritten) that share no storage with a tied input: such
        a view would see the write before IREE's reads of it, unlike the copy
        the program was compiled for."""
        convention = self.convention
        tied_storages = {tensors[i].untyped_storage().data_ptr() for i in convention.tied_inputs}
        tied = convention.tied_inputs if self.hand_over == "in place" else set()
        return set(tied) | {
            i
            for i in convention.unwritten_inputs
            if type(tensors[i]) is not int and tensors[i].untyped_storage().data_ptr() not in tied_storages
        }

    def _import(self, index: int, tensor: torch.Tensor):
        """IREE's view of the caller's memory, or None where it must be a copy."""
        address = tensor.data_ptr()
        cached = self.imports.get(index)
        if cached is not None and cached[0] == address and cached[1] == tensor.shape:
            return cached[2]  # the entry's signature fixes device, dtype and layout
        if not tensor.is_contiguous() or tensor.numel() == 0 or address % _IMPORT_ALIGNMENT:
            return None
        view = self.module.import_tensor(tensor.detach())
        self.imports[index] = (address, tensor.shape, view)
        return view

    def _invoke_generic(self, tensors: list[torch.Tensor]) -> tuple[list[torch.Tensor], list[int]]:
        """Host copies through IREE's invoker, which lets IREE write them as
        it likes: for inputs on another device than the target's (CPU tensors
        for the cuda target), and for entries whose compiled code writes
        imported memory with transfers. Results land on the inputs' device."""
        device = _device_of(tensors, "cpu")
        convention = self.convention
        arguments = [t if type(t) is int else _host_array(t) for t in tensors]
        shapes = self.symbolic_shapes.evaluate(tensors) if self.symbolic_shapes is not None else {}
        arguments += [
            np.zeros(shapes.get(r, shape), dtype=_host_dtype(convention.result_dtypes[r]))
            for r, shape in convention.result_storage
        ]
        results = [
            _with_dtype(torch.from_numpy(to_host(r)), dtype)
            for r, dtype in zip(self.module(arguments), convention.result_dtypes)
        ]
        return [r.to(device) for r in results] if device.type != "cpu" else results, []


# Every executable of this process, for `_release_iree_objects`.
_live_executables: weakref.WeakValueDictionary[int, Executable] = weakref.WeakValueDictionary()


@atexit.register
def _release_iree_objects() -> None:
    """Releases the IREE objects executables still hold when Python exits
    (an entry kept by Dynamo's code cache, or by an autograd graph that a
    global holds): freed only after IREE's bindings are torn down, each
    would be reported leaked by nanobind at exit."""
    for executable in list(_live_executables.values()):
        executable.release_iree_objects()


def _steady_plan(executable: Executable, tensor_indices: set[int], effects: tuple[list[tuple[int, int]], list[int]]):
    """`Executable._steady_call`'s plan, with what every call reads bound
    once; False where an output is neither a tied input nor a result's
    storage, or a result copied back into an input is not one of its own."""
    copied_back, written_in_place = effects
    convention, positions = executable.convention, executable.argument_positions
    reimport, run = executable._import, executable.run
    vm_invoke, import_tensor, device = executable.module.vm_invoke, executable.module.import_tensor, executable._device
    # (position in the flat arguments, its input index, whether it is a tensor), in argument order.
    order = [(p, i, i in tensor_indices) for i, p in enumerate(positions)]
    argument_count = len(order) + len(executable._storage)
    result_count = len(convention.result_dtypes)
    flags_result = executable._flags_result
    flags, flags_view = executable._flags if flags_result is not None else (None, None)
    checks = convention.index_checks[1] if flags_result is not None else ()
    # The flags' bytes, read in place (the buffer serves every call): any zero is a failed check.
    flags_read = ctypes.string_at
    flags_address, flags_count = (flags.data_ptr(), flags.numel()) if flags is not None else (0, 0)
    fresh_results = [r for r, _, _ in executable._storage if r != flags_result]
    tied = dict(executable._tied_results)
    if any(r not in tied and r not in fresh_results for r in convention.output_results):
        return False
    # Per output: (True, the flat argument it is) for a tied input, (False, its fresh tensor's number).
    sources = [
        (True, positions[tied[r]]) if r in tied else (False, fresh_results.index(r)) for r in convention.output_results
    ]
    written_positions = [positions[i] for i in written_in_place]
    if any(r not in fresh_results for r, _ in copied_back):
        return False
    # (its fresh tensor's number, the flat argument it is copied into), per input written by a copy.
    copies = [(fresh_results.index(r), positions[i]) for r, i in copied_back]
    leaf, none = executable.output_form == "leaf", executable.output_form == "none"
    new_list = iree_runtime.VmVariantList

    tail, stored_for, output_of = _result_storage(executable._storage, flags_result, flags_view, device, import_tensor)
    build_arguments = _argument_builder(order, reimport, argument_count, tail)

    def call(args: Sequence[object]):
        arguments = build_arguments(args)
        if arguments is None:  # (memory IREE cannot take as it is: `run` copies it)
            return run(args, may_need_grad=False)
        fresh = stored_for(arguments)
        try:
            vm_invoke(arguments, new_list(result_count))
        except Exception as error:
            raise PurityError("run", f"{type(error).__name__}: {error}") from error
        if flags is not None and flags_read(flags_address, flags_count).find(b"\x00") >= 0:
            _raise_on_failed_check(flags, checks)
        if written_positions or copies:
            _apply_steady_effects(args, written_positions, copies, fresh)
        if none:
            return None
        outputs = [args[source] if is_argument else output_of(fresh, source) for is_argument, source in sources]
        return outputs[0] if leaf else tuple(outputs)

    return call


def _result_storage(
    storage_results: list[tuple[int, tuple[int, ...], torch.dtype]],
    flags_result: int | None,
    flags_view,
    device: torch.device,
    import_tensor: Callable,
) -> tuple[list[object] | None, Callable, Callable]:
    """How the steady plan stores results: (the views its argument list
    ends with on every call, or None; the call's step that pushes storage
    onto the list and returns the tensors results are stored in; the output
    made from one of them).

    Where every result other than the index checks' flags is rank-0 (an
    optimizer step returning a loss or `p.sum()`), or there is none, its
    storage is kept from call to call and each output is a copy of it: the
    argument list is then the same on every call with the same tensors,
    kept whole by `_argument_builder` (SGD's 150 tensors: 151 pushes a call,
    about 41 µs, and the result's allocation and import saved). Otherwise
    each result gets a fresh tensor per call, handed out as it is."""
    results = [(shape, dtype) for r, shape, dtype in storage_results if r != flags_result]
    if any(len(shape) for shape, _ in results):
        # Per storage argument: what makes its fresh tensor, or None for the index checks' flags.
        makers = [
            None if r == flags_result else fresh_tensor_maker(shape, dtype, device)
            for r, shape, dtype in storage_results
        ]

        def fresh_storage(arguments) -> list[torch.Tensor]:
            fresh = []
            for make in makers:
                if make is None:
                    arguments.push_ref(flags_view)
                    continue
                tensor = make()
                fresh.append(tensor)
                arguments.push_ref(import_tensor(tensor))
            return fresh

        return None, fresh_storage, operator.getitem
    kept = [torch.empty((), dtype=dtype, device=device) for _, dtype in results]
    views = iter([import_tensor(tensor) for tensor in kept])
    tail = [flags_view if r == flags_result else next(views) for r, _, _ in storage_results]
    return tail, lambda arguments: kept, lambda tensors, index: tensors[index].clone()


def _argument_builder(
    order: list[tuple[int, int, bool]], reimport: Callable, capacity: int, tail: list[object] | None = None
):
    """The steady plan's first step: `args` -> IREE's argument list holding
    each argument (an int, or IREE's view of a tensor: `Executable._import`,
    the one imported before where its memory is the same, else imported
    now), or None where a tensor cannot be imported. Where every argument is a tensor (an
    optimizer step's hundreds), the last call's addresses, sizes and views
    are kept and compared as lists at once. With `tail` (the views of
    storage kept from call to call, pushed after the arguments), the list
    is whole: where the tensors are the last call's, that list itself is
    returned again (IREE's invoke reads its arguments, never changes them)."""
    new_list = iree_runtime.VmVariantList

    def build(args: Sequence[object]):
        arguments = new_list(capacity)
        for position, index, is_tensor in order:
            value = args[position]
            if not is_tensor:
                arguments.push_int(value)
                continue
            view = reimport(index, value)
            if view is None:
                return None
            arguments.push_ref(view)
        for view in tail or ():
            arguments.push_ref(view)
        return arguments

    if not all(is_tensor for _, _, is_tensor in order):
        return build
    positions = [p for p, _, _ in order]
    indices = [i for _, i, _ in order]
    last_call: list = [[], [], [], None]  # addresses, sizes, views, the whole list (with `tail`)

    def build_from_tensors(args: Sequence[object]):
        values = [args[p] for p in positions]
        addresses = [value.data_ptr() for value in values]
        sizes = [value.shape for value in values]
        if addresses == last_call[0] and sizes == last_call[1]:
            if last_call[3] is not None:
                return last_call[3]
            views = last_call[2]
        else:
            views = [reimport(index, value) for index, value in zip(indices, values)]
            if any(view is None for view in views):
                return None
            last_call[:] = [addresses, sizes, views, None]
        arguments = new_list(capacity)
        push = arguments.push_ref
        for view in views:
            push(view)
        if tail is not None:
            for view in tail:
                push(view)
            last_call[3] = arguments
        return arguments

    return build_from_tensors


def _apply_steady_effects(
    args: Sequence[object], written_positions: list[int], copies: list[tuple[int, int]], fresh: list[torch.Tensor]
) -> None:
    """The steady plan's `_apply_effects`: versions of the arguments IREE
    wrote in place moved, results of written arguments it did not copied in."""
    if written_positions:
        torch.autograd.graph.increment_version([args[p] for p in written_positions])
    if copies:
        with torch.no_grad():
            for source, position in copies:
                args[position].copy_(fresh[source])


def _device_of(arguments: Sequence[object], default: str) -> torch.device:
    """The device of the first tensor argument (ints have none)."""
    for argument in arguments:
        if type(argument) is not int:
            return argument.device
    return torch.device(default)


def _draw_seed(device: torch.device) -> torch.Tensor:
    """The seed of one call's random ops, drawn from torch's default
    generator for `device`: `torch.manual_seed` reproduces it, and drawing
    advances the generator as eager's random ops do."""
    return torch.randint(-(2**63), 2**63 - 1, (), dtype=torch.int64, device=device)


def _raise_on_failed_check(flags: torch.Tensor, checks: tuple[IndexCheck, ...]) -> None:
    """Raises for the first index check that failed. Called before any
    effect is applied: the compiled code guarded its in-place writes on the
    same flags, so the caller's tensors hold what they held."""
    if flags.device.type == "cpu":
        # A byte per flag: cheaper than any tensor op on this path.
        failed = ctypes.string_at(flags.data_ptr(), flags.numel()).find(b"\x00")
        if failed < 0:
            return
    elif bool(flags.all()):
        return
    else:
        failed = int((~flags).nonzero()[0, 0])
    for check in checks:
        if failed < check.count:
            break
        failed -= check.count
    raise PurityIndexError(
        "run",
        "index out of range (the compiled program checked its indices before writing; "
        "the caller's tensors are untouched)",
        op=check.op,
        source=check.location or None,
    )


# ----------------------------------------------------------------------------
# Autograd: never a silently wrong gradient
# ----------------------------------------------------------------------------


def written_inputs_requiring_grad(convention: CallingConvention, tensors: list[torch.Tensor]) -> list[int]:
    """Inputs the program writes or restrides in place that require grad:
    eager would rebase their autograd history, which no compiled entry models."""
    changed = {i for _, i in convention.written_inputs} | set(convention.metadata_mutations)
    return [i for i in sorted(changed) if i < len(tensors) and tensors[i].requires_grad]


def _inputs_needing_grad(tensors: list[torch.Tensor], convention: CallingConvention) -> list[torch.Tensor]:
    """Inputs that require grad (grad mode on) reaching an inference entry
    (a saved program: training entries are not saved). An input that
    requires grad and that the program writes is refused before anything runs."""
    needing = [t for t in tensors if type(t) is not int and t.requires_grad]
    if needing:
        for index in written_inputs_requiring_grad(convention, tensors):
            raise PurityError(
                "call",
                f"input {index} requires grad and the program writes it in place; this entry was compiled for "
                "inference (a saved program): call it under torch.no_grad() (or detach the input)",
            )
    return needing


class _NoBackward(torch.autograd.Function):
    """An output an inference entry computed from inputs that require grad:
    it requires grad as eager's does, and a backward through it raises
    instead of giving a silently wrong gradient."""

    @staticmethod
    def forward(ctx, output: torch.Tensor, *inputs: torch.Tensor) -> torch.Tensor:
        return output

    @staticmethod
    def backward(ctx, *grads):
        raise PurityError(
            "backward",
            "this output comes from an entry compiled for inference (a saved program), which has no compiled "
            "backward; compile the program with torch_purity.compile for training",
        )


def _without_backward(outputs: list[torch.Tensor], convention: CallingConvention, needing_grad) -> list[torch.Tensor]:
    """Outputs IREE computed get a grad_fn that raises; outputs that are views
    of inputs keep the autograd history of their view (exact: the program
    wrote none of the inputs that require grad)."""
    return [
        output
        if index in convention.output_views or not (output.is_floating_point() or output.is_complex())
        else _NoBackward.apply(output, *needing_grad)
        for index, output in enumerate(outputs)
    ]


def _host_array(tensor: torch.Tensor) -> np.ndarray:
    """The tensor as a C-contiguous host array for IREE's invoker, which
    copies it into a buffer of its own (test_iree_copies_host_array_arguments)."""
    if tensor.dtype == torch.bfloat16:
        raise PurityError("run", "bfloat16 tensors cannot cross to IREE as host copies (numpy has no bfloat16)")
    array = tensor.detach().cpu().numpy()
    if array.flags.c_contiguous:
        return array
    # np.ascontiguousarray would turn a 0-d array into shape (1,).
    return np.array(array, copy=True, order="C")


def _host_dtype(dtype: torch.dtype | None) -> np.dtype:
    return torch.empty(0, dtype=dtype or torch.float32).numpy().dtype


def _with_dtype(result: torch.Tensor, dtype: torch.dtype | None) -> torch.Tensor:
    """A host result as the program's dtype. IREE-WORKAROUND(signless-host-results):
    IREE's invoker returns signless integers as signed (a uint8 result comes
    back int8), so the bits are reinterpreted; can go when a ui8 program run
    with host copies returns uint8."""
    if dtype is None or result.dtype == dtype:
        return result  # None: an output handed out as a view of an input, never read
    return result.view(dtype) if result.element_size() == dtype.itemsize else result.to(dtype)
