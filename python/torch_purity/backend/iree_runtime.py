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
# turns it off. IREE 3.13's stream scheduler reorders an update done in place
# (a row write, a scatter, an elementwise result emplaced into the row it will
# be written to) before another read of the same buffer when it elides or
# emplaces the copy the update needs (found by `purity fuzz`: two wrong
# answers, case_bb455373edac and case_918e493e8413); scheduling in program
# order ("debug" partitioning) keeps every read before the write. local-sync
# runs dispatches one after another anyway.
COMMON_FLAGS = [
    "--iree-input-demote-f64-to-f32=false",
    "--iree-opt-const-expr-hoisting=false",
    "--iree-stream-partitioning-favor=debug",
]
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
_HOST_MEMORY = iree_runtime.MemoryType.DEVICE_LOCAL | iree_runtime.MemoryType.HOST_VISIBLE
_NUMPY_DTYPES: dict[object, np.dtype] = {}  # IREE element type -> numpy dtype, filled on first sight


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
        self._vm_context = context.vm_context
        self._vm_function = context.modules.module.vm_module.lookup_function("main")

    def wrap_in_place(self, array: np.ndarray) -> iree_runtime.HalBufferView | None:
        """A buffer view over `array`'s own memory (no copy), for an argument
        the compiled code writes through its `iree.abi.output` tie or only
        reads; None where that is not possible (non-contiguous, unknown
        element type, GPU)."""
        element_type = map_dtype_to_element_type(array.dtype)
        if self.target != "cpu" or element_type is None or not array.flags.c_contiguous or array.size == 0:
            return None
        if array.ctypes.data % _IMPORT_ALIGNMENT:
            # A view starting inside its storage (x[1:]) is not aligned the way
            # IREE's buffers are; writing one through the tie crashed (found by
            # `purity fuzz`). It goes the copy way.
            return None
        buffer = self._config.device.allocator.import_host_allocation(array, _HOST_MEMORY, iree_runtime.BufferUsage.DEFAULT)
        return iree_runtime.HalBufferView(buffer, list(array.shape), element_type)

    def __call__(self, arguments: list) -> list:
        """Calls `main` and returns its results (IREE device arrays)."""
        results = self._main(*arguments)
        return list(results) if isinstance(results, (list, tuple)) else [results]

    def copy_in(self, array: np.ndarray) -> iree_runtime.HalBufferView:
        """A buffer of IREE's own holding a copy of `array` (C-contiguous)."""
        return self._config.device.allocator.allocate_buffer_copy(
            memory_type=_HOST_MEMORY,
            allowed_usage=iree_runtime.BufferUsage.DEFAULT,
            device=self._config.device,
            buffer=array,
            element_type=map_dtype_to_element_type(array.dtype),
        )

    def invoke_on_host(self, arguments: list[iree_runtime.HalBufferView], result_count: int) -> HostResults:
        """Calls `main` straight through the VM (a few µs instead of the
        generic invoker's ~15). CPU only: result buffers are host memory."""
        argument_list = iree_runtime.VmVariantList(len(arguments))
        for view in arguments:
            argument_list.push_ref(view)
        result_list = iree_runtime.VmVariantList(result_count)
        self._vm_context.invoke(self._vm_function, argument_list, result_list)
        return HostResults(result_list)


class HostResults:
    """Results of `invoke_on_host`, each mapped on first access as a host
    array over IREE's result buffer, without a copy (the array keeps the
    buffer alive). Results nobody reads (tied ones) are never mapped."""

    def __init__(self, result_list) -> None:
        self._list = result_list

    def __getitem__(self, index: int) -> np.ndarray:
        view = self._list.get_as_object(index, iree_runtime.HalBufferView)
        element_type = view.element_type
        dtype = _NUMPY_DTYPES.get(element_type)
        if dtype is None:
            dtype = _NUMPY_DTYPES[element_type] = iree_runtime.HalElementType.map_to_dtype(element_type)
        return view.map().asarray(view.shape, dtype)


def to_host(result) -> np.ndarray:
    return np.asarray(result.to_host()) if hasattr(result, "to_host") else np.asarray(result)
