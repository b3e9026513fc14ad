"""The lowering stages in a child process: a native crash is a PurityError, not the end of the caller's process.

torch-mlir's passes are C++ and Purity's passes hold MLIR handles from
Python; a bug in either (a handle used after its op was erased, an assertion
in a C++ pass) ends the process it runs in with a signal. `lower()` sends the
mutable Torch IR to a long-lived child (`python -m
torch_purity.driver.lowering_worker`, started on first use, about 2 s, then
reused), which runs `lowering.lower_to_linalg` and sends back the
`LoweredProgram` or the located PurityError. When the child dies, `lower()`
writes the IR it was given next to the other failure files, raises a
PurityError naming the stage that was running, the signal, and the
purity-opt command that reproduces the crash, and starts a new child on the
next call. IREE's compiler already runs as a subprocess (`iree-compile`).

`PURITY_LOWER_IN_PROCESS=1` runs the stages in the calling process instead
(for a debugger); `PURITY_LOWERING_WORKER_CRASH_IN=STAGE` makes the child
crash as that stage starts (the test of this containment);
`PURITY_VERIFY_EACH_PASS=1` (passed on to the child) makes every Purity
pass verify the module after it runs and name itself when the IR it left is
invalid (base.ModulePass).
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from typing import BinaryIO

from ..errors import PurityCompilerCrash, PurityError
from .lowering import LoweredProgram, write_failing_ir

_HEADER = struct.Struct("<Q")
_lock = threading.Lock()
_worker: subprocess.Popen | None = None
_worker_parent = 0  # the process that started _worker (a forked copy of this one must start its own)


def lower(mutable_ir: str, dump_dir: str | None) -> LoweredProgram:
    """`lowering.lower_to_linalg` on the module `mutable_ir` holds, in the child."""
    if os.environ.get("PURITY_LOWER_IN_PROCESS") == "1":
        return _lower_here(mutable_ir, dump_dir)
    global _worker, _worker_parent
    with _lock:
        if _worker is None or _worker_parent != os.getpid() or _worker.poll() is not None:
            _worker = subprocess.Popen(
                [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=os.environ.copy()
            )
            _worker_parent = os.getpid()
        worker = _worker
        stage = "functional-torch"
        try:
            _send(worker.stdin, ("lower", mutable_ir, dump_dir))
            while True:
                kind, payload = _receive(worker.stdout)
                if kind == "stage":
                    stage = payload
                elif kind == "lowered":
                    return payload
                else:  # "error" or "internal-error": a located PurityError's fields
                    failed_stage, message, op, source = payload
                    if kind == "internal-error":  # the worker exits after it: start the next one afresh
                        worker.wait()
                        _worker = None
                    raise PurityError(failed_stage, message, op=op, source=source)
        except (EOFError, BrokenPipeError, OSError):
            _worker = None
            code = worker.wait()
            path = write_failing_ir(mutable_ir, f"crash-{stage}", dump_dir)
            raise PurityCompilerCrash(
                stage,
                f"the compiler crashed ({_describe_exit(code)}) in this stage; nothing of the caller's was touched\n"
                f"  mutable Torch IR: {path}\n"
                f"  reproduce with: purity-opt {path} --purity-lower-to-linalg",
            ) from None


def _lower_here(mutable_ir: str, dump_dir: str | None, on_stage=None) -> LoweredProgram:
    from torch_mlir import ir

    from ..importer import new_context
    from .lowering import lower_to_linalg

    context = new_context()
    with context:
        module = ir.Module.parse(mutable_ir)
    return lower_to_linalg(module, dump_dir, on_stage=on_stage)


def signal_name(code: int) -> str:
    """The signal that ended a child process, from its negative exit status."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return str(-code)


def _describe_exit(code: int) -> str:
    return f"signal {signal_name(code)}" if code < 0 else f"exit status {code}"


def _send(stream: BinaryIO, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO) -> tuple[str, object]:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (length,) = _HEADER.unpack(header)
    data = stream.read(length)
    if len(data) < length:
        raise EOFError
    return pickle.loads(data)


def _started(replies: BinaryIO, stage: str) -> None:
    _send(replies, ("stage", stage))
    # Fault injection for the containment tests: a native crash, or a bug of
    # ours (a Python exception), in that stage.
    if os.environ.get("PURITY_LOWERING_WORKER_CRASH_IN") == stage:
        os.kill(os.getpid(), signal.SIGSEGV)
    if os.environ.get("PURITY_LOWERING_WORKER_RAISE_IN") == stage:
        raise RuntimeError(f"injected in {stage}")


def _serve() -> None:
    # Replies go through the original stdout; anything printed (by C++ too) goes to stderr.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    while True:
        try:
            _, mutable_ir, dump_dir = _receive(requests)
        except EOFError:
            return
        stages: list[str] = []

        def started(stage: str, stages: list[str] = stages) -> None:
            stages.append(stage)
            _started(replies, stage)

        try:
            lowered = _lower_here(mutable_ir, dump_dir, on_stage=started)
        except PurityError as error:
            _send(replies, ("error", (error.stage, error.message, error.op, error.source)))
            continue
        except Exception as error:  # a bug of ours: still named by its stage and type
            stage = stages[-1] if stages else "lower"
            _send(replies, ("internal-error", (stage, f"internal error: {type(error).__name__}: {error}", None, None)))
            # A bug of ours may have left native state broken (a dangling IR
            # handle once corrupted this process, and every later program
            # failed with `SystemError: unknown opcode`): the next program
            # gets a fresh worker.
            return
        _send(replies, ("lowered", lowered))


if __name__ == "__main__":
    import faulthandler

    faulthandler.enable()  # a crash prints the Python stack of the pass to stderr
    _serve()
