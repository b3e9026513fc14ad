"""Vendor kernels (driver/vendor_kernels.py): on the CPU, a large float32
convolution runs PyTorch's kernel between compiled segments, by choice and
without a warning; everything else stays compiled. Each program is compared
with eager: outputs, and the module state it writes."""

import copy
import warnings

import pytest
import torch

import torch_purity
from torch_purity import PurityError
from torch_purity.checking import compare
from torch_purity.driver.compiled import SegmentedEntry
from torch_purity.driver.vendor_kernels import MAX_WRITTEN_BYTES, MIN_FLOPS
from torch_purity.dynamo_backend import purity_backend


def _block_and_input(batch: int = 4, channels: int = 16, size: int = 32):
    """A Conv2d + BatchNorm2d (training mode: it writes its running
    statistics) + ReLU block and its input."""
    torch.manual_seed(0)
    block = torch.nn.Sequential(
        torch.nn.Conv2d(channels, channels, 3, padding=1), torch.nn.BatchNorm2d(channels), torch.nn.ReLU()
    )
    return block.train(), torch.randn(batch, channels, size, size)


def _flops(batch: int, channels: int, size: int) -> int:
    return 2 * batch * channels * size * size * channels * 9


def _vendor_ops(compiled, *args) -> list[str]:
    entry, _ = compiled.entry_for(*args)
    if not isinstance(entry, SegmentedEntry):
        return []
    assert all(op.vendor for op in entry.eager_ops), "only vendor kernels run in eager here"
    return [op.op for op in entry.eager_ops]


def test_large_convolution_runs_torch_kernel_without_warning_and_matches_eager():
    assert _flops(4, 16, 32) >= MIN_FLOPS
    block, x = _block_and_input()
    eager_block = copy.deepcopy(block)
    compiled = torch_purity.compile(block)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")  # no EagerFallbackWarning: a choice, not a fallback
        for _ in range(2):  # the second call checks the running statistics written by the first
            want, got = eager_block(x), compiled(x)
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
        assert _vendor_ops(compiled, x) == ["aten.convolution.default"]
    for name, buffer in eager_block.named_buffers():
        torch.testing.assert_close(dict(block.named_buffers())[name], buffer, msg=name)


def test_vendor_kernels_false_compiles_the_convolution():
    block, x = _block_and_input()
    compiled = torch_purity.compile(block, vendor_kernels=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), copy.deepcopy(block)(x), atol=1e-5, rtol=1e-5)
        assert _vendor_ops(compiled, x) == []


def test_small_convolution_stays_compiled():
    """Below MIN_FLOPS a segment boundary costs more than oneDNN saves."""
    assert _flops(1, 4, 8) < MIN_FLOPS
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(4, 4, 3, padding=1)
    x = torch.randn(1, 4, 8, 8)
    compiled = torch_purity.compile(lambda x: torch.relu(conv(x)))
    with torch.no_grad():
        report = compare(lambda x: torch.relu(conv(x)), compiled, [x])
        assert report.ok, report.problems
        assert _vendor_ops(compiled, x) == []


def test_program_writing_a_large_input_keeps_the_convolution_compiled():
    """A split program copies the inputs it writes on every call (to restore
    them on failure): never a whole cache per call."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(16, 16, 3, padding=1)

    def conv_and_cache_write(x, cache):
        y = conv(x)
        cache[0].copy_(y.flatten()[: cache.shape[1]])
        return y

    x, cache = torch.randn(4, 16, 32, 32), torch.zeros(64, 1024)
    assert cache.numel() * 4 > MAX_WRITTEN_BYTES
    compiled = torch_purity.compile(conv_and_cache_write)
    with torch.no_grad():
        report = compare(conv_and_cache_write, compiled, [x, cache])
        assert report.ok, report.problems
        assert _vendor_ops(compiled, x, cache) == []


def test_training_entry_compiles_the_convolution():
    block, x = _block_and_input()
    compiled = torch_purity.compile(block)
    compiled(x).sum().backward()
    entry, _ = compiled.entry_for(x)
    assert entry.backward is not None and not isinstance(entry, SegmentedEntry)


def test_dynamic_sizes_compile_the_convolution():
    block, x = _block_and_input()
    compiled = torch_purity.compile(block, dynamic=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), copy.deepcopy(block)(x), atol=1e-5, rtol=1e-5)
        entry, _ = compiled.entry_for(x)
        assert entry.runtime_ints and not isinstance(entry, SegmentedEntry)


def test_saving_a_program_with_a_vendor_kernel_names_the_option(tmp_path):
    block, x = _block_and_input()
    compiled = torch_purity.compile(block)
    with torch.no_grad():
        compiled(x)
    with pytest.raises(PurityError, match=r"vendor_kernels=False"):
        compiled.save(tmp_path / "saved")
    saveable = torch_purity.compile(block, vendor_kernels=False)
    with torch.no_grad():
        saveable(x)
    assert saveable.save(tmp_path / "saved").exists()


@pytest.mark.parametrize("options, vendor_ops", [({}, ["aten.convolution.default"]), ({"vendor_kernels": False}, [])])
def test_torch_compile_option(options, vendor_ops):
    block, x = _block_and_input()
    eager_block = copy.deepcopy(block)
    graph_module = torch.fx.symbolic_trace(block)
    run = purity_backend(graph_module, [x], options=options)
    with torch.no_grad():
        torch.testing.assert_close(run(x), eager_block(x), atol=1e-5, rtol=1e-5)
        assert _vendor_ops(run.purity_compiled, x) == vendor_ops


def test_torch_compile_option_that_is_not_a_bool_is_refused():
    block, x = _block_and_input()
    with pytest.raises(PurityError, match=r"vendor_kernels='no': expected True or False"):
        purity_backend(torch.fx.symbolic_trace(block), [x], options={"vendor_kernels": "no"})
