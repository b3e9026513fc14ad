"""Fresh host memory for results that IREE writes first.

A result's storage is a fresh `torch.empty` tensor that the compiled code
writes (on the calling thread, or IREE's pool for large programs). On Linux every 4 KiB page of such a
tensor faults on its first write, and under a hypervisor that fault is slow:
on this project's 2-core KVM machine, filling a fresh 51 MB tensor took
48-57 ms against 6.5 ms for the same copy into memory already touched
(`benchmarks/compare_systems.py`'s BatchNorm output is that size). Asking the
kernel for transparent huge pages on the tensor's 2 MiB-aligned interior
before the first write (`madvise(MADV_HUGEPAGE)`, one system call) cuts the
faults 512-fold: the same fill took 11-14 ms. PyTorch does the same for its
own allocations only when `THP_MEM_ALLOC_ENABLE=1` is set.

The advice changes nothing but how the kernel backs those pages: the tensor
is torch's own, freed by torch. Where transparent huge pages are set to
`never` the kernel takes the advice and ignores it; without `madvise` (not
Linux) nothing is asked. Memory below glibc's mmap threshold may come from
heap already touched: its pages stay as they were, advised. Where the
kernel's `defrag` setting makes a fault on advised memory compact memory
first, a fragmented machine may stall on it:
`PURITY_HUGE_PAGES=0` (read at import) turns the advice off.

A result of POOLED_BYTES (32 MiB) or more is taken from IREE's buffer pool
instead (the CPU device's caching allocator, devices.py) and handed to
torch through DLPack: when torch frees the tensor the buffer goes back to
the pool, and the next call's result of that size is memory already
touched, with no fault at all. glibc serves a block of 32 MiB or more
(its largest mmap threshold) with fresh pages every time, so eager's and
inductor's results of that size fault on every call; below it glibc's heap
reuses freed memory, and the pool's path (an IREE allocation and two DLPack
hand-overs) cost 3-12 µs more than `torch.empty` per 1-16 MiB result
(measured with a fill: 1 MiB 12.8 → 16.2 µs, 16 MiB 376 → 388 µs; 51 MiB
10660 → 1137 µs). Measured on benchmarks/compare_systems.py's BatchNorm in
training mode (a 51 MB result), median of 60 calls alone, two processes
each way (2026-12-07): 12.0 ms per call with fresh tensors, 6.8-8.0 ms from
the pool (IREE's own time for the program: 8.4 ms in its benchmark tool).
Such a tensor's storage is IREE's, so torch cannot grow it: `resize_` to a
larger size raises torch's "Trying to resize storage that is not
resizable" (growing it in eager gives it new memory). Without the pool
(`PURITY_IREE_ALLOCATOR_CACHE=off`) every result is a fresh tensor."""

from __future__ import annotations

import ctypes
import math
import os
import sys
from collections.abc import Callable
from functools import partial

import torch

from . import devices

_HUGE_PAGE = 2 << 20
POOLED_BYTES = 32 << 20  # glibc's largest mmap threshold: larger blocks are always fresh pages
# At least two huge pages, so that a whole one lies inside the tensor wherever it starts.
ADVISED_BYTES = 2 * _HUGE_PAGE
_MADV_HUGEPAGE = 14  # linux/mman.h


def _madvise():
    if not sys.platform.startswith("linux") or os.environ.get("PURITY_HUGE_PAGES") == "0":
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    function.restype = ctypes.c_int
    return function


_MADVISE = _madvise()


def fresh_tensor(shape, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A contiguous tensor IREE writes first (it starts on an allocation
    boundary); on the CPU backed by huge pages where it is large enough to
    hold one (ADVISED_BYTES). (On every call's path: a small one costs one
    size check beyond `torch.empty`.)"""
    tensor = None
    if device.type == "cpu" and math.prod(shape) * dtype.itemsize >= POOLED_BYTES:
        tensor = devices.pooled_host_tensor(shape, dtype)
    if tensor is None:
        tensor = torch.empty(shape, dtype=dtype, device=device)
    if tensor.nbytes >= ADVISED_BYTES and device.type == "cpu":
        advise_huge_pages(tensor)
    return tensor


def fresh_tensor_maker(shape, dtype: torch.dtype, device: torch.device) -> Callable[[], torch.Tensor]:
    """`fresh_tensor` of a size known beforehand, as a call without
    arguments: where neither the pool nor the advice applies, torch.empty
    itself (0.7 µs less per call for a small result)."""
    if device.type == "cpu" and math.prod(shape) * dtype.itemsize >= min(POOLED_BYTES, ADVISED_BYTES):
        return partial(fresh_tensor, shape, dtype, device)
    return partial(torch.empty, shape, dtype=dtype, device=device)


def advise_huge_pages(tensor: torch.Tensor) -> bool:
    """Asks for huge pages on the tensor's 2 MiB-aligned interior, before
    anything touched it; whether the kernel took the advice."""
    if _MADVISE is None:
        return False
    start = tensor.data_ptr()
    end = start + tensor.nbytes
    first = (start + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
    last = end & ~(_HUGE_PAGE - 1)
    return last > first and _MADVISE(first, last - first, _MADV_HUGEPAGE) == 0
