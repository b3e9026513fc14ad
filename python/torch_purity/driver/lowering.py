"""Mutable Torch IR -> linalg-on-tensors, stage by stage, with reproducible failures."""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from torch_mlir import ir
from torch_mlir.ir import StringAttr

from ..contract import CallingConvention
from ..contract.ir import read_calling_convention
from ..errors import PurityError
from ..ir_helpers.functions import function_ops
from ..ir_helpers.queries import aten_op_of_location, source_location
from ..pipeline import STAGES, pass_manager, reproducer_command


@dataclass
class LoweredProgram:
    stage_ir: dict[str, str] = field(default_factory=dict)  # stage name -> IR after it
    seconds: dict[str, float] = field(default_factory=dict)  # stage name -> time
    convention: CallingConvention | None = None  # read from the last stage's IR
    # A training program's: `convention` is its @forward's, this its @backward's.
    backward_convention: CallingConvention | None = None

    @property
    def iree_input(self) -> str:
        """The last stage's IR: what iree-compile takes."""
        return self.stage_ir[STAGES[-1].name]


def failure_directory(dump_dir: str | None) -> Path:
    directory = Path(dump_dir) if dump_dir else Path(tempfile.gettempdir()) / "purity-failures"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def write_failing_ir(text: str, stage: str, dump_dir: str | None) -> Path:
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    path = failure_directory(dump_dir) / f"{stage}-input-{digest}.mlir"
    path.write_text(text)
    return path


def lower_to_linalg(module: ir.Module, dump_dir: str | None = None, on_stage=None) -> LoweredProgram:
    """Runs every stage of `pipeline.STAGES` on `module` (modified in place).

    On failure: writes the IR the stage started from to a file and raises a
    PurityError naming the stage, the op and the user's source line from the
    first diagnostic, and the purity-opt command that reproduces it.
    `on_stage(name)` is called as each stage starts."""
    lowered = LoweredProgram()
    context = module.context
    if dump_dir:
        os.makedirs(dump_dir, exist_ok=True)
    for number, stage in enumerate(STAGES, start=2):
        if on_stage is not None:
            on_stage(stage.name)  # lowering_worker: which stage a crash happened in
        before = module.operation.get_asm(enable_debug_info=True)
        start = time.perf_counter()
        try:
            with context:
                pass_manager(list(stage.passes), context).run(module.operation)
        except ir.MLIRError as error:
            path = write_failing_ir(before, stage.name, dump_dir)
            diagnostic = error.error_diagnostics[0] if error.error_diagnostics else None
            message = str(diagnostic.message) if diagnostic else str(error)
            raise PurityError(
                stage.name,
                f"{message}\n  IR before this stage: {path}\n"
                f"  reproduce with: {reproducer_command(str(path), list(stage.passes))}",
                op=_op_name_of(diagnostic),
                source=source_location(diagnostic.location) if diagnostic else None,
            ) from None
        lowered.seconds[stage.name] = time.perf_counter() - start
        lowered.stage_ir[stage.name] = module.operation.get_asm(enable_debug_info=True)
        if dump_dir:
            Path(dump_dir, f"{number}-{stage.name}.mlir").write_text(lowered.stage_ir[stage.name])
    with context:
        names = {StringAttr(f.attributes["sym_name"]).value for f in function_ops(module.operation)}
        if "backward" in names:
            lowered.convention = read_calling_convention(module, "forward")
            lowered.backward_convention = read_calling_convention(module, "backward")
        else:
            lowered.convention = read_calling_convention(module)
    return lowered


def _op_name_of(diagnostic) -> str | None:
    return aten_op_of_location(diagnostic.location) if diagnostic is not None else None
