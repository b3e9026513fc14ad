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
  re-reads to check it still leads to the same tensor, as Dynamo's guards
  do: a rebound name (`model.fc.weight = nn.Parameter(...)`, a reassigned
  global) then compiles again instead of reading the old tensor;
- `tensors_held_by` finds the tensors inside a returned object pytree does
  not flatten.

docs/architecture.md, section 1a, says how the driver uses them.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from ..errors import PurityError

# A step from an object to one it holds: ("attr", name), ("item", key).
Step = tuple[str, object]
_WALK_LIMIT = 200_000  # objects visited per search; a model with 10^4 modules stays well under


@dataclass(frozen=True)
class Root:
    """Where a path starts: read afresh on every call."""

    kind: str  # "self", "closure", "global", "default"
    name: str
    read: Callable[[], object]
    slot: tuple[object, object] | None = None  # (cell, None) or (globals, name): where a tensor root can be swapped


@dataclass(frozen=True)
class Source:
    root: Root
    steps: tuple[Step, ...]

    def resolve(self) -> object:
        value = self.root.read()
        for kind, key in self.steps:
            value = getattr(value, key) if kind == "attr" else value[key]
        return value

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
        yield Root("closure", prefix + name, lambda cell=cell: cell.cell_contents, (cell, None))
    for name in sorted(_global_names(code)):
        if name in function.__globals__:
            scope = function.__globals__
            yield Root("global", prefix + name, lambda scope=scope, name=name: scope[name], (scope, name))
    for index, _ in enumerate(function.__defaults__ or ()):
        yield Root("default", f"{prefix}<default {index}>", lambda f=function, i=index: f.__defaults__[i])
    for name in function.__kwdefaults__ or {}:
        yield Root("default", f"{prefix}<default {name}>", lambda f=function, n=name: f.__kwdefaults__[n])


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
        return [Root("self", "self", lambda: owner), *roots_of(program.__func__)]
    if isinstance(program, types.FunctionType):
        return list(_function_roots(program))
    if isinstance(program, torch.nn.Module):
        forward = type(program).forward
        module_roots = list(_function_roots(forward)) if isinstance(forward, types.FunctionType) else []
        return [Root("self", "self", lambda: program), *module_roots]
    call = next((vars(k)["__call__"] for k in type(program).__mro__ if "__call__" in vars(k)), None)
    roots = [Root("self", "self", lambda: program)]
    if isinstance(call, types.FunctionType):
        roots += list(_function_roots(call))
    return roots


def _children(value: object) -> Iterator[tuple[Step, object]]:
    if isinstance(value, torch.Tensor) or isinstance(value, (type, types.ModuleType, str, bytes, int, float)):
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

    owner: object
    key: object  # attribute name or dict key; None for a list's whole contents
    before: object  # _ABSENT where the place did not exist
    after: object  # _ABSENT where the program deleted it

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
                now = _slots(value)
                if now.keys() == slots.keys() and all(now[k] is slots[k] for k in slots):
                    continue
                if isinstance(value, list):
                    effects.append(PythonEffect(value, None, list(slots.values()), list(now.values())))
                else:
                    for key in slots.keys() | now.keys():
                        old, new = slots.get(key, _ABSENT), now.get(key, _ABSENT)
                        if old is not new:
                            effects.append(PythonEffect(value, key, old, new))
                for effect in effects:
                    if effect.owner is value:
                        effect.apply(effect.before)
            for owner, key, value in self.slots:
                _assign(owner, key, value)
            for effect in effects:  # the guard compares with what the caller's objects hold
                if isinstance(effect.before, list):
                    effect.before = [real.get(id(v), v) for v in effect.before]
                else:
                    effect.before = real.get(id(effect.before), effect.before)
        return result, effects


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


def tensors_held_by(value: object, description: str, existing: set[int]) -> tuple[list[torch.Tensor], list[object]]:
    """The tensors inside a returned object pytree does not flatten (its
    attributes, lists and dicts, recursively), in a fixed order, and the
    objects inside it that existed before the call (ids in `existing`: the
    caller's own, returned as themselves, not searched). An object made by
    the call that holds a module or a function cannot be copied per call:
    refused."""
    held: list[torch.Tensor] = []
    shared: list[object] = []
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
    return held, shared
