"""Runs a program through import -> purity-functionalize -> IREE (llvm-cpu),
and compares with eager PyTorch: outputs and the inputs' contents afterwards.

Test-only: the compile issue brings the real runtime. Here IREE's torch input
accepts the functional IR's edge form directly; mutated arguments are passed
as device arrays and read back after the call.
"""

from __future__ import annotations

import re

import iree.compiler as iree_compiler
import iree.runtime as iree_runtime
import numpy as np
import torch
from torch_mlir.passmanager import PassManager

from torch_purity import import_fx
from torch_purity.contract import ALIAS_BASE
from torch_purity.importer import new_context
from torch_purity.iree.targets import COMMON_FLAGS
from torch_purity.registry import get_pass


def functionalized_ir(program, *inputs) -> str:
    context = new_context()
    module = import_fx(program, *inputs, context=context)
    with context:
        pm = PassManager("builtin.module")
        get_pass("purity-functionalize")().add_to(pm)
        get_pass("purity-decompose-strided")().add_to(pm)
        pm.add("canonicalize")
        pm.run(module.operation)
    text = str(module)
    body = "\n".join(text.splitlines()[2:])
    # Value semantics inside the body: no op produces a non-value tensor.
    assert not re.search(r"(->|:) !torch\.tensor<", body.replace("overwrites", "")), text
    return text


def run_compiled(program, *inputs):
    """(outputs, inputs after the call) computed by the compiled program; the
    caller's tensors are not touched."""
    text = functionalized_ir(program, *inputs)
    signature = text.splitlines()[1]
    # Arguments that stay !torch.tensor are the ones the program writes.
    written = [f"%arg{i}: !torch.tensor<" in signature for i in range(len(inputs))]
    vmfb = iree_compiler.compile_str(
        text, target_backends=["llvm-cpu"], input_type="torch", extra_args=list(COMMON_FLAGS)
    )
    config = iree_runtime.Config("local-task")
    module = iree_runtime.load_vm_flatbuffer(vmfb, driver="local-task")
    device_inputs = [iree_runtime.asdevicearray(config.device, t.detach().numpy().copy()) for t in inputs]
    results = module.main(*device_inputs)
    results = results if isinstance(results, (list, tuple)) else [results]
    outputs = [torch.from_numpy(np.asarray(r.to_host()).copy()) for r in results]
    # Intermediates that several outputs view come last (purity.alias_base): not program outputs.
    outputs = outputs[: len(outputs) - signature.count(ALIAS_BASE)]
    # IREE may reuse the buffer of an argument it was not told is written
    # (docs/architecture.md, IREE behaviours): only written arguments are read back.
    after = [
        torch.from_numpy(np.asarray(d.to_host()).copy()) if is_written else t.clone()
        for d, t, is_written in zip(device_inputs, inputs, written)
    ]
    return outputs, after


def assert_matches_eager(program, *inputs, atol=1e-5):
    originals = [t.clone() for t in inputs]
    outputs, after = run_compiled(program, *inputs)
    for original, given in zip(originals, inputs):
        assert torch.equal(original, given), "compiling wrote into the caller's tensor"
    eager_inputs = [t.clone() for t in inputs]
    expected = program(*eager_inputs)
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    assert len(outputs) == len(expected)
    for index, (got, want) in enumerate(zip(outputs, expected)):
        torch.testing.assert_close(got, want.contiguous(), atol=atol, rtol=1e-5, msg=f"output {index}")
    for index, (got, want, original) in enumerate(zip(after, eager_inputs, originals)):
        # Compare storage contents: a metadata mutation (t_) changes how eager's
        # tensor sees its storage, not what the storage holds.
        storage_view = want.as_strided(original.shape, original.stride(), original.storage_offset())
        torch.testing.assert_close(got, storage_view, atol=atol, rtol=1e-5, msg=f"input {index} after the call")
