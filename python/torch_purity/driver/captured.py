"""State a compiled function reaches without taking it as an argument.

A function may read and write tensors it does not take as arguments: a
closed-over module's parameters and buffers, a global tensor, an optimizer's
state, a cache object held by a wrapper. This module finds the places they
are held, starting from the function's roots (its closure cells, the globals
its code names, its defaults, the object a bound method or callable belongs
to, its non-tensor arguments):

- `PythonState` swaps each such tensor for the trace's stand-in (an input of
  the traced graph), runs the program, records what it assigned to Python
  objects (`PythonEffect`, replayed per call) and puts every object back;
- `find_sources` gives each captured tensor an access path, which every call
  re-reads (`CapturedGuard`) to check it still leads to the same tensor, as
  Dynamo's guards do: a rebound name (`model.fc.weight = nn.Parameter(...)`, a reassigned
  global) then compiles again instead of reading the old tensor;
- `tensors_held_by` finds the tensors inside a returned object pytree does
  not flatten.

docs/architecture.md, section 1a, says how the driver uses them.
"""

from __future__ import annotations

import bisect
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import torch

from ..errors import PurityError
from ..iree.runtime import input_signature

# A step from an object to one it holds: ("attr", name), ("item", key).
Step = tuple[str, object]
_WALK_LIMIT = 200_000  # objects visited per search; a model with 10^4 modules stays well under


@dataclass(frozen=True)
class Root:
    """Where a path starts: read afresh on every call."""

    name: str
    read: Callable[[], object] = field(repr=False)
    # (cell, None) or (globals, name): where a tensor held by the root itself can be swapped
    slot: tuple[object, object] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Source:
    root: Root
    steps: tuple[Step, ...]

    def describe(self) -> str:
        """`model.layers[0].weight`-like: module dictionaries are left out."""
        text, after_module_dict = self.root.name, False
        for kind, key in self.steps:
            if kind == "attr" and key in ("_parameters", "_buffers", "_modules"):
                after_module_dict = True
                continue
            if kind == "attr" or after_module_dict:
                text += f"[{key}]" if isinstance(key, int) or str(key).isdigit() else f".{key}"
            else:
                text += f"[{_describe_key(key)}]"
            after_module_dict = False
        return text


def _describe_key(key: object) -> str:
    if isinstance(key, torch.Tensor):
        return f"<tensor {tuple(key.shape)}>"
    return repr(key)


def _function_roots(function: types.FunctionType, prefix: str = "") -> Iterator[Root]:
    code = function.__code__
    for index, name in enumerate(code.co_freevars):
        cell = function.__closure__[index]
        yield Root(prefix + name, lambda cell=cell: cell.cell_contents, (cell, None))
    for name in sorted(_global_names(code)):
        if name in function.__globals__:
            scope = function.__globals__
            yield Root(prefix + name, lambda scope=scope, name=name: scope[name], (scope, name))
    for index, _ in enumerate(function.__defaults__ or ()):
        yield Root(f"{prefix}<default {index}>", lambda f=function, i=index: f.__defaults__[i])
    for name in function.__kwdefaults__ or {}:
        yield Root(f"{prefix}<default {name}>", lambda f=function, n=name: f.__kwdefaults__[n])


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def roots_of(program: object) -> list[Root]:
    """The places a callable can reach state from, each read afresh per call."""
    if isinstance(program, types.MethodType):
        owner = program.__self__
        return [Root("self", lambda: owner), *roots_of(program.__func__)]
    if isinstance(program, types.FunctionType):
        return list(_function_roots(program))
    if isinstance(program, torch.nn.Module):
        forward = type(program).forward
        module_roots = list(_function_roots(forward)) if isinstance(forward, types.FunctionType) else []
        return [Root("self", lambda: program), *module_roots]
    call = next((vars(k)["__call__"] for k in type(program).__mro__ if "__call__" in vars(k)), None)
    roots = [Root("self", lambda: program)]
    if isinstance(call, types.FunctionType):
        roots += list(_function_roots(call))
    return roots


def _is_torch_internal(value: object) -> bool:
    """PyTorch's own functions and operators: their globals and attributes
    are PyTorch's state (dispatch caches, loggers filled on first use, as by
    `while_loop`), never the program's."""
    if isinstance(value, torch._ops.OperatorBase):
        return True
    module = getattr(value, "__module__", None) if isinstance(value, types.FunctionType) else None
    return isinstance(module, str) and (module == "torch" or module.startswith("torch."))


def _children(value: object) -> Iterator[tuple[Step, object]]:
    if isinstance(value, torch.Tensor) or isinstance(value, (type, types.ModuleType, str, bytes, int, float)):
        return
    if _is_torch_internal(value):
        return
    if isinstance(value, dict):
        for key, item in list(value.items()):
            yield ("item", key), item
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield ("item", index), item
    elif isinstance(value, types.FunctionType):
        for root in _function_roots(value):
            try:
                yield ("function", root), root.read()
            except ValueError:  # an empty cell
                continue
    elif isinstance(value, types.MethodType):
        yield ("attr", "__self__"), value.__self__
    else:
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict):
            for name, item in list(attributes.items()):
                yield ("attr", name), item


def find_sources(roots: list[Root], wanted: set[int]) -> dict[int, Source]:
    """A path to each tensor whose id is in `wanted`, searched breadth first
    from the roots (shortest paths first; functions reached on the way add
    their own closures and globals, with paths starting there)."""
    found: dict[int, Source] = {}
    seen: set[int] = set()
    frontier: list[tuple[Root, tuple[Step, ...], object]] = []
    for root in roots:
        try:
            frontier.append((root, (), root.read()))
        except (ValueError, KeyError, IndexError):
            continue
    visited = 0
    while frontier and len(found) < len(wanted) and visited < _WALK_LIMIT:
        next_frontier = []
        for root, steps, value in frontier:
            if id(value) in seen:
                continue
            seen.add(id(value))
            visited += 1
            if isinstance(value, torch.Tensor):
                if id(value) in wanted:
                    found.setdefault(id(value), Source(root, steps))
                continue
            for step, child in _children(value):
                if step[0] == "function":
                    next_frontier.append((step[1], (), child))
                else:
                    next_frontier.append((root, (*steps, step), child))
        frontier = next_frontier
    return found


def reachable_objects(roots: list[Root]) -> list[object]:
    """The mutable Python objects (dicts, lists, objects with attributes;
    not tensors, classes, functions or Python modules) the roots reach."""
    objects: list[object] = []
    seen: set[int] = set()
    frontier: list[object] = []
    for root in roots:
        try:
            frontier.append(root.read())
        except (ValueError, KeyError, IndexError):
            continue
    while frontier and len(seen) < _WALK_LIMIT:
        next_frontier = []
        for value in frontier:
            if id(value) in seen or isinstance(value, torch.Tensor):
                continue
            seen.add(id(value))
            if isinstance(value, (dict, list)) or isinstance(getattr(value, "__dict__", None), dict):
                if not isinstance(value, (type, types.ModuleType, types.FunctionType)):
                    objects.append(value)
            next_frontier.extend(child for _, child in _children(value))
        frontier = next_frontier
    return objects


def _slots(value: object) -> dict[object, object]:
    """An object's assignable places: a dict's entries, a list's items, an object's attributes."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return dict(enumerate(value))
    return dict(value.__dict__)


_ABSENT = object()


@dataclass
class PythonEffect:
    """One place of a reachable Python object that running the program
    assigned (an attribute, a dict entry, a list's contents): replayed after
    each call with that call's value, as eager would leave it. The entry
    holds only while the place still has the value it had when traced."""

    owner: object = field(repr=False)
    key: object  # attribute name or dict key; None for a list's whole contents
    before: object = field(repr=False)  # _ABSENT where the place did not exist
    after: object = field(repr=False)  # _ABSENT where the program deleted it

    def still_as_traced(self) -> bool:
        if isinstance(self.owner, list):
            return len(self.owner) == len(self.before) and all(a is b for a, b in zip(self.owner, self.before))
        slots = _slots(self.owner)
        return slots.get(self.key, _ABSENT) is self.before

    def apply(self, value: object) -> None:
        owner = self.owner
        if isinstance(owner, list):
            owner[:] = value
        elif isinstance(owner, dict):
            if value is _ABSENT:
                owner.pop(self.key, None)
            else:
                owner[self.key] = value
        elif value is _ABSENT:
            owner.__dict__.pop(self.key, None)
        else:
            owner.__dict__[self.key] = value


def _assign(owner: object, key: object, value: object) -> None:
    if isinstance(owner, types.CellType):
        owner.cell_contents = value
    elif isinstance(owner, (dict, list)):
        owner[key] = value
    else:
        owner.__dict__[key] = value


class PythonState:
    """The Python objects reachable from a program's roots, for running it
    while tracing.

    Every tensor held in a place that can be assigned (an attribute, a dict
    entry, a list item, a closure cell, a global) is state the program may
    read or write: `run` puts the trace's stand-in for it there (so the trace
    sees an input and never runs an op on the real tensor: a fake-tensor
    trace would otherwise run ops whose inputs are all real, writing the
    caller's tensors), runs, records what the program assigned as
    `PythonEffect`s and puts every object back as it was, so that no fake
    tensor and no traced-once effect is left in the user's objects."""

    def __init__(self, roots: list[Root], explicit: set[int] = frozenset()) -> None:
        """`explicit`: ids of tensors the program takes as inputs already (a
        module's parameters and buffers, which `functional_call` swaps itself)."""
        self.objects = reachable_objects(roots)
        self.object_ids = {id(value) for value in self.objects}
        # (owner, key, value held there): a tensor, or a tuple holding tensors
        # (swapped whole, as a tuple cannot be assigned into).
        self.slots: list[tuple[object, object, object]] = []
        for owner in self.objects:
            for key, value in _slots(owner).items():
                if _holds_real_tensors(value, explicit):
                    self.slots.append((owner, key, value))
        for root in roots:
            if root.slot is not None:
                try:
                    value = root.read()
                except (ValueError, KeyError):
                    continue
                if _holds_real_tensors(value, explicit):
                    self.slots.append((*root.slot, value))
        unique: dict[int, torch.Tensor] = {}
        for _, _, value in self.slots:
            for tensor in _tensors_in(value):
                if id(tensor) not in explicit:
                    unique.setdefault(id(tensor), tensor)
        self.tensors: list[torch.Tensor] = list(unique.values())

    def run(self, call: Callable[[], object], stand_ins: Sequence[torch.Tensor]) -> tuple[object, list[PythonEffect]]:
        """Runs `call` with `stand_ins[i]` in every place holding `self.tensors[i]`."""
        stand_in = {id(t): s for t, s in zip(self.tensors, stand_ins)}
        real = {id(s): t for t, s in zip(self.tensors, stand_ins)}
        for owner, key, value in self.slots:
            swapped = _substitute(value, stand_in)
            real[id(swapped)] = value
            _assign(owner, key, swapped)
        before = [(value, _slots(value)) for value in self.objects]
        effects: list[PythonEffect] = []
        try:
            result = call()
        finally:
            for value, slots in before:
                changes = _changes(value, slots, _slots(value))
                for change in changes:
                    change.apply(change.before)
                effects += changes
            for owner, key, value in self.slots:
                _assign(owner, key, value)
            for effect in effects:  # the guard compares with what the caller's objects hold
                if isinstance(effect.before, list):
                    effect.before = [real.get(id(v), v) for v in effect.before]
                else:
                    effect.before = real.get(id(effect.before), effect.before)
        return result, effects


def _changes(owner: object, before: dict[object, object], now: dict[object, object]) -> list[PythonEffect]:
    """What running the program assigned in `owner`, in a fixed order (the
    effects' values are the traced program's last outputs)."""
    if now.keys() == before.keys() and all(now[k] is before[k] for k in before):
        return []
    if isinstance(owner, list):
        return [PythonEffect(owner, None, list(before.values()), list(now.values()))]
    keys = [*before, *(k for k in now if k not in before)]
    return [
        PythonEffect(owner, key, before.get(key, _ABSENT), now.get(key, _ABSENT))
        for key in keys
        if before.get(key, _ABSENT) is not now.get(key, _ABSENT)
    ]


def _tensors_in(value: object) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _tensors_in(item)


def _holds_real_tensors(value: object, explicit: set[int]) -> bool:
    return any(not _is_fake(t) and id(t) not in explicit for t in _tensors_in(value))


def _substitute(value: object, replacements: dict[int, torch.Tensor]) -> object:
    """`value` with each tensor replaced (tuples, named tuples included, rebuilt)."""
    if isinstance(value, torch.Tensor):
        return replacements.get(id(value), value)
    items = [_substitute(item, replacements) for item in value]
    return type(value)._make(items) if hasattr(type(value), "_make") else type(value)(items)


def _is_fake(tensor: torch.Tensor) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(tensor, FakeTensor)


def tensors_held_by(
    value: object, description: str, existing: set[int]
) -> tuple[list[torch.Tensor], list[object], list[torch.SymInt | torch.SymFloat | torch.SymBool]]:
    """The tensors inside a returned object pytree does not flatten (its
    attributes, lists and dicts, recursively), in a fixed order, the objects
    inside it that existed before the call (ids in `existing`: the caller's
    own, returned as themselves, not searched), and the traced numbers in it
    (`x.sum().item()`, a size). An object made by the call that holds a
    module or a function cannot be copied per call: refused."""
    held: list[torch.Tensor] = []
    shared: list[object] = []
    numbers: list[torch.SymInt | torch.SymFloat | torch.SymBool] = []
    seen: set[int] = set()
    frontier = [value]
    while frontier:
        next_frontier = []
        for item in frontier:
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, torch.Tensor):
                held.append(item)
            elif isinstance(item, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                numbers.append(item)
            elif id(item) in existing:
                shared.append(item)
            elif isinstance(item, (torch.nn.Module, types.FunctionType, types.MethodType)):
                raise PurityError(
                    "trace",
                    f"{description} holds a {type(item).__name__}; Purity returns objects holding tensors by "
                    "copying them per call, which it cannot do with modules or functions: return tensors, "
                    "or lists, tuples and dicts of them",
                )
            else:
                next_frontier.extend(child for _, child in _children(item))
        frontier = next_frontier
    return held, shared, numbers


@dataclass
class CapturedGuard:
    """What a compiled entry with captured state checks on every call, beyond
    its arguments' signature: each captured tensor is still the one its path
    leads to, at the same memory with the same layout and dtype, and no
    argument shares memory with captured state unless one did when traced
    (then the exact signature of all inputs is compared, the slower check).
    Checked in Python per tensor (`_layout`), not by Dynamo's C++ tensor
    check: that one compares dispatch keys, which depend on thread-local
    state (`torch.inference_mode()`, autocast), so an entry called in and
    out of inference mode compiled again on every call."""

    tensors: list[torch.Tensor]
    sources: list[Source | None]
    layouts: list[tuple] = field(default_factory=list)
    paths: _PathTree | None = None
    storage_starts: list[int] = field(default_factory=list)  # sorted; the captured tensors' storages
    storage_ends: list[int] = field(default_factory=list)
    exact_signature: tuple | None = None

    @classmethod
    def of(
        cls, tensors: list[torch.Tensor], sources: list[Source | None], arguments: Sequence[object]
    ) -> CapturedGuard:
        guard = cls(tensors, sources, [_layout(t) for t in tensors], _PathTree(sources, tensors))
        ranges = sorted({(s.data_ptr(), s.data_ptr() + s.nbytes()) for s in (t.untyped_storage() for t in tensors)})
        guard.storage_starts, guard.storage_ends = [r[0] for r in ranges], [r[1] for r in ranges]
        if any(guard._in_captured_storage(a) for a in arguments if isinstance(a, torch.Tensor)):
            guard.exact_signature = input_signature([*arguments, *tensors])
        return guard

    def holds(self, arguments: Sequence[object]) -> bool:
        try:
            if not self.paths.holds():
                return False
        except (AttributeError, KeyError, IndexError, TypeError, ValueError):
            return False  # the path is gone: tracing again will say what the program reads now
        for tensor, layout in zip(self.tensors, self.layouts):
            if _layout(tensor) != layout:
                return False
        if self.exact_signature is not None:
            return input_signature([*arguments, *self.tensors]) == self.exact_signature
        return not any(self._in_captured_storage(a) for a in arguments if isinstance(a, torch.Tensor))

    def _in_captured_storage(self, tensor: torch.Tensor) -> bool:
        if not tensor.numel():
            return False
        address = tensor.data_ptr()
        index = bisect.bisect_right(self.storage_starts, address) - 1
        return index >= 0 and address < self.storage_ends[index]


def _layout(tensor: torch.Tensor) -> tuple:
    # The address changes with the storage (`.data =`, `set_`: a new storage
    # is made while the old one is alive, so never at the old address) and
    # with the storage offset; shape and strides complete the layout
    # (`t_()` on a square tensor changes the strides only), dtype and device
    # the rest (`w.data = w.data.view(torch.int32)` keeps address and layout).
    return tensor.data_ptr(), tensor.shape, tensor.stride(), tensor.dtype, tensor.device


class _PathTree:
    """The captured tensors' paths merged by shared prefix and turned into one
    generated Python function, as Dynamo's guards are: each attribute or
    item on the way (`model.model.layers[0]`) is read once per call however
    many tensors lie below it, without an interpreted walk (a 2-layer Llama's
    28 tensors: 94 steps)."""

    def __init__(self, sources: list[Source | None], tensors: list[torch.Tensor]) -> None:
        roots: list[Root] = []
        trees: dict[int, dict] = {}
        for source, tensor in zip(sources, tensors):
            if source is None:
                continue
            node = trees.get(id(source.root))
            if node is None:
                node = trees[id(source.root)] = {}
                roots.append(source.root)
            for step in source.steps:
                node = node.setdefault(step, {})
            node[None] = tensor  # the tensor expected at the end of this path
        self.readers = [root.read for root in roots]
        self.keys: list[object] = []
        self.expected: list[torch.Tensor] = []
        lines = ["def holds(R, K, E):"]
        for index, root in enumerate(roots):
            lines.append(f"    v{index} = R[{index}]()")
            self._emit(trees[id(root)], f"v{index}", lines)
        lines.append("    return True")
        namespace: dict[str, object] = {}
        exec(compile("\n".join(lines), "<purity captured-state guard>", "exec"), namespace)  # noqa: S102
        self._holds = namespace["holds"]

    def _emit(self, node: dict, variable: str, lines: list[str]) -> None:
        for step, child in node.items():
            if step is None:
                self.expected.append(child)
                lines.append(f"    if {variable} is not E[{len(self.expected) - 1}]: return False")
                continue
            kind, key = step
            name = f"v{len(lines)}"
            if kind == "attr" and isinstance(key, str) and key.isidentifier():
                lines.append(f"    {name} = {variable}.{key}")
            else:
                self.keys.append(key)
                reader = "getattr({}, K[{}])" if kind == "attr" else "{}[K[{}]]"
                lines.append(f"    {name} = " + reader.format(variable, len(self.keys) - 1))
            self._emit(child, name, lines)

    def holds(self) -> bool:
        return self._holds(self.readers, self.keys, self.expected)
