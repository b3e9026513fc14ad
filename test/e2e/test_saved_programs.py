"""Programs saved with CompiledProgram.save and run with torch_purity.load
(torch and IREE's runtime only), and the way tied inputs cross where IREE's
imports of written memory refuse transfers (the GPU's DLPack imports),
exercised here on the CPU."""

import copy
import json
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_purity
from torch_purity import PurityError
from torch_purity.checking import clone_preserving_aliasing, compare


def write_row(cache, row, position: int):
    cache[position] = row
    return cache[: position + 1].sum(0)


def sgd_step(param, grad, momentum_buffer):
    momentum_buffer.mul_(0.9).add_(grad)
    param.add_(momentum_buffer, alpha=-0.1)
    return param.sum()


def kv_inputs(seed: int):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(64, 16, generator=generator), torch.randn(16, generator=generator), 5


def test_loaded_program_runs_without_the_compiler(tmp_path):
    """Saved here, loaded in a process where importing torch-mlir or IREE's
    compiler fails: outputs, the cache after the call and output aliasing
    match eager."""
    compiled = torch_purity.compile(write_row, *kv_inputs(0))
    compiled.save(tmp_path / "program")
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys
        class NoCompiler(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "torch_mlir" or name.startswith("iree.compiler"):
                    raise ImportError("no compiler here: " + name)
        sys.meta_path.insert(0, NoCompiler())
        import torch, torch_purity
        from torch_purity.checking import compare
        sys.path.insert(0, {str(__file__.rsplit("/", 1)[0])!r})
        from test_saved_programs import kv_inputs, write_row
        loaded = torch_purity.load({str(tmp_path / "program")!r})
        for seed in (1, 2):
            report = compare(write_row, loaded, kv_inputs(seed))
            assert report.ok, report.problems
        print("ok", "torch_mlir" in sys.modules)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["ok", "False"]


def test_loaded_program_refuses_inputs_it_was_not_compiled_for(tmp_path):
    compiled = torch_purity.compile(write_row, *kv_inputs(0))
    loaded = torch_purity.load(compiled.save(tmp_path / "program"))
    cache, row = torch.zeros(32, 16), torch.ones(16)
    with pytest.raises(PurityError) as error:
        loaded(cache, row, 5)
    message = str(error.value)
    assert "takes: (float32[64, 16], float32[16], i0 where " in message and "i0 <= 63" in message, message
    assert "(float32[32, 16], float32[16], i0)" in message, message
    assert torch.equal(cache, torch.zeros(32, 16))
    assert compare(write_row, loaded, (*kv_inputs(1)[:2], 6)).ok  # the position is a runtime value
    cache = kv_inputs(0)[0]
    before = cache.clone()
    with pytest.raises(PurityError, match="takes"):
        loaded(cache, torch.ones(16), 64)  # outside the guard the entry was traced under
    assert torch.equal(cache, before)


def test_every_compiled_entry_is_saved(tmp_path):
    compiled = torch_purity.compile(write_row, *kv_inputs(0))
    compiled(torch.randn(8, 16), torch.randn(16), 2)
    loaded = torch_purity.load(compiled.save(tmp_path / "program"))
    assert len(loaded.entries) == 2
    assert compare(write_row, loaded, (torch.randn(8, 16), torch.randn(16), 2)).ok


def test_saved_module_updates_the_given_modules_state(tmp_path):
    model = torch.nn.BatchNorm1d(6)
    x = torch.randn(10, 6)
    with torch.no_grad():  # a saved program runs inference
        compiled = torch_purity.compile(model, x)
    compiled.save(tmp_path / "bn")
    eager_model, loaded_model = copy.deepcopy(model), copy.deepcopy(model)
    loaded = torch_purity.load(tmp_path / "bn", module=loaded_model)
    for _ in range(2):
        assert torch.allclose(loaded(x), eager_model(x), atol=1e-5)
    assert torch.allclose(loaded_model.running_mean, eager_model.running_mean, atol=1e-6)
    assert torch.equal(loaded_model.num_batches_tracked, eager_model.num_batches_tracked)
    with pytest.raises(PurityError, match="module="):
        torch_purity.load(tmp_path / "bn")
    with pytest.raises(PurityError, match="parameters and buffers"):
        torch_purity.load(tmp_path / "bn", module=torch.nn.Linear(6, 6))


def test_save_and_load_report_bad_requests(tmp_path):
    with pytest.raises(PurityError, match="nothing is compiled yet"):
        torch_purity.compile(write_row).save(tmp_path / "empty")
    with pytest.raises(PurityError, match="not a saved Purity program"):
        torch_purity.load(tmp_path / "missing")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "program.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(PurityError, match="not a purity-saved-program"):
        torch_purity.load(tmp_path / "other")


def test_row_write_crosses_in_place_after_a_checked_first_call():
    """A row write is a dispatch that reads its destination
    (purity-dispatch-argument-writes): the first call writes a copy of the cache,
    the next ones the caller's cache itself."""
    cache, row, position = kv_inputs(0)
    compiled = torch_purity.compile(write_row, cache, row, position)
    entry, _ = compiled.entry_for(cache, row, position)
    assert entry.convention.tied_inputs == {0}
    for call in range(3):
        row = torch.randn(16)
        expected = cache.clone()
        want = write_row(expected, row, position)
        got = compiled(cache, row, position)
        assert torch.allclose(got, want, atol=1e-5) and torch.equal(cache, expected)
        assert (0 in entry.imports) == (call > 0), f"call {call}: the cache crossed the wrong way"
    assert entry.hand_over == "in place"
    assert entry.imports[0][0] == cache.data_ptr()


def test_results_are_written_into_tensors_torch_allocated():
    """Each output is the tensor the runtime passed as the result's storage
    argument, and the parameter also read by the sum is still written in
    place: IREE wrote everything with dispatches."""
    inputs = tuple(torch.randn(32, 32) for _ in range(3))
    compiled = torch_purity.compile(sgd_step, *inputs)
    entry, _ = compiled.entry_for(*inputs)
    assert [result for result, _ in entry.convention.result_storage] == entry.convention.output_results
    for _ in range(2):
        expected = clone_preserving_aliasing(inputs)
        want = sgd_step(*expected)
        got = compiled(*inputs)
        assert torch.allclose(got, want, atol=1e-4)
        for tensor, eager in zip(inputs, expected):
            assert torch.allclose(tensor, eager, atol=1e-6)
    assert entry.hand_over == "in place" and {0, 2} <= set(entry.imports)


def test_a_refused_first_call_falls_back_to_host_copies(monkeypatch):
    """Should IREE refuse to write imported memory (a transfer into it), the
    first call has only handed it copies: the entry switches to host copies,
    and this and later calls match eager."""
    cache, row, position = kv_inputs(0)
    compiled = torch_purity.compile(write_row, cache, row, position)
    entry, _ = compiled.entry_for(cache, row, position)
    invoke = entry.module.invoke

    def refuse(arguments, result_count):
        raise RuntimeError("c/runtime/src/iree/hal/buffer.c:325: PERMISSION_DENIED; buffer does not support ...")

    monkeypatch.setattr(entry.module, "invoke", refuse)
    for _ in range(2):
        expected = cache.clone()
        want = write_row(expected, row, position)
        assert torch.allclose(compiled(cache, row, position), want, atol=1e-5) and torch.equal(cache, expected)
    assert entry.hand_over == "host copies" and not entry.imports.get(0)
    monkeypatch.setattr(entry.module, "invoke", invoke)


def test_bfloat16_inputs_cross_to_iree():
    def scale_in_place(x, y):
        x.mul_(2)
        return x + y

    inputs = (torch.randn(16).to(torch.bfloat16), torch.randn(16).to(torch.bfloat16))
    report = compare(scale_in_place, torch_purity.compile(scale_in_place), inputs, atol=1e-2, rtol=1e-2)
    assert report.ok, report.problems


def lookup_and_write(cache, row, weight, ids):
    cache[1] = row
    return torch.nn.functional.embedding(ids, weight)


def test_loaded_program_keeps_its_index_checks(tmp_path):
    """The checks' flags are part of the saved calling convention: a loaded
    program raises on an out-of-range id, with the caller's tensors untouched."""

    def inputs(ids):
        return [torch.zeros(4, 3), torch.ones(3), torch.randn(10, 3), torch.tensor(ids)]

    compiled = torch_purity.compile(lookup_and_write, *inputs([1, 9]))
    compiled.save(tmp_path / "program")
    loaded = torch_purity.load(tmp_path / "program")
    report = compare(lookup_and_write, loaded, inputs([0, 9]))
    assert report.ok, report.problems
    args = inputs([3, 10])
    before = clone_preserving_aliasing(args)
    with pytest.raises(torch_purity.PurityIndexError, match="aten.embedding"):
        loaded(*args)
    for got, want in zip(args, before):
        assert torch.equal(got, want)


def test_saved_program_never_returns_a_silent_gradient(tmp_path):
    """A saved program runs inference: with an input requiring grad its
    output requires grad as eager's does, and a backward raises instead of
    giving a wrong gradient."""

    def scale(x):
        return x * 3

    with torch.no_grad():
        compiled = torch_purity.compile(scale, torch.randn(4))
    compiled.save(tmp_path / "scale")
    loaded = torch_purity.load(tmp_path / "scale")
    x = torch.randn(4, requires_grad=True)
    out = loaded(x)
    assert out.requires_grad
    with pytest.raises(PurityError, match="compiled for inference"):
        out.sum().backward()
    assert x.grad is None
