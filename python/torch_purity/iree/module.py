"""IREE: linalg-on-tensors -> a loaded module, for a target of `targets.TARGETS`.

Loading and calling need IREE's runtime only; the compiler is imported when
something is compiled, so saved programs run where it is not installed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, partial

import iree.runtime as iree_runtime
import numpy as np
import torch
from torch.utils.dlpack import to_dlpack

from ..errors import PurityError
from .cpu_driver import CALLING_THREAD
from .data_tiling import data_tiling_flags
from .devices import config as device_config
from .narrow_products import configure_narrow_products
from .parallel_parts import PartsInvoker, part_count, part_functions
from .targets import get_target


class IreeCompileError(Exception):
    pass


def program_flags(text: str, target: str) -> list[str]:
    """iree-compile's flags for this program: its target's, and data tiling
    where it is estimated to win (data_tiling.py)."""
    spec = get_target(target)
    return [*spec.compile_flags, *data_tiling_flags(text, spec.device_type)]


def program_text(text: str, target: str) -> str:
    """What iree-compile is given for this program: on the CPU, a program
    for the calling thread gains its independent parts where it has some
    (purity-split-independent-parts, run on torch's threads:
    parallel_parts.py), and narrow products carry their tile sizes
    (narrow_products.py)."""
    spec = get_target(target)
    if spec.device_type != "cpu":
        return text
    if spec.runtime_driver(text) == CALLING_THREAD:
        text = with_independent_parts(text)
    return configure_narrow_products(text)


def with_independent_parts(text: str) -> str:
    """`text` with purity-split-independent-parts applied, one part per
    thread torch computes with (unchanged where no function splits)."""
    from torch_mlir import ir

    from ..importer import new_context
    from ..pipeline import pass_manager

    with new_context() as context, ir.Location.unknown():
        context.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError:
            # Ops of dialects torch-mlir's bindings do not register (`tm_tensor.scatter`, as printed
            # by the lowering) are read in their generic form, which IREE prints.
            module = ir.Module.parse(_generic_form(text))
        before = len(module.body.operations)
        pass_manager([f"purity-split-independent-parts{{parts={part_count()}}}"], context).run(module.operation)
        if len(module.body.operations) == before:
            return text
        return module.operation.get_asm(enable_debug_info=True)


def _generic_form(text: str) -> str:
    from iree.compiler import ir

    with ir.Context():
        return ir.Module.parse(text).operation.get_asm(enable_debug_info=True, print_generic_op_form=True)


def compile_linalg(text: str, target: str, extra_flags: tuple[str, ...] = ()) -> bytes:
    """A VM flatbuffer for `target` from linalg-on-tensors text."""
    import iree.compiler as iree_compiler

    flags = [*program_flags(text, target), *extra_flags]
    try:
        return iree_compiler.compile_str(program_text(text, target), input_type="auto", extra_args=flags)
    except iree_compiler.CompilerToolError as error:
        raise IreeCompileError(str(error)) from None


# `stream.cmd.copy %src[%offset], %dst[%offset], %length : ...` and
# `stream.resource.alloca ... : !stream.resource<...>{%size}`, of constant
# sizes (`%c1024`). A copy's line also names its resources' whole sizes.
_STREAM_COPY_LENGTH = re.compile(r"stream\.cmd\.copy\s+%[\w.]+\[[^\]]*\],\s*%[\w.]+\[[^\]]*\],\s*%c(\d+)\b")
_STREAM_ALLOCA_SIZE = re.compile(r"stream\.resource\.alloca\b[^{]*\{%c(\d+)\}")


def scheduled_buffers(text: str, target: str) -> list[tuple[str, int]]:
    """What IREE's schedule for this program copies and allocates on each call:
    ("copy" | "alloca", bytes) per `stream.cmd.copy` (the bytes it copies)
    and `stream.resource.alloca` of a constant size (`--compile-to=stream`).
    A copy as large as an input written in place is a whole-tensor copy
    eager does not make."""
    stream = compile_linalg(text, target, ("--compile-to=stream",)).decode()
    found = []
    for line in stream.splitlines():
        for kind, pattern in (("copy", _STREAM_COPY_LENGTH), ("alloca", _STREAM_ALLOCA_SIZE)):
            match = pattern.search(line)
            if match:
                found.append((kind, int(match.group(1))))
    return found


_ATEN_LOCATION = re.compile(r'loc\("((?:aten|prims)\.[\w.]+)"')


def failing_aten_op(text: str, target: str) -> str | None:
    """The ATen op (`aten.sort.default`) whose lowering iree-compile rejects.

    IREE's diagnostics name the user's line but not the op: compiled again
    with the failing operation printed (with its `loc("aten...")`), the
    first ATen location of the output names it. A link error (`undefined
    symbol: log10f`) prints a whole executable: there the op named like the
    missing function is taken. Only run after a failure."""
    try:
        compile_linalg(text, target, ("--mlir-print-op-on-diagnostic=true",))
    except IreeCompileError as error:
        ops = _ATEN_LOCATION.findall(str(error))
        missing = re.search(r"undefined symbol: (\w+)", str(error))
        if missing:
            stem = missing.group(1).removesuffix("f")
            ops = [op for op in ops if op.split(".")[1] == stem] or ops
        return ops[0] if ops else None
    return None


def iree_compile_command(ir_path: str, target: str, text: str) -> str:
    """The command that compiles the program `text` (written to `ir_path`) as Purity did."""
    return " ".join(["iree-compile", ir_path, *program_flags(text, target), "-o", "module.vmfb"])


@dataclass(frozen=True)
class _Opened:
    """A device and a context holding the module, opened on first use."""

    device: object
    main: object  # IREE's generic invoker of the function
    vm_context: object
    vm_function: object
    keep: object  # the SystemContext that owns the rest
    parts: list[object]  # the function's independent parts (parallel_parts.py), if it has any
    more_contexts: list[object] = field(default_factory=list)  # for other threads' parts


@dataclass
class LoadedModule:
    """A compiled `main` (or another function of the module: a training
    program's `forward` and `backward`), in its own IREE context from the
    first call on (so code for the GPU can be compiled and saved where there
    is none)."""

    target: str
    vmfb: bytes
    function: str = "main"
    driver: str | None = None  # IREE's runtime driver; None: the target's default

    def __post_init__(self) -> None:
        self.device_type = get_target(self.target).device_type

    @cached_property
    def _opened(self) -> _Opened:
        driver = self.driver or get_target(self.target).driver
        try:
            config = device_config(driver)
        except RuntimeError as error:
            raise PurityError(
                "run", f"IREE cannot open a '{driver}' device here: {str(error).splitlines()[0]}"
            ) from None
        context = iree_runtime.SystemContext(config=config)
        context.add_vm_module(iree_runtime.VmModule.copy_buffer(config.vm_instance, self.vmfb))
        module = context.modules.module
        return _Opened(
            config.device,
            module[self.function],
            context.vm_context,
            module.vm_module.lookup_function(self.function),
            context,
            part_functions(module.vm_module, self.function),
        )

    def close(self) -> None:
        """Drops the opened context (IREE's device, context and module); the next call opens them again."""
        self.__dict__.pop("_opened", None)

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

    @property
    def vm_invoke(self):
        """`invoke`'s native step, for callers that build the argument list
        themselves: (argument list, result list) -> None. Where the function
        has independent parts, they run at once on torch's threads
        (parallel_parts.py): every result must then be written into an
        argument, none read from the result list."""
        opened = self._opened
        whole = partial(opened.vm_context.invoke, opened.vm_function)
        if not opened.parts:
            return whole
        return PartsInvoker(opened.parts, whole, opened.vm_context, self._another_context)

    def _another_context(self):
        """One more VM context holding this module, on the same device (for another thread)."""
        opened = self._opened
        context = iree_runtime.SystemContext(config=device_config(self.driver or get_target(self.target).driver))
        context.add_vm_module(opened.keep.modules.module.vm_module)
        opened.more_contexts.append(context)  # (alive as long as the module is open)
        return context.vm_context

    def invoke(self, arguments: list[iree_runtime.HalBufferView | int], result_count: int) -> None:
        """Calls `main` straight through the VM (a few µs instead of the
        generic invoker's ~15). Returns when its work is done; every result
        was written into an argument (storage or tied), so none is read here."""
        argument_list = iree_runtime.VmVariantList(len(arguments))
        for argument in arguments:
            if type(argument) is int:
                argument_list.push_int(argument)
            else:
                argument_list.push_ref(argument)
        result_list = iree_runtime.VmVariantList(result_count)
        opened = self._opened
        opened.vm_context.invoke(opened.vm_function, argument_list, result_list)


def to_host(result) -> np.ndarray:
    return np.asarray(result.to_host()) if hasattr(result, "to_host") else np.asarray(result)
