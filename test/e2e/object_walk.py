"""Walking Python objects for tensors a test must not find."""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensor


def fake_tensors_in(value: object, seen: set[int] | None = None) -> list[str]:
    """Paths of FakeTensors anywhere inside `value` (attributes, containers)."""
    seen = set() if seen is None else seen
    if id(value) in seen or isinstance(value, (str, bytes, int, float, type(None), torch.dtype, torch.device)):
        return []
    seen.add(id(value))
    if isinstance(value, FakeTensor):
        return ["<here>"]
    if isinstance(value, torch.Tensor):
        return []
    found: list[str] = []
    if isinstance(value, dict):
        items = [(repr(k), v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        items = list(getattr(value, "__dict__", {}).items())
    for name, child in items:
        found += [f"{name}.{path}" for path in fake_tensors_in(child, seen)]
    return found
