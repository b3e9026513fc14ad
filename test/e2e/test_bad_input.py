"""Bad input: clear errors, and the caller's tensors untouched."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torch_purity
from torch_purity import EagerFallbackWarning, PurityError
from torch_purity.checking import compare

BIN = Path(sys.executable).parent


def write_row_then_matmul(x, w):
    x[0].add_(1)
    return x @ w


def assert_untouched(tensors, originals):
    for tensor, original in zip(tensors, originals):
        assert torch.equal(tensor, original), "a failed call wrote into the caller's tensor"


def test_wrong_number_of_arguments():
    compiled = torch_purity.compile(write_row_then_matmul)
    x = torch.randn(3, 4)
    before = x.clone()
    with pytest.raises(PurityError, match="cannot take 1 arguments"):
        compiled(x)
    assert_untouched([x], [before])


def test_shapes_the_program_rejects():
    compiled = torch_purity.compile(write_row_then_matmul, torch.randn(3, 4), torch.randn(4, 2))
    x, w = torch.randn(3, 4), torch.randn(5, 2)
    before = (x.clone(), w.clone())
    with pytest.raises(PurityError, match="trace failed.*(shape|size|reduction dim)"):
        compiled(x, w)
    assert_untouched([x, w], before)


def test_an_error_in_the_users_code_names_its_line():
    def program(x):
        if x.shape[0] > 2:
            raise ValueError("too many rows")
        return x

    with pytest.raises(PurityError) as raised:
        torch_purity.compile(program, torch.randn(3, 4))
    line = program.__code__.co_firstlineno + 2
    assert f"trace failed at {__file__}:{line}: ValueError: too many rows" in str(raised.value)


def test_dtypes_the_program_rejects():
    compiled = torch_purity.compile(write_row_then_matmul)
    x, w = torch.randn(3, 4), torch.randint(0, 3, (4, 2))
    before = (x.clone(), w.clone())
    with pytest.raises(PurityError, match="failed on op aten.mm.default at .*test_bad_input.py"):
        compiled(x, w)
    assert_untouched([x, w], before)


def scale(x, factor, label):
    return x * factor if label == "scale" else x


def test_non_tensor_arguments_are_specialized():
    compiled = torch_purity.compile(scale)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, 2.0, "scale"), x * 2.0)
    torch.testing.assert_close(compiled(x, 3.0, "scale"), x * 3.0)
    torch.testing.assert_close(compiled(x, 3.0, "other"), x)
    assert len(compiled.cache) == 3


def write_into_expanded(x):
    x.expand(3, 4).add_(1)
    return x


def write_with_internal_overlap(x):
    (x + x).unfold(1, 3, 2).abs_()
    return x


def test_program_eager_rejects():
    x = torch.randn(1, 4)
    before = x.clone()
    with pytest.raises(RuntimeError, match="memory location"):
        write_into_expanded(x.clone())
    with pytest.raises(PurityError, match="a write through 'torch.aten.expand' would write overlapping memory"):
        torch_purity.compile(write_into_expanded, fallback="error")(x)
    assert_untouched([x], [before])
    # With the eager fallback (the default), the write runs in eager first, on
    # copies, while compiling: eager's own error, located, before any call.
    with pytest.raises(PurityError, match=r"aten.add_.Tensor at .*test_bad_input.py:\d+: RuntimeError in eager too"):
        torch_purity.compile(write_into_expanded)(x)
    assert_untouched([x], [before])


def test_write_through_overlapping_unfold_runs_in_eager():
    # Eager accepts this (abs_ of overlapping windows); Purity's compiled code
    # refuses it clearly, and the default fallback runs that write in eager.
    x = torch.randn(2, 7)
    before = x.clone()
    with pytest.raises(PurityError, match="a write through 'torch.aten.unfold'"):
        torch_purity.compile(write_with_internal_overlap, fallback="error")(x)
    assert_untouched([x], [before])
    with pytest.warns(EagerFallbackWarning, match="aten.abs_.default"):
        report = compare(write_with_internal_overlap, torch_purity.compile(write_with_internal_overlap), [x])
    assert report.ok, report.problems


def test_purity_run_reports_failures_without_traceback(tmp_path):
    source = tmp_path / "bad.py"
    source.write_text(
        "import torch\n"
        "def program(x):\n    x.expand(3, 4).add_(1)\n    return x\n"
        "def example_inputs():\n    return (torch.randn(1, 4),)\n"
    )
    result = subprocess.run([str(BIN / "purity"), "run", str(source)], capture_output=True, text=True)
    assert result.returncode == 1
    # The eager fallback first runs the write in eager (on copies): eager's error, with Purity's own.
    assert "purity: error: compile failed on op aten.add_.Tensor at" in result.stderr
    assert "functional-torch failed on op aten.add_.Tensor at" in result.stderr
    assert "reproduce with: purity-opt" in result.stderr and "Traceback" not in result.stderr


def test_purity_fuzz_reports_counts():
    result = subprocess.run(
        [str(BIN / "purity"), "fuzz", "--n", "3", "--seed", "5", "--no-save"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "programs" in result.stdout and "failed 0" in result.stdout


def test_a_crash_in_a_compiler_stage_is_a_purity_error(monkeypatch, tmp_path):
    """The lowering stages run in a child process: a native crash there (here
    injected as SIGSEGV when the linalg stage starts) is a PurityError naming
    the stage and the reproducing command; the caller's process and tensors
    live on, and the next compilation works."""
    from torch_purity.driver import lowering_worker

    monkeypatch.setenv("PURITY_LOWERING_WORKER_CRASH_IN", "linalg")
    monkeypatch.setattr(lowering_worker, "_worker", None)  # a child that sees the variable
    x, w = torch.randn(3, 4), torch.randn(4, 2)
    before = (x.clone(), w.clone())
    with pytest.raises(PurityError, match=r"linalg failed: the compiler crashed \(signal SIGSEGV\)") as raised:
        torch_purity.compile(write_row_then_matmul, dump_dir=str(tmp_path))(x, w)
    assert "reproduce with: purity-opt" in str(raised.value)
    assert any(tmp_path.glob("crash-linalg-input-*.mlir"))
    assert_untouched([x, w], before)
    monkeypatch.delenv("PURITY_LOWERING_WORKER_CRASH_IN")
    expected = write_row_then_matmul(x.clone(), w)
    torch.testing.assert_close(torch_purity.compile(write_row_then_matmul)(x, w), expected)


def test_an_internal_error_in_a_stage_ends_that_worker(monkeypatch):
    """A Python exception in a stage is a bug of ours, reported as an internal
    error of that stage; it may have left the worker's native state broken (a
    dangling IR handle once did, and every later program failed), so the next
    compilation runs in a new worker, and works."""
    from torch_purity.driver import lowering_worker

    monkeypatch.setenv("PURITY_LOWERING_WORKER_RAISE_IN", "linalg")
    monkeypatch.setattr(lowering_worker, "_worker", None)
    x, w = torch.randn(3, 4), torch.randn(4, 2)
    before = (x.clone(), w.clone())
    with pytest.raises(PurityError, match=r"linalg failed: internal error: RuntimeError: injected in linalg"):
        torch_purity.compile(write_row_then_matmul)(x, w)
    assert_untouched([x, w], before)
    assert lowering_worker._worker is None
    monkeypatch.delenv("PURITY_LOWERING_WORKER_RAISE_IN")
    expected = write_row_then_matmul(x.clone(), w)
    torch.testing.assert_close(torch_purity.compile(write_row_then_matmul)(x, w), expected)
    assert lowering_worker._worker is not None and lowering_worker._worker.poll() is None


def test_verify_each_pass_mode_compiles_like_the_default(monkeypatch):
    from torch_purity.driver import lowering_worker

    monkeypatch.setenv("PURITY_VERIFY_EACH_PASS", "1")
    monkeypatch.setenv("PURITY_LOWER_IN_PROCESS", "1")
    monkeypatch.setattr(lowering_worker, "_worker", None)
    x, w = torch.randn(3, 4), torch.randn(4, 2)
    expected = write_row_then_matmul(x.clone(), w)
    torch.testing.assert_close(torch_purity.compile(write_row_then_matmul)(x, w), expected)


def as_strided_over_channels_last(x):
    return torch.as_strided(x.contiguous(memory_format=torch.channels_last), (2, 3), (1, 4))


def test_as_strided_over_a_non_contiguous_intermediate_runs_in_eager():
    """Value semantics keep no strides: as_strided over a tensor the program
    lays out as channels_last would read the wrong elements (it did). The
    compiled code refuses it at its line; the default fallback runs it in
    eager, on the intermediate laid out as eager lays it out."""
    x = torch.arange(60.0).reshape(1, 4, 5, 3)
    with pytest.raises(
        PurityError,
        match=r"import failed on op aten.as_strided.default at .*test_bad_input.py:\d+: as_strided over a tensor",
    ):
        torch_purity.compile(as_strided_over_channels_last, fallback="error")(x)
    with pytest.warns(EagerFallbackWarning, match="aten.as_strided.default"):
        report = compare(as_strided_over_channels_last, torch_purity.compile(as_strided_over_channels_last), [x])
    assert report.ok, report.problems
