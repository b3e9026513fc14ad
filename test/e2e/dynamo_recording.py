"""A `backend="purity"` for torch.compile that keeps each CompiledProgram
Dynamo's graphs got, so tests can count Purity's compiled entries."""

from __future__ import annotations

from torch_purity.dynamo_backend import purity_backend


def recording_purity_backend() -> tuple[object, list]:
    """(backend, the CompiledPrograms it made, in order)."""
    programs: list = []

    def backend(graph_module, example_inputs):
        run = purity_backend(graph_module, example_inputs)
        programs.append(run.purity_compiled)
        return run

    return backend, programs
