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

How a call runs, and why (the GIL): through `GOMP_parallel` the caller
runs the team's callback too, which takes the GIL; the worker, woken at the
same time, often took it first, and the caller slept until it was handed
over (it began its part 69-74 µs into the call, the worker 21 µs in). A
sleeping thread takes long to run again on this project's KVM machine while
the other core is busy (a callback that only reads the clock: 17 µs after
the team opened with the caller asleep, 62-70 µs with it computing). So the
caller opens the team with `GOMP_parallel_start` without releasing the GIL
and goes straight on to invoke its part, which releases it (it begins 12 µs
into the call); `GOMP_parallel_end` releases the GIL while the workers
finish; the caller never enters a callback. Workers read their thread
number with the GIL held (a plain ctypes call drops and retakes it), and
the program has one part per thread torch computes with (`part_count`, at
most `MAX_PARTS`), so each thread takes the GIL once after its invocation,
not also between parts. Measured alone (SGD over 50×256×256 parameters, 2
cores, 2026-12-07): four parts through `GOMP_parallel` 1064-1088 µs per
call, two parts this way 1028-1045 µs.

Entry points: the runtime's `GOMP_parallel_start` and `GOMP_parallel_end`,
which GNU's libgomp (torch's Linux wheels) exports, and LLVM's and Intel's
OpenMP runtimes export for GNU compatibility. Where torch does not compute
with OpenMP, where no loaded runtime exports them, or where torch uses one
thread (`torch.set_num_threads(1)`), the program runs whole on the calling
thread. `PURITY_PARALLEL_PARTS=off` does so everywhere (for measurements)."""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import iree.runtime as iree_runtime
import torch

PART_SEPARATOR = "$part"  # `main$part0`: a part of `main` (purity-split-independent-parts names them)
OFF_VARIABLE = "PURITY_PARALLEL_PARTS"
MAX_PARTS = 8  # (each part is one more function to compile)
_OPENMP_LIBRARIES = ("libgomp", "libiomp5", "libomp")
_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def part_functions(vm_module, function: str) -> list[object]:
    """The module's parts of `function`, in order (none where it was not split)."""
    parts = []
    while (found := vm_module.lookup_function(f"{function}{PART_SEPARATOR}{len(parts)}")) is not None:
        parts.append(found)
    return parts


def part_count() -> int:
    """How many parts a program is split into here: one per thread torch
    computes with (at least two, so that a program compiled while torch has
    one thread can use two later; at most MAX_PARTS). Read when the program
    is compiled: where torch has more threads later, only as many as the
    program has parts take part; where it has fewer, each takes several."""
    return max(2, min(torch.get_num_threads(), MAX_PARTS))


@dataclass(frozen=True)
class OpenMP:
    """The entry points of the OpenMP runtime torch computes with."""

    start_team: Callable  # GOMP_parallel_start(callback, data, threads), called with the GIL held
    end_team: Callable  # GOMP_parallel_end(), releasing the GIL while the team finishes
    thread_number: Callable[[], int]  # omp_get_thread_num(), called with the GIL held
    level: Callable[[], int]  # omp_get_level(): how many teams the calling thread is in


@cache
def openmp_runtime() -> OpenMP | None:
    """The loaded OpenMP runtime torch computes with, where it exports
    `GOMP_parallel_start` and `GOMP_parallel_end`."""
    if not torch.backends.openmp.is_available():
        return None
    for path in _loaded_libraries():
        if not os.path.basename(path).startswith(_OPENMP_LIBRARIES):
            continue
        # (Already loaded: the same copy torch uses. PyDLL's functions keep the GIL, CDLL's release it.)
        holding, releasing = ctypes.PyDLL(path), ctypes.CDLL(path)
        if not all(hasattr(holding, name) for name in ("GOMP_parallel_start", "GOMP_parallel_end")):
            continue
        start_team, end_team, thread_number, level = (
            holding.GOMP_parallel_start,
            releasing.GOMP_parallel_end,
            holding.omp_get_thread_num,
            holding.omp_get_level,
        )
        start_team.argtypes, start_team.restype = [_CALLBACK, ctypes.c_void_p, ctypes.c_uint], None
        end_team.argtypes, end_team.restype = [], None
        for query in (thread_number, level):
            query.argtypes, query.restype = [], ctypes.c_int
        return OpenMP(start_team, end_team, thread_number, level)
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
        taken = itertools.count()  # (next() on it: one taker per part, under the GIL)
        self._calls[token] = (arguments, taken, errors)
        level = runtime.level()
        try:
            runtime.start_team(self._callback, token, threads)  # (the GIL kept until the first invoke)
            self._take_parts(self._contexts[0], arguments, taken, errors)
        finally:
            # (Once opened, ended, even where an interrupt came between the two: one level deeper.)
            if runtime.level() > level:
                runtime.end_team()
            del self._calls[token]
        if errors:
            raise errors[0]

    def _run_parts(self, token: int) -> None:
        """A worker's share (the team's callback; the caller takes its own directly)."""
        arguments, taken, errors = self._calls[token]
        try:
            _keep_thread_state()
            context = self._contexts.get(openmp_runtime().thread_number())
        except BaseException as error:  # (raised by the caller once every thread is done)
            errors.append(error)
            return
        if context is not None:  # (None: a thread beyond those counted when the call began)
            self._take_parts(context, arguments, taken, errors)

    def _take_parts(self, context, arguments, taken: Iterator[int], errors: list[BaseException]) -> None:
        """The next part not taken, until none is left. A failure is kept
        for the caller, which raises it once every thread is done."""
        try:
            for index in taken:
                if index >= len(self._parts) or errors:
                    return
                context.invoke(self._parts[index], arguments, iree_runtime.VmVariantList(1))
        except BaseException as error:
            errors.append(error)
