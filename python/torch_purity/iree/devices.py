"""The IREE devices compiled programs run on: one per runtime driver and
process, shared by every loaded module (as `iree.runtime.Config(driver)`
shares them).

On the CPU drivers the device's allocator keeps the buffers a call frees
for the next call (IREE's caching allocator). IREE allocates a program's
intermediate values (`stream.resource.alloca`) on every call and frees
them after it; through the system allocator each such buffer was fresh
memory whose pages faulted on first touch. Profiled with
`iree-benchmark-module --device_profiling_mode=host-execution` on this
project's Intel Xeon (2026-12-07): the backward of
benchmarks/compare_systems.py's MLP training step made 4 allocations of
about 290 KiB per call at 27 µs each, and its dispatches ran slower on the
fresh pages; the call took 375 µs with the system allocator and 167 µs with
the caching one.

In a Python process the gain depends on what glibc's heap still holds:
the MLP step ran 1-2% faster (960.7 → 950.5 µs and 980.7 → 961.8 µs, two
pairs of runs), and benchmarks/compare_systems.py's BatchNorm in training
mode (64×256×28×28, with intermediates of tens of MiB, beyond glibc's mmap
threshold), median of 60 calls per process, six processes each way: 12.1,
12.8, 14.4, 14.9, 15.4 and 15.9 ms without, 12.0-12.1 ms (once 12.8) with.

The cache is bounded (CACHE_SPEC, IREE's syntax `heap=largest
allocation;capacity;free buffers`): the buffers a pool has made, in use or
free, count against 256 MiB, beyond which the oldest free buffers go back
to the system allocator (checked: after six freed buffers of 40-45 MiB,
249 MiB stayed); a buffer is reused for a request of its exact size. The
free list holds up to 256 buffers: IREE trims it by capacity, never by
count, so with 32 (tried first) the buffers of the programs run before
(a foreach Adam step's, then SGD's) filled it for good and every buffer a
later BatchNorm freed went back to the system (compare_systems.py, those
three workloads in one run: BatchNorm 17.2 ms with 32, 12.1 ms with 256).
`PURITY_IREE_ALLOCATOR_CACHE=off` (read when a driver's device
is first opened) opens devices without it."""

from __future__ import annotations

import ctypes
import math
import os
import threading

import iree.runtime as iree_runtime
import torch
from iree.runtime import _binding

CACHE_SPEC = "caching:device_local=*;256mib;256"
_CACHED_DRIVERS = ("local-sync", "local-task")
OFF_VARIABLE = "PURITY_IREE_ALLOCATOR_CACHE"

_devices: dict[str, object] = {}
_lock = threading.Lock()


def config(driver: str) -> iree_runtime.Config:
    """An IREE system configuration on `driver`'s shared device (RuntimeError
    where the driver cannot open one)."""
    device = pooled_device(driver)
    return iree_runtime.Config(driver) if device is None else iree_runtime.Config(device=device)


def pooled_device(driver: str):
    """`driver`'s device with the caching allocator, opened on first use;
    None for other drivers and where the pool is turned off."""
    if driver not in _CACHED_DRIVERS or os.environ.get(OFF_VARIABLE, "").lower() in ("off", "0"):
        return None
    with _lock:
        device = _devices.get(driver)
        if device is None:
            device = iree_runtime.get_driver(driver).create_default_device(allocators=[CACHE_SPEC])
            # Never destroyed: a buffer returns to its pool when torch frees a
            # tensor made from it (pooled_host_tensor), which may happen after
            # the interpreter tore this module down at exit (a tensor kept in
            # a module imported earlier); a destroyed pool then crashed the
            # process in its teardown (SIGSEGV, seen with a result kept as
            # `json.KEEP`). The device is held to the end, and nanobind's
            # report of objects alive at exit (which it would then print)
            # is turned off with IREE's own switch.
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(device))
            _binding.disable_leak_checker()
            _devices[driver] = device
    return device


_ELEMENT_TYPES = {
    torch.float32: "FLOAT_32",
    torch.float64: "FLOAT_64",
    torch.float16: "FLOAT_16",
    torch.bfloat16: "BFLOAT_16",
    torch.int64: "SINT_64",
    torch.int32: "SINT_32",
    torch.int16: "SINT_16",
    torch.int8: "SINT_8",
    torch.uint8: "UINT_8",
    torch.bool: "BOOL_8",
}
_DLPACK_CPU = 1  # kDLCPU
_HOST_MEMORY = "local-sync"  # whose pool host results come from (any CPU device can import them)


def pooled_host_tensor(shape, dtype: torch.dtype) -> torch.Tensor | None:
    """A CPU tensor whose memory is a buffer of the CPU device's pool, given
    to torch through DLPack (it returns to the pool when torch frees the
    tensor); None where the pool is off or the dtype has no IREE element
    type. Its contents are undefined, as `torch.empty`'s."""
    name = _ELEMENT_TYPES.get(dtype)
    device = pooled_device(_HOST_MEMORY) if name is not None else None
    if device is None:
        return None
    size = max(1, math.prod(shape)) * dtype.itemsize
    buffer = device.allocator.allocate_buffer(
        memory_type=iree_runtime.MemoryType.DEVICE_LOCAL | iree_runtime.MemoryType.HOST_VISIBLE,
        allowed_usage=iree_runtime.BufferUsage.DEFAULT,
        allocation_size=size,
    )
    view = iree_runtime.HalBufferView(buffer, list(shape), getattr(iree_runtime.HalElementType, name))
    return torch.from_dlpack(device.create_dlpack_capsule(view, _DLPACK_CPU, 0))
