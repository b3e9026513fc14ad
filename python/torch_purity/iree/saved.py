"""Compiled programs saved to a folder, and loaded where no compiler is installed.

`CompiledProgram.save(folder)` writes `program.json` and one `entry-N.vmfb`
per compiled entry (per input signature the program was called or compiled
with). `torch_purity.load(folder)` reads them back with torch and IREE's
runtime only: compile for `cuda` on a build machine without a GPU, run on a
GPU machine without torch-mlir or IREE's compiler.

A loaded program runs exactly the entries that were saved: a call whose
inputs match none of them (shapes, dtypes, strides, storage offsets, which
inputs share storage, values of non-tensor inputs other than ints, and
each entry's guard on its int inputs) is refused with the signatures it
does take, since nothing can be compiled there. The device is
not part of a saved signature: inputs on the target's device cross without
copies, others as host copies. CPU entries are compiled for the build
machine's processor (`--iree-llvmcpu-target-cpu=host`).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.utils._pytree as pytree

from ..errors import PurityError
from ..guards import SymbolGuard, SymbolicShapes
from .module import LoadedModule
from .runtime import CallingConvention, Executable, OutputNumber, RepeatedOutput, flatten_arguments, input_signature

FORMAT = "purity-saved-program"
# 2: mutation records and index checks as objects (contract.MutationRecord, IndexCheck);
# 3: ints and dynamic sizes out of the signature, each entry's guard on them, shape functions, argument_positions.
# 4: numbers read from tensor data among the outputs ({"output_number": kind}); a version 3 program loads as it is.
# 5: a tensor returned at several places ({"repeated_output": leaf}), which a version 4 reader would return as a
#    dict; versions 3 and 4 load as they are.
VERSION = 5
READABLE_VERSIONS = (3, 4, 5)


def portable_signature(structure: object, signature: tuple) -> str:
    """`input_signature` and the argument structure as text, without devices."""
    if isinstance(structure, tuple):
        structure_text = repr(tuple(None if s is None else (s[0].__name__, s[1]) for s in structure))
    else:
        structure_text = pytree.treespec_dumps(structure)
    parts = []
    for item in signature:
        if item[0] == "value":
            parts.append(("value", item[1].__name__, repr(item[2])))
        elif item[0] == "int":
            parts.append(("int",))
        else:
            shape, dtype, strides, offset, _device, group, same_object_as = item
            strides = strides if isinstance(strides, str) else tuple(strides)
            parts.append((tuple(shape), str(dtype), strides, offset, group, same_object_as))
    return repr((structure_text, tuple(parts)))


def _describe(signature: tuple) -> str:
    """A reader's summary of a signature: `float32[64, 32], 3, i0` (the first int argument)."""
    parts = []
    ints = 0
    for item in signature:
        if item[0] == "value":
            parts.append(repr(item[2]))
        elif item[0] == "int":
            parts.append(f"i{ints}")
            ints += 1
        else:
            sizes = ", ".join("?" if size == -1 else str(size) for size in item[0])
            parts.append(f"{str(item[1]).removeprefix('torch.')}[{sizes}]")
    return ", ".join(parts)


def save_program(
    entries: list[tuple[object, tuple, Executable]], target: str, state_names: list[str] | None, folder: str | Path
) -> Path:
    """Writes the entries ((argument structure, input signature, entry)) to `folder`."""
    if not entries:
        raise PurityError("save", "nothing is compiled yet: call the program or pass example inputs to compile() first")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    records = []
    for number, (structure, signature, entry) in enumerate(entries):
        spec, constants = entry.output_spec
        for index, value in constants.items():
            if not isinstance(value, (bool, int, float, str, type(None), OutputNumber, RepeatedOutput)):
                raise PurityError("save", f"output {index} is a {type(value).__name__}, which cannot be saved")
        vmfb = f"entry-{number}.vmfb"
        (folder / vmfb).write_bytes(entry.module.vmfb)
        records.append(
            {
                "signature": portable_signature(structure, signature),
                "inputs": _describe(signature)
                + (f" where {entry.symbol_guard.readable()}" if entry.symbol_guard.expression else ""),
                "argument_positions": entry.argument_positions,
                "guarded_leaves": entry.guarded_leaves,
                "symbol_guard": entry.symbol_guard.expression,
                "dynamic_dims": [[leaf, list(dims)] for leaf, dims in entry.dynamic_dims.items()],
                "symbolic_shapes": None if entry.symbolic_shapes is None else entry.symbolic_shapes.to_json(),
                "convention": entry.convention.to_json(),
                "outputs": pytree.treespec_dumps(spec),
                "output_constants": [
                    [index, value.to_json() if isinstance(value, (OutputNumber, RepeatedOutput)) else value]
                    for index, value in constants.items()
                ],
                "vmfb": vmfb,
                "driver": entry.module.driver,
            }
        )
    program = {"format": FORMAT, "version": VERSION, "target": target, "state_names": state_names, "entries": records}
    (folder / "program.json").write_text(json.dumps(program, indent=1))
    return folder


class SavedProgram:
    """What `torch_purity.load` returns: call it like the eager program."""

    def __init__(self, folder: Path, program: dict, module: torch.nn.Module | None) -> None:
        self.folder = folder
        self.target: str = program["target"]
        self._module = module
        self._state_names: list[str] | None = program["state_names"]
        # Per signature: the entries for it, each with its guarded leaves and their guard.
        self.entries: dict[str, list[tuple[list[int], SymbolGuard, Executable]]] = {}
        self._inputs: list[str] = []
        # The distinct sets of dynamic dims the entries' signatures leave out.
        self._dynamic_specs: list[dict[int, tuple[int, ...]]] = []
        for record in program["entries"]:
            executable = Executable(
                convention=CallingConvention.from_json(record["convention"]),
                module=LoadedModule(self.target, (folder / record["vmfb"]).read_bytes(), driver=record.get("driver")),
                argument_positions=list(record["argument_positions"]),
                output_spec=[
                    pytree.treespec_loads(record["outputs"]),
                    {index: _output_constant(value) for index, value in record["output_constants"]},
                ],
                symbolic_shapes=None
                if record["symbolic_shapes"] is None
                else SymbolicShapes.from_json(record["symbolic_shapes"]),
            )
            guarded = (list(record["guarded_leaves"]), SymbolGuard(record["symbol_guard"]), executable)
            self.entries.setdefault(record["signature"], []).append(guarded)
            dynamic_dims = {leaf: tuple(dims) for leaf, dims in record["dynamic_dims"]}
            if dynamic_dims not in self._dynamic_specs:
                self._dynamic_specs.append(dynamic_dims)
            self._inputs.append(record["inputs"])

    def _state(self) -> list[torch.Tensor]:
        if self._module is None:
            return []
        return [t for _, t in self._module.named_parameters()] + [t for _, t in self._module.named_buffers()]

    def __call__(self, *args):
        leaves, structure = flatten_arguments(self._state(), args)
        entry = None
        for dynamic_dims in self._dynamic_specs:
            if any(
                leaf >= len(leaves) or not isinstance(leaves[leaf], torch.Tensor) or not leaves[leaf].is_contiguous()
                for leaf in dynamic_dims
            ):
                continue
            key = portable_signature(structure, input_signature(leaves, dynamic_dims))
            entry = next(
                (
                    executable
                    for guarded_leaves, guard, executable in self.entries.get(key, ())
                    if guard.holds([leaves[i] for i in guarded_leaves])
                ),
                None,
            )
            if entry is not None:
                break
        if entry is None:
            taken = "; ".join(f"({inputs})" for inputs in self._inputs)
            raise PurityError(
                "call",
                f"{self.folder} holds no compiled entry for these inputs "
                f"({_describe(input_signature(leaves))}); it takes: {taken}. "
                "Compile and save the program with inputs like these.",
            )
        return entry.run(leaves)


def load(folder: str | Path, module: torch.nn.Module | None = None) -> SavedProgram:
    """A program saved with `CompiledProgram.save`. For a compiled
    nn.Module, pass a module of the same structure: its parameters and
    buffers are the program's state (and are updated like eager's)."""
    folder = Path(folder)
    try:
        program = json.loads((folder / "program.json").read_text())
    except (OSError, ValueError) as error:
        raise PurityError("load", f"{folder} is not a saved Purity program: {error}") from None
    if program.get("format") != FORMAT or program.get("version") not in READABLE_VERSIONS:
        raise PurityError(
            "load",
            f"{folder}/program.json is not a {FORMAT} of version {VERSION} "
            "(programs saved by another version of Purity: compile and save them again)",
        )
    names = program["state_names"]
    if (names is None) != (module is None):
        wanted = "an nn.Module's" if names is not None else "a function's"
        raise PurityError(
            "load", f"{folder} holds {wanted} program: pass module= exactly when it was compiled from a module"
        )
    if module is not None:
        given = [f"param:{n}" for n, _ in module.named_parameters()] + [
            f"buffer:{n}" for n, _ in module.named_buffers()
        ]
        if given != names:
            raise PurityError(
                "load", f"the module's parameters and buffers ({given}) are not the saved program's ({names})"
            )
    return SavedProgram(folder, program, module)


def _output_constant(value: object) -> object:
    """An output constant as saved: a number from tensor data is read from its output per call; a repeated
    tensor is the earlier leaf's."""
    if isinstance(value, dict) and set(value) == {"output_number"}:
        return OutputNumber(value["output_number"])
    if isinstance(value, dict) and set(value) == {"repeated_output"}:
        return RepeatedOutput(value["repeated_output"])
    return value
