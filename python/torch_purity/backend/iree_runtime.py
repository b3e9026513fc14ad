"""IREE: linalg-on-tensors -> a loaded module, for the CPU (llvm-cpu) or the GPU (cuda)."""

from __future__ import annotations

from dataclasses import dataclass

import iree.compiler as iree_compiler
import iree.runtime as iree_runtime
import numpy as np

# IREE demotes f64 to f32 by default; eager computes in f64. Constant-
# expression hoisting in IREE 3.13 miscompiles small i64 constants (a scatter
# with a constant index, e.g. `scatter_add_(0, torch.tensor([0]), ...)`), and
# does so nondeterministically: compiles fail or give wrong values. Purity
# turns it off.
COMMON_FLAGS = ["--iree-input-demote-f64-to-f32=false", "--iree-opt-const-expr-hoisting=false"]
TARGET_FLAGS: dict[str, list[str]] = {
    "cpu": [
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=host",
        *COMMON_FLAGS,
    ],
    # sm_90 failed in IREE 3.13 with "missing GPU target" (design.md).
    "cuda": ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80", *COMMON_FLAGS],
}
DRIVERS = {"cpu": "local-task", "cuda": "cuda"}


class IreeCompileError(Exception):
    pass


def compile_linalg(text: str, target: str) -> bytes:
    """A VM flatbuffer for `target` from linalg-on-tensors text."""
    if target not in TARGET_FLAGS:
        raise ValueError(f"unknown target '{target}' (known: {', '.join(TARGET_FLAGS)})")
    try:
        return iree_compiler.compile_str(text, input_type="auto", extra_args=TARGET_FLAGS[target])
    except iree_compiler.CompilerToolError as error:
        raise IreeCompileError(str(error)) from None


def iree_compile_command(ir_path: str, target: str) -> str:
    return " ".join(["iree-compile", ir_path, *TARGET_FLAGS[target], "-o", "module.vmfb"])


@dataclass
class LoadedModule:
    """A compiled `main`, called with host arrays, returning host arrays."""

    target: str
    vmfb: bytes

    def __post_init__(self) -> None:
        self._main = iree_runtime.load_vm_flatbuffer(self.vmfb, driver=DRIVERS[self.target]).main

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        results = self._main(*arrays)
        if not isinstance(results, (list, tuple)):
            results = [results]
        return [np.asarray(r.to_host()) if hasattr(r, "to_host") else np.asarray(r) for r in results]
