"""Every e2e program, compiled with torch_purity.compile and with
torch.compile(backend="purity"), against eager on two sets of input data:
outputs, the inputs' contents and layouts after the call, and which outputs
are views of which inputs."""

import os

import pytest
import torch
from programs import PROGRAMS

import torch_purity
from torch_purity.checking import compare

# PURITY_E2E_TARGET=cuda compiles for the GPU (CPU inputs then cross as host
# copies); benchmarks/gpu_check.py checks the programs on CUDA tensors.
TARGET = os.environ.get("PURITY_E2E_TARGET", "cpu")

SEEDS = (0, 1)


@pytest.mark.parametrize("name,program,make_inputs", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_compile_matches_eager(name, program, make_inputs):
    compiled = torch_purity.compile(program, target=TARGET)
    for seed in SEEDS:
        report = compare(program, compiled, make_inputs(seed))
        assert report.ok, f"seed {seed}: " + "; ".join(report.problems)
    assert len(compiled.cache) == 1, "new data of the same shapes must reuse the compiled code"


@pytest.mark.parametrize("name,program,make_inputs", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_torch_compile_backend_matches_eager(name, program, make_inputs):
    torch._dynamo.reset()
    compiled = torch.compile(program, backend="purity")
    for seed in SEEDS:
        report = compare(program, compiled, make_inputs(seed))
        assert report.ok, f"seed {seed}: " + "; ".join(report.problems)
