"""Compare a compiled program with eager PyTorch: outputs, inputs after the call, output aliasing.

Used by `purity run` and by the end-to-end tests. Each side runs on its own
copy of the inputs; copies keep the inputs' storage sharing and layouts, so
programs over aliased or strided inputs are compared faithfully.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.utils._pytree as pytree


def clone_preserving_aliasing(values: Sequence[object], device: torch.device | str | None = None) -> list[object]:
    """Copies tensors (also inside lists, tuples and dicts) storage by storage,
    rebuilding each with its layout, so inputs that shared storage still do
    (and others still do not). With `device`, the copies live there."""
    leaves, structure = pytree.tree_flatten(list(values))
    storages: dict[int, torch.Tensor] = {}
    objects: dict[int, torch.Tensor] = {}  # the same tensor object twice stays one object
    cloned = []
    for value in leaves:
        if isinstance(value, torch.Tensor) and id(value) in objects:
            cloned.append(objects[id(value)])
            continue
        if not isinstance(value, torch.Tensor):
            cloned.append(copy.deepcopy(value))
            continue
        storage = value.untyped_storage()
        key = storage.data_ptr() if storage.nbytes() else id(value)
        if key not in storages:
            flat = torch.empty(0, dtype=value.dtype, device=value.device)
            flat.set_(storage)  # a 1-d view of the whole storage in the tensor's dtype
            storages[key] = flat.clone() if device is None else flat.to(device, copy=True)
        base = storages[key]
        view = torch.empty(0, dtype=value.dtype, device=base.device)
        view.set_(base.untyped_storage(), value.storage_offset(), value.shape, value.stride())
        objects[id(value)] = view
        cloned.append(view)
    return pytree.tree_unflatten(cloned, structure)


@dataclass
class Comparison:
    problems: list[str] = field(default_factory=list)
    max_abs_difference: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def _close(got: torch.Tensor, want: torch.Tensor, what: str, report: Comparison, atol: float, rtol: float) -> None:
    if got.shape != want.shape or got.dtype != want.dtype:
        report.problems.append(
            f"{what}: {tuple(got.shape)} {got.dtype} where eager has {tuple(want.shape)} {want.dtype}"
        )
        return
    if want.numel() == 0:
        return
    if want.dtype.is_floating_point:
        difference = (got.double() - want.double()).abs().max().item()
        report.max_abs_difference = max(report.max_abs_difference, difference)
        if not torch.allclose(got, want, atol=atol, rtol=rtol, equal_nan=True) and not _close_to_scale(
            got, want, difference, atol, rtol
        ):
            report.problems.append(f"{what}: values differ from eager (max abs difference {difference:.3g})")
    elif not torch.equal(got, want):
        report.problems.append(f"{what}: values differ from eager")


def _close_to_scale(got: torch.Tensor, want: torch.Tensor, difference: float, atol: float, rtol: float) -> bool:
    """Within tolerance of the output's largest magnitude. A reduction may add
    in another order than eager; where terms cancel, an element's rounding
    error is relative to the magnitudes summed, not to its own small value
    (found by `purity fuzz`: 0.5848 off by 1.7e-5, with eager further than
    Purity from the float64 result). Finite outputs only."""
    if not (torch.isfinite(got).all() and torch.isfinite(want).all()):
        return False
    return difference <= atol + rtol * want.double().abs().max().item()


def _shared_outputs(outputs: list[object]) -> set[tuple[int, int]]:
    """Pairs of tensor outputs that share storage (a write to one shows in the other)."""
    storages = [o.untyped_storage().data_ptr() if isinstance(o, torch.Tensor) and o.numel() else None for o in outputs]
    return {
        (i, j)
        for i in range(len(storages))
        for j in range(i + 1, len(storages))
        if storages[i] is not None and storages[i] == storages[j]
    }


def _aliasing(outputs: list[object], inputs: list[object]) -> list[tuple]:
    """Per tensor output: the input it views (by storage), with its layout."""
    pointers = {
        i.untyped_storage().data_ptr(): n for n, i in enumerate(inputs) if isinstance(i, torch.Tensor) and i.numel()
    }
    return [
        (pointers.get(o.untyped_storage().data_ptr()), tuple(o.shape), o.stride(), o.storage_offset())
        if isinstance(o, torch.Tensor) and o.numel() and o.untyped_storage().data_ptr() in pointers
        else None
        for o in outputs
    ]


def compare(
    eager: Callable[..., object],
    compiled: Callable[..., object],
    inputs: Sequence[object],
    *,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    state: Sequence[tuple[str, torch.Tensor]] = (),
) -> Comparison:
    """Runs both on copies of `inputs` and compares everything eager shows.

    `state`: named tensors both programs reach without taking them as
    arguments (captured state). Each program starts from their values
    before the call (eager's writes are undone before the compiled call),
    and their values after the calls are compared."""
    report = Comparison()
    eager_inputs = clone_preserving_aliasing(inputs)
    compiled_inputs = clone_preserving_aliasing(inputs)
    with torch.no_grad():
        state_before = [t.clone() for _, t in state]
    want = pytree.tree_leaves(eager(*eager_inputs))
    with torch.no_grad():
        state_after_eager = [t.clone() for _, t in state]
        for (_, tensor), value in zip(state, state_before):
            tensor.copy_(value)
    got = pytree.tree_leaves(compiled(*compiled_inputs))
    for (name, tensor), value in zip(state, state_after_eager):
        _close(tensor.detach(), value, f"{name} after the call", report, atol, rtol)
    if len(got) != len(want):
        return Comparison([f"{len(got)} outputs where eager has {len(want)}"])
    for index, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, torch.Tensor):
            if not isinstance(g, torch.Tensor):
                report.problems.append(f"output {index}: {type(g).__name__} where eager has a tensor")
            else:
                _close(g.detach(), w.detach(), f"output {index}", report, atol, rtol)
        elif g != w:
            report.problems.append(f"output {index}: {g!r} where eager has {w!r}")
    for index, (g, w) in enumerate(zip(pytree.tree_leaves(compiled_inputs), pytree.tree_leaves(eager_inputs))):
        if isinstance(w, torch.Tensor):
            if g.shape != w.shape or g.stride() != w.stride() or g.storage_offset() != w.storage_offset():
                report.problems.append(
                    f"input {index} after the call: layout {tuple(g.shape)}/{g.stride()}/{g.storage_offset()} "
                    f"where eager has {tuple(w.shape)}/{w.stride()}/{w.storage_offset()}"
                )
            else:
                _close(g.detach(), w.detach(), f"input {index} after the call", report, atol, rtol)
    shared_got, shared_want = _shared_outputs(got), _shared_outputs(want)
    if shared_got != shared_want:
        report.problems.append(
            f"outputs sharing storage: {sorted(shared_got)} where eager has {sorted(shared_want)} "
            "(pairs of output indices)"
        )
    got_aliasing = _aliasing(got, pytree.tree_leaves(compiled_inputs))
    want_aliasing = _aliasing(want, pytree.tree_leaves(eager_inputs))
    for index, (g, w) in enumerate(zip(got_aliasing, want_aliasing)):
        if g != w:
            report.problems.append(f"output {index}: aliasing {g} where eager has {w} (input, sizes, strides, offset)")
    return report
