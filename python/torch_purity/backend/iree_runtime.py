"""IREE: linalg-on-tensors -> a loaded module, for the CPU (llvm-cpu) or the GPU (cuda).

Loading and calling need IREE's runtime only; the compiler is imported when
something is compiled, so saved programs run where it is not installed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property

import iree.runtime as iree_runtime
import numpy as np
import torch
from torch.utils.dlpack import from_dlpack, to_dlpack

from ..errors import PurityError

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
    import iree.compiler as iree_compiler

    if target not in TARGET_FLAGS:
        raise ValueError(f"unknown target '{target}' (known: {', '.join(TARGET_FLAGS)})")
    try:
        return iree_compiler.compile_str(text, input_type="auto", extra_args=TARGET_FLAGS[target])
    except iree_compiler.CompilerToolError as error:
        raise IreeCompileError(str(error)) from None


def iree_compile_command(ir_path: str, target: str) -> str:
    return " ".join(["iree-compile", ir_path, *TARGET_FLAGS[target], "-o", "module.vmfb"])


# DLPack's device type codes.
_DLPACK_DEVICE_TYPES = {"cpu": 1, "cuda": 2}


@dataclass(frozen=True)
class _Opened:
    """A device and a context holding the module, opened on first use."""

    device: object
    main: object  # IREE's generic invoker of `main`
    vm_context: object
    vm_function: object
    keep: object  # the SystemContext that owns the rest


@dataclass
class LoadedModule:
    """A compiled `main`, in its own IREE context from the first call on (so
    code for the GPU can be compiled and saved where there is none)."""

    target: str
    vmfb: bytes

    def __post_init__(self) -> None:
        # IREE's default CUDA device is the first GPU, torch's cuda:0.
        self._dlpack_device = (_DLPACK_DEVICE_TYPES[self.target], 0)

    @cached_property
    def _opened(self) -> _Opened:
        driver = DRIVERS[self.target]
        try:
            config = iree_runtime.Config(driver)
        except RuntimeError as error:
            raise PurityError("run", f"IREE cannot open a '{driver}' device here: {str(error).splitlines()[0]}") from None
        context = iree_runtime.SystemContext(config=config)
        context.add_vm_module(iree_runtime.VmModule.copy_buffer(config.vm_instance, self.vmfb))
        module = context.modules.module
        return _Opened(config.device, module["main"], context.vm_context, module.vm_module.lookup_function("main"), context)

    def __call__(self, arguments: list) -> list:
        """Calls `main` through IREE's generic invoker (host arrays in, device arrays out)."""
        results = self._opened.main(*arguments)
        return list(results) if isinstance(results, (list, tuple)) else [results]

    def import_tensor(self, tensor: torch.Tensor) -> iree_runtime.HalBufferView:
        """IREE's view of the tensor's memory, without a copy (DLPack). The
        tensor must be contiguous, on this module's device, and start on a
        64-byte boundary; the view keeps it alive. IREE can read and write
        the view with dispatches, but refuses transfers into it (DLPack
        imports allow READ|WRITE, not DISCARD_WRITE)."""
        return self._opened.device.from_dlpack_capsule(to_dlpack(tensor))

    def invoke(self, arguments: list[iree_runtime.HalBufferView], result_count: int) -> DlpackResults:
        """Calls `main` straight through the VM (a few µs instead of the
        generic invoker's ~15). Returns when its work is done."""
        argument_list = iree_runtime.VmVariantList(len(arguments))
        for view in arguments:
            argument_list.push_ref(view)
        result_list = iree_runtime.VmVariantList(result_count)
        opened = self._opened
        opened.vm_context.invoke(opened.vm_function, argument_list, result_list)
        return DlpackResults(result_list, opened.device, self._dlpack_device)


class DlpackResults:
    """Results of `invoke` in IREE's own buffers, each handed to torch on
    first access as a tensor over that buffer, without a copy (the tensor
    keeps the buffer alive). Only for results without a storage argument:
    IREE 3.13 can export such buffers on the CPU, not on CUDA."""

    def __init__(self, result_list, device, dlpack_device: tuple[int, int]) -> None:
        self._list = result_list
        self._device = device
        self._dlpack_device = dlpack_device

    def __getitem__(self, index: int) -> torch.Tensor:
        view = self._list.get_as_object(index, iree_runtime.HalBufferView)
        return from_dlpack(self._device.create_dlpack_capsule(view, *self._dlpack_device))


def to_host(result) -> np.ndarray:
    return np.asarray(result.to_host()) if hasattr(result, "to_host") else np.asarray(result)
