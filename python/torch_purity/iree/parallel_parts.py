"""Running a CPU program's independent parts (purity-split-independent-parts)
at once, on torch's own intra-op threads.

A program compiled for IREE's calling-thread driver (`local-sync`) runs on
one core. Where it splits into parts that share no buffer (an optimizer
step over many parameters), each part is a function of the module with the
program's own arguments, writing its share of the results into them; this
module invokes the parts from the threads of the OpenMP runtime torch
computes with, the way inductor's generated code runs its loops: the
calling thread and torch's workers each take the next part not taken until
none is left. IREE's `invoke` releases the GIL while a part runs. An IREE
VM context must not be entered by two threads at once (iree/vm/context.h:
"thread-compatible and must be externally synchronized"), so each of
torch's threads invokes in a context of its own, holding the same module
on the same device (HAL devices are thread-safe).

Why torch's threads and not threads of our own (or IREE's `local-task`
pool): torch's OpenMP workers spin for a while after each parallel op, and
on a machine with as many cores as threads a second pool then waits for a
core. Measured on this project's 2-core machine, two invocations of the
SGD step over 50×256×256 parameters (1.5 ms each) right after an eager op:
2450 µs from a Python thread of our own, 1491 µs through `GOMP_parallel`
on torch's threads (2945 µs one after the other).

Entry point: the runtime's `GOMP_parallel`, which GNU's libgomp (torch's
Linux wheels) exports, and LLVM's and Intel's OpenMP runtimes export for
GNU compatibility. Where torch does not compute with OpenMP, where no
loaded runtime exports it, or where torch uses one thread
(`torch.set_num_threads(1)`), the program runs whole on the calling thread.
`PURITY_PARALLEL_PARTS=off` does so everywhere (for measurements)."""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
from collections.abc import Callable
from functools import cache

import iree.runtime as iree_runtime
import torch

PART_SEPARATOR = "$part"  # `main$part0`: a part of `main` (purity-split-independent-parts names them)
OFF_VARIABLE = "PURITY_PARALLEL_PARTS"
_OPENMP_LIBRARIES = ("libgomp", "libiomp5", "libomp")
_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def part_functions(vm_module, function: str) -> list[object]:
    """The module's parts of `function`, in order (none where it was not split)."""
    parts = []
    while (found := vm_module.lookup_function(f"{function}{PART_SEPARATOR}{len(parts)}")) is not None:
        parts.append(found)
    return parts


@cache
def openmp_runtime() -> ctypes.CDLL | None:
    """The loaded OpenMP runtime torch computes with, where it exports `GOMP_parallel`."""
    if not torch.backends.openmp.is_available():
        return None
    for path in _loaded_libraries():
        if os.path.basename(path).startswith(_OPENMP_LIBRARIES):
            runtime = ctypes.CDLL(path)  # (already loaded: the same copy torch uses)
            if hasattr(runtime, "GOMP_parallel"):
                runtime.GOMP_parallel.argtypes = [_CALLBACK, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
                runtime.GOMP_parallel.restype = None
                runtime.omp_get_thread_num.restype = ctypes.c_int
                return runtime
    return None


_threads_with_kept_state: set[int] = set()


def _keep_thread_state() -> None:
    """Keeps this thread's Python thread state from one call to the next.
    ctypes makes one for a foreign thread (torch's OpenMP worker) entering a
    callback and tears it down on the way out: the end of every call waited
    about 90 µs for that (SGD over 50 parameters, 1160 → 1113 µs per
    call). One more `PyGILState_Ensure`, never released, keeps it (the GIL
    itself is released as before); it lives as long as the worker thread."""
    thread = threading.get_ident()
    if thread not in _threads_with_kept_state:
        _threads_with_kept_state.add(thread)
        ctypes.pythonapi.PyGILState_Ensure()


def _loaded_libraries() -> list[str]:
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if ".so" in line}
    except OSError:
        return []
    return sorted(path for path in paths if path.startswith("/"))


class PartsInvoker:
    """`(argument list, result list) -> None`, like `VmContext.invoke` bound
    to a function, that invokes the function's parts on torch's threads
    instead (the result list is left empty: every part writes its results
    into its arguments). Like the function's own context, its contexts
    serve one call at a time."""

    def __init__(self, parts: list[object], whole: Callable, vm_context, new_context: Callable[[], object]) -> None:
        self._parts = parts
        self._whole = whole  # the function itself, on the calling thread
        self._new_context = new_context  # a VM context holding the module, for one more thread
        # OpenMP thread number -> its context; the calling thread (0) keeps the module's own.
        self._contexts: dict[int, object] = {0: vm_context}
        self._calls: dict[int, tuple] = {}
        self._tokens = itertools.count(1)  # (next() on it is one step under the GIL)
        self._callback = _CALLBACK(self._run_parts)  # (kept alive as long as the invoker)

    def __call__(self, arguments, results) -> None:
        runtime = openmp_runtime()
        threads = min(torch.get_num_threads(), len(self._parts))
        if runtime is None or threads < 2 or os.environ.get(OFF_VARIABLE, "").lower() in ("off", "0"):
            self._whole(arguments, results)
            return
        for thread in range(1, threads):
            if thread not in self._contexts:
                # Made here, on the calling thread, never while another thread runs a part: making a
                # context runs the module's initializer on the device.
                self._contexts[thread] = self._new_context()
        token = next(self._tokens)
        errors: list[BaseException] = []
        self._calls[token] = (arguments, itertools.count(), errors)
        try:
            runtime.GOMP_parallel(self._callback, token, threads, 0)
        finally:
            del self._calls[token]
        if errors:
            raise errors[0]

    def _run_parts(self, token: int) -> None:
        """One thread's share: the next part not taken, until none is left."""
        arguments, taken, errors = self._calls[token]
        _keep_thread_state()
        try:
            context = self._contexts.get(openmp_runtime().omp_get_thread_num())
            if context is None:
                return  # (a thread beyond those counted when the call began: the others take its share)
            for index in taken:  # (next() on the shared count: one taker each, under the GIL)
                if index >= len(self._parts) or errors:
                    return
                context.invoke(self._parts[index], arguments, iree_runtime.VmVariantList(1))
        except BaseException as error:  # raised by the caller once every thread is done
            errors.append(error)
