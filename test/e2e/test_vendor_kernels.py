"""Vendor kernels (driver/vendor_kernels.py): on the CPU, a large float32
convolution (and, in training, a large matrix product) runs PyTorch's kernel
between compiled segments, by choice and without a warning; everything else
stays compiled. Each program is compared with eager: outputs, and the module
state it writes; in training, gradients too, step after step."""

import copy
import warnings

import pytest
import torch
from training_checks import assert_close, assert_same_state

import torch_purity
from torch_purity import PurityError
from torch_purity.checking import compare
from torch_purity.driver import compiled as compiled_module
from torch_purity.driver.compiled import SegmentedEntry
from torch_purity.driver.segments import written_placeholders
from torch_purity.driver.vendor_kernels import MAX_WRITTEN_BYTES, MIN_FLOPS, MIN_MATMUL_FLOPS
from torch_purity.dynamo_backend import purity_backend
from torch_purity.importer import new_context, trace_to_aten
from torch_purity.importer.fx_import import DIFFERENTIATED_AS_OPS


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


def _train_alike(model: torch.nn.Module, compiled, x: torch.Tensor, steps: int = 3, lr: float = 0.1) -> None:
    """`steps` training steps (a loss, its backward, an SGD update) of the
    compiled model and of an eager copy started alike: the same losses,
    gradients, parameters and buffers after each."""
    twin = copy.deepcopy(model)
    for step in range(steps):
        for module in (model, twin):
            module.zero_grad(set_to_none=True)
        got = compiled(x).square().mean()
        got.backward()
        want = twin(x).square().mean()
        want.backward()
        assert_close(got.detach(), want.detach(), f"step {step}: loss")
        assert_same_state(model, twin, step, gradients_by_largest=True)
        with torch.no_grad():
            for module in (model, twin):
                for parameter in module.parameters():
                    parameter -= lr * parameter.grad


def _training_vendor_ops(compiled, x) -> list[str]:
    """The vendor ops of the training entry (grad mode on, parameters requiring grad)."""
    entry, _ = compiled.entry_for(x)
    if not isinstance(entry, SegmentedEntry):
        assert entry.backward is not None, "not a training entry"
        return []
    assert all(op.vendor for op in entry.eager_ops)
    # Each compiled segment trains on its own: its entry has a compiled backward.
    for step in entry.segments.compiled_steps:
        assert any(e.backward is not None for e in step.program.cache.values()), "a segment without a backward"
    return [op.op for op in entry.eager_ops]


def test_training_runs_the_convolution_in_onednn_with_autograd():
    """A training entry splits its forward at the convolution: the compiled
    segments train on their own, autograd runs the convolution's backward
    (oneDNN) between them; gradients and running statistics as eager's."""
    block, x = _block_and_input()
    compiled = torch_purity.compile(block)
    _train_alike(block, compiled, x)
    assert _training_vendor_ops(compiled, x) == ["aten.convolution.default"]


def test_a_segments_batch_norm_saves_no_float64_copy_for_its_backward():
    """The forward a training split is cut from keeps var_mean as an op
    (fx_import.DIFFERENTIATED_AS_OPS), so the BatchNorm segment's own joint
    trace differentiates it with PyTorch's float32 formula: the segment
    saves only float32 tensors for its backward. (Decomposed into its
    float64 sums first, autograd went through them: the segment saved a
    float64 copy of its whole input and its backward ran over float64
    copies.) Gradients and running statistics as eager's, step after step."""
    block, x = _block_and_input()
    compiled = torch_purity.compile(block)
    _train_alike(block, compiled, x)
    entry, _ = compiled.entry_for(x)
    saved = [
        program.convention.result_dtypes[result]
        for step in entry.segments.compiled_steps
        for program in step.program.cache.values()
        for result in program.convention.saved_results.values()
    ]
    assert saved and set(saved) == {torch.float32}


def test_the_split_forward_keeps_batch_norm_and_knows_its_running_statistics_written():
    """The forward a training split is cut from keeps native_batch_norm (its
    backward is then native_batch_norm_backward's, as eager's); the
    running statistics it writes, which its schema does not mark, count as
    written (the vendor kernels' written-bytes limit, the inputs a split
    restores when a later step fails)."""
    batch_norm = torch.nn.BatchNorm2d(4).train()
    x = torch.randn(2, 4, 3, 3, requires_grad=True)
    graph, inputs = trace_to_aten(batch_norm, [x], new_context(), kept=DIFFERENTIATED_AS_OPS)
    assert any(node.target is torch.ops.aten.native_batch_norm.default for node in graph.graph.nodes)
    placeholders = [node for node in graph.graph.nodes if node.op == "placeholder"]
    written = {inputs[i].name for i in written_placeholders(graph, placeholders)}
    assert {"buffer:running_mean", "buffer:running_var"} <= written


class _BasicBlock(torch.nn.Module):
    """ResNet's basic block: two convolutions with BatchNorm, an in-place
    ReLU, the shortcut added in place (`out += identity`), a 1x1
    convolution on the shortcut where the shape changes."""

    def __init__(self, inputs: int, outputs: int, stride: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(outputs)
        self.conv2 = torch.nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(outputs)
        self.relu = torch.nn.ReLU(inplace=True)
        self.shortcut = None
        if stride != 1 or inputs != outputs:
            self.shortcut = torch.nn.Sequential(
                torch.nn.Conv2d(inputs, outputs, 1, stride, bias=False), torch.nn.BatchNorm2d(outputs)
            )

    def forward(self, x):
        identity = x if self.shortcut is None else self.shortcut(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


@pytest.mark.parametrize("through", ["compile", "torch.compile"])
def test_a_small_resnet_trains_as_eager_with_its_convolutions_in_onednn(through: str):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, 1, 1, bias=False),
        torch.nn.BatchNorm2d(32),
        torch.nn.ReLU(inplace=True),
        _BasicBlock(32, 32, 1),
        _BasicBlock(32, 64, 2),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(64, 10),
    ).train()
    x = torch.randn(8, 3, 32, 32)
    # (A step of 0.1 makes this model's next gradients chaotic: eager itself,
    # its parameters perturbed by 1e-7, differed by 4% at the second step.)
    if through == "compile":
        compiled = torch_purity.compile(model)
        _train_alike(model, compiled, x, lr=0.01)
        assert _training_vendor_ops(compiled, x) == ["aten.convolution.default"] * 6
    else:
        _train_alike(model, torch.compile(model, backend="purity"), x, lr=0.01)


def _mlp(width: int) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(width, 2 * width, bias=False),
        torch.nn.BatchNorm1d(2 * width),
        torch.nn.ReLU(inplace=True),
        torch.nn.Linear(2 * width, 10),
    ).train()


def test_training_runs_a_large_matrix_product_in_mkl_with_autograd():
    model, x = _mlp(512), torch.randn(64, 512)
    assert 2 * 64 * 512 * 1024 >= MIN_MATMUL_FLOPS
    compiled = torch_purity.compile(model)
    _train_alike(model, compiled, x)
    assert _training_vendor_ops(compiled, x) == ["aten.mm.default"]


def test_training_with_the_product_last():
    """A product with a bias (`addmm`) as the program's last op: the compiled
    segment before it (which writes BatchNorm's running statistics) and the
    product's output, as eager's."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.BatchNorm1d(512), torch.nn.ReLU(), torch.nn.Linear(512, 1024)).train()
    x = torch.randn(64, 512)
    compiled = torch_purity.compile(model)
    _train_alike(model, compiled, x)
    assert _training_vendor_ops(compiled, x) == ["aten.addmm.default"]


def test_training_compiles_a_small_matrix_product():
    """Below MIN_MATMUL_FLOPS the split costs more than MKL saves (the MLP
    of benchmarks/compare_systems.py, 16.8 MFLOP)."""
    model, x = _mlp(256), torch.randn(64, 256)
    assert 2 * 64 * 256 * 512 < MIN_MATMUL_FLOPS
    compiled = torch_purity.compile(model)
    _train_alike(model, compiled, x, steps=2)
    assert _training_vendor_ops(compiled, x) == []


def test_training_compiles_whole_where_a_segment_writes_the_products_result(monkeypatch):
    """The product's result requires grad and the next segment writes it in
    place (`relu_`), which a training program refuses: the entry is then
    compiled whole, with no vendor kernel, and still trains as eager."""
    splits: list[str] = []
    split = compiled_module._segmented_entry

    def recording(*args, **kwargs):
        try:
            return split(*args, **kwargs)
        except PurityError as error:
            splits.append(str(error))
            raise

    monkeypatch.setattr(compiled_module, "_segmented_entry", recording)
    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(1024, 512) * 0.05)

    class InPlaceAfterProduct(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = weight

        def forward(self, x):
            return torch.nn.functional.linear(x, self.weight).relu_().sum(1)

    model, x = InPlaceAfterProduct(), torch.randn(64, 512)
    compiled = torch_purity.compile(model)
    _train_alike(model, compiled, x, steps=2)
    assert _training_vendor_ops(compiled, x) == []
    assert splits, "the split at the product was not tried"


def test_training_with_vendor_kernels_false_compiles_the_convolution():
    block, x = _block_and_input()
    compiled = torch_purity.compile(block, vendor_kernels=False)
    _train_alike(block, compiled, x, steps=2)
    assert _training_vendor_ops(compiled, x) == []


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
