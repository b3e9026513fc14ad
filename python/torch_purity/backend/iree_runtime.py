"""IREE: linalg-on-tensors -> a loaded module, for the CPU (llvm-cpu) or the GPU (cuda)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import iree.compiler as iree_compiler
import iree.runtime as iree_runtime
import numpy as np
from iree.runtime.array_interop import map_dtype_to_element_type

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
# local-sync runs dispatches on the calling thread: a one-row KV-cache write
# costs ~28 µs per call against ~45-80 µs through local-task's thread pool.
# Compute-heavy programs can gain from local-task's parallelism:
# PURITY_IREE_CPU_DRIVER=local-task selects it.
DRIVERS = {"cpu": os.environ.get("PURITY_IREE_CPU_DRIVER", "local-sync"), "cuda": "cuda"}


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


_IMPORT_ALIGNMENT = 64  # bytes


@dataclass
class LoadedModule:
    """A compiled `main` in its own IREE context."""

    target: str
    vmfb: bytes

    def __post_init__(self) -> None:
        self._config = iree_runtime.Config(DRIVERS[self.target])
        context = iree_runtime.SystemContext(config=self._config)
        context.add_vm_module(iree_runtime.VmModule.copy_buffer(self._config.vm_instance, self.vmfb))
        self._main = context.modules.module["main"]
        self._context = context

    def wrap_in_place(self, array: np.ndarray) -> iree_runtime.HalBufferView | None:
        """A buffer view over `array`'s own memory (no copy), for an argument
        the compiled code writes through its `iree.abi.output` tie; None where
        that is not possible (non-contiguous, unknown element type, GPU)."""
        element_type = map_dtype_to_element_type(array.dtype)
        if self.target != "cpu" or element_type is None or not array.flags.c_contiguous or array.size == 0:
            return None
        if array.ctypes.data % _IMPORT_ALIGNMENT:
            # A view starting inside its storage (x[1:]) is not aligned the way
            # IREE's buffers are; writing one through the tie crashed (found by
            # `purity fuzz`). It goes the copy way.
            return None
        buffer = self._config.device.allocator.import_host_allocation(
            array,
            iree_runtime.MemoryType.DEVICE_LOCAL | iree_runtime.MemoryType.HOST_VISIBLE,
            iree_runtime.BufferUsage.DEFAULT,
        )
        return iree_runtime.HalBufferView(buffer, list(array.shape), element_type)

    def __call__(self, arguments: list) -> list:
        """Calls `main` and returns its results (IREE device arrays)."""
        results = self._main(*arguments)
        return list(results) if isinstance(results, (list, tuple)) else [results]


def to_host(result) -> np.ndarray:
    return np.asarray(result.to_host()) if hasattr(result, "to_host") else np.asarray(result)
