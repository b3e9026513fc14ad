"""Workloads x systems, timed round robin in one run.

    .venv/bin/python benchmarks/compare_systems.py [--quick] [--rounds N] [--readme] [--out benchmarks/results]

Workloads (CPU): a KV-cache one-row write at 1k, 16k and 128k rows x 256, and
at a position given as a tensor (`index_copy_`, 128k rows); an
attention decode step (two KV writes + attention over a 2048 context); SGD
with momentum and Adam written out over 50 parameters of 256x256;
`torch.optim.Adam(foreach=True).step` over the same; BatchNorm in training
mode (64x256x28x28); a Conv2d(32, 32, 3) + BatchNorm2d + ReLU block's
training-mode forward (8x32x32x32) and its training step (forward +
backward); a training step (forward + backward) of an MLP with
BatchNorm1d and an in-place ReLU; a tiny Llama decode step on a static
cache; a decode step whose position is a Python int cycling over 64
positions (one compiled entry serves them all).

Systems: eager PyTorch, torch.compile with inductor, the standard
torch-mlir path (torch.export + torch-mlir's FX importer + IREE's torch input,
written inputs copied back; plain-tensor workloads only) and Purity
(`torch_purity.compile`, or `torch.compile(backend="purity")` where a model
trains). Each system gets its own copy of the inputs and state, made from
the same seed; its first call (tracing and compiling, timed) is checked
against eager's first call (outputs, and every input and piece of state
after it). Then the systems run round robin: each round calls every system
once, in an order shuffled each round, so drift and noise from other load hit
all alike. Per system: the median time per call with its min-max; per
workload: Purity/inductor and Purity/eager as the median of the per-round
ratios, with their p10-p90 and min-max spread, and the worst Purity/inductor
ratio over all workloads.

Also per workload and system: the first call's seconds (Purity: per stage),
the peak growth of the process's resident memory over a few calls (VmHWM
after resetting it, minus the resident size before them), and for Purity
whether any input eager writes in place crossed to IREE as a copy (a
whole-tensor copy where eager writes a row), or IREE's own schedule
(`--compile-to=stream`) copies as many bytes as such an input; the run fails
if one did.

Writes results.csv and results.png to --out; --readme puts the table into
README.md. --quick uses small sizes and few rounds (a smoke run, not figures
to report).
"""

from __future__ import annotations

import argparse
import copy
import csv
import ctypes
import math
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree

import torch_purity

# (Run as a script, benchmarks/ is on sys.path: workloads the other benchmarks define.)
from decode_loop import decode_step as int_position_decode
from measured_reasons import report as targets_report
from torch_purity.driver.compiled import CompiledProgram
from torch_purity.iree.module import scheduled_buffers
from training import MLP

# ----------------------------------------------------------------------------
# Programs
# ----------------------------------------------------------------------------


def kv_cache_write(cache, row, position: int):
    cache[position].copy_(row)
    return row.sum()


def kv_cache_write_at_tensor_position(cache, row, position):
    cache.index_copy_(0, position, row)  # a static cache's update (bounds-checked in Purity)
    return row.sum()


def attention_decode(k_cache, v_cache, q, k, v, position: int):
    k_cache[position].copy_(k)
    v_cache[position].copy_(v)
    scores = (k_cache @ q) * (1.0 / math.sqrt(q.shape[0]))
    return torch.softmax(scores, dim=0) @ v_cache


def sgd_momentum(params, grads, buffers, lr: float, momentum: float):
    for p, g, b in zip(params, grads, buffers):
        b.mul_(momentum).add_(g)
        p.add_(b, alpha=-lr)
    return params[0].sum()


def adam(params, grads, exp_avgs, exp_avg_sqs, step: int):
    beta1, beta2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
    bias1, bias2 = 1 - beta1**step, 1 - beta2**step
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        p.addcdiv_(m, (v / bias2).sqrt().add_(eps), value=-lr / bias1)
    return params[0].sum()


def batch_norm_training(x, running_mean, running_var, weight, bias):
    return F.batch_norm(x, running_mean, running_var, weight, bias, training=True, momentum=0.1)



class ConvBlock(torch.nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))



# ----------------------------------------------------------------------------
# Systems and workloads
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class System:
    name: str
    function: Callable[[Callable], Callable]  # compiles a function of tensors (and captured state)
    model: Callable[[Callable], Callable]  # compiles a model that trains (autograd through it)


def _inductor(fn):
    return torch.compile(fn)


def _purity_dynamo(fn):
    return torch.compile(fn, backend="purity")


@dataclass
class Runner:
    """One system's copy of a workload: `step()` makes one call and returns
    its output; `state()` lists the tensors eager's effects land in (inputs,
    parameters, gradients, buffers)."""

    step: Callable[[], object]
    state: Callable[[], list[torch.Tensor]]


@dataclass
class Workload:
    name: str
    label: str  # the README's words for it
    make: Callable[[System], Runner]
    rounds: int
    plain: bool = False  # tensors and ints only: the torch-mlir path can take it


def _fresh(make_inputs: Callable[[], tuple]) -> tuple:
    torch.manual_seed(0)
    return make_inputs()


def function_workload(name: str, label: str, program: Callable, make_inputs: Callable[[], tuple], rounds: int):
    def make(system: System) -> Runner:
        inputs = _fresh(make_inputs)
        compiled = system.function(program)
        if system.name == "torch-mlir+iree":
            compiled = build_torch_mlir_iree(program, inputs)
        return Runner(lambda: compiled(*inputs), lambda: _tensors_in(inputs))

    return Workload(name, label, make, rounds, plain=True)


def _tensors_in(tree) -> list[torch.Tensor]:
    return [leaf for leaf in pytree.tree_leaves(tree) if isinstance(leaf, torch.Tensor)]


def module_state(module: torch.nn.Module) -> list[torch.Tensor]:
    tensors = [*module.parameters(), *module.buffers()]
    return tensors + [p.grad for p in module.parameters() if p.grad is not None]


def conv_block_workload(batch: int, channels: int, size: int, rounds: int) -> Workload:
    def make(system: System) -> Runner:
        torch.manual_seed(0)
        block = ConvBlock(channels).train()
        x = torch.randn(batch, channels, size, size)
        forward = system.function(lambda x: block(x))

        def step():
            with torch.no_grad():
                return forward(x)

        return Runner(step, lambda: module_state(block))

    shape = f"{batch}×{channels}×{size}×{size}"
    label = f"Conv2d({channels}, {channels}, 3) + BatchNorm2d + ReLU, training-mode forward, {shape}"
    return Workload(f"conv_bn_relu_{batch}x{channels}x{size}x{size}", label, make, rounds)


def _training_runner(system: System, model: torch.nn.Module, x: torch.Tensor) -> Runner:
    """One training step per call: gradients cleared, the compiled model's
    loss (the mean square of its output) and its backward."""
    forward = system.model(model)

    def step():
        for p in model.parameters():
            p.grad = None
        loss = forward(x).square().mean()
        loss.backward()
        return loss.detach()

    return Runner(step, lambda: module_state(model))


def conv_block_training_workload(batch: int, channels: int, size: int, rounds: int) -> Workload:
    def make(system: System) -> Runner:
        torch.manual_seed(0)
        block = ConvBlock(channels).train()
        return _training_runner(system, block, torch.randn(batch, channels, size, size))

    shape = f"{batch}×{channels}×{size}×{size}"
    label = f"Conv2d({channels}, {channels}, 3) + BatchNorm2d + ReLU, training step (forward + backward), {shape}"
    return Workload(f"conv_bn_relu_train_step_{batch}x{channels}x{size}x{size}", label, make, rounds)


def training_step_workload(width: int, batch: int, rounds: int) -> Workload:
    def make(system: System) -> Runner:
        torch.manual_seed(0)
        model = MLP(width).train()
        return _training_runner(system, model, torch.randn(batch, width))

    label = (
        f"training step (forward + backward): MLP {width}→{2 * width} + BatchNorm1d + ReLU(inplace) → 10, batch {batch}"
    )
    return Workload(f"mlp_train_step_{batch}x{width}", label, make, rounds)


def adam_foreach_workload(count: int, side: int, rounds: int) -> Workload:
    def make(system: System) -> Runner:
        torch.manual_seed(0)
        params = [torch.nn.Parameter(torch.randn(side, side)) for _ in range(count)]
        for p in params:
            p.grad = torch.randn(side, side)
        optimizer = torch.optim.Adam(params, lr=1e-3, foreach=True)
        # As users compile an optimizer step: torch.compile(optimizer.step) (torch_purity.compile's own trace
        # fails in PyTorch's fake foreach kernel on the CPU step counters: "Expected scalars to be on CPU").
        step = system.model(optimizer.step)

        def run():
            with torch.no_grad():
                step()
            return params[0].detach()

        def state():
            return [*params, *(t for s in optimizer.state.values() for t in s.values() if isinstance(t, torch.Tensor))]

        return Runner(run, state)

    label = f"`torch.optim.Adam(foreach=True).step`, {count}×{side}×{side}"
    return Workload(f"adam_foreach_{count}x{side}x{side}", label, make, rounds)


def llama_decode_workload(rounds: int) -> Workload:
    def make(system: System) -> Runner:
        from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

        torch.manual_seed(0)
        config = LlamaConfig(
            vocab_size=128,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
        )
        model = LlamaForCausalLM(config).eval()
        cache = StaticCache(config=config, max_cache_len=64)
        token, position = torch.tensor([[5]]), torch.tensor([9])

        def decode(ids, positions):
            return model(ids, cache=cache, cache_position=positions, use_cache=True).logits

        compiled = system.function(decode)

        def step():
            # The cache writes at its own running length (a 0-d tensor it
            # advances each call), not at `position`: set back in place to
            # row 9 before each call (a few µs, alike for every system), so
            # every call does the same work and none runs past the 64 rows.
            for layer in cache.layers:
                layer.cumulative_length.fill_(9)
            with torch.no_grad():
                return compiled(token, position)

        def state():
            return [t for layer in cache.layers for t in (layer.keys, layer.values) if t is not None]

        return Runner(step, state)

    label = "tiny Llama (2 layers, hidden 64) decode step on a static cache of 64"
    return Workload("llama_decode_static_cache", label, make, rounds)


def int_position_decode_workload(rows: int, dim: int, rounds: int) -> Workload:
    def make(system: System) -> Runner:
        torch.manual_seed(0)
        cache, row, query = torch.zeros(rows, dim), torch.randn(dim), torch.randn(dim)
        compiled = system.function(int_position_decode)
        calls = [0]

        def step():
            position = 1 + calls[0] % (rows - 1)  # every system sees the same positions in turn
            calls[0] += 1
            return compiled(cache, row, query, position)

        return Runner(step, lambda: [cache])

    label = f"decode step, position a Python int cycling over {rows - 1} positions, cache {rows}×{dim}"
    return Workload(f"int_position_decode_{rows}x{dim}", label, make, rounds)


def workloads(quick: bool) -> list[Workload]:
    params = 5 if quick else 50
    scale = 50 if quick else 1  # quick: a fiftieth of the rounds
    result = [
        function_workload(
            f"kv_write_{rows // 1024}k",
            f"KV-cache row write, {rows // 1024}k rows",
            kv_cache_write,
            lambda rows=rows: (torch.zeros(rows, 256), torch.randn(256), 7),
            2000 // scale,
        )
        for rows in ((1024, 8192) if quick else (1024, 16384, 131072))
    ]
    rows = 8192 if quick else 131072
    result.append(
        function_workload(
            f"kv_write_tensor_position_{rows // 1024}k",
            f"KV-cache row write at a tensor position (`index_copy_`), {rows // 1024}k rows",
            kv_cache_write_at_tensor_position,
            lambda rows=rows: (torch.zeros(rows, 256), torch.randn(1, 256), torch.tensor([7])),
            2000 // scale,
        )
    )
    result.append(
        function_workload(
            "attention_decode_2048",
            "attention decode, 2048",
            attention_decode,
            lambda: (*(torch.randn(2048, 256) for _ in range(2)), *(torch.randn(256) for _ in range(3)), 100),
            1500 // scale,
        )
    )

    def matrices():
        return [torch.randn(256, 256) for _ in range(params)]

    def zeros():
        return [torch.zeros(256, 256) for _ in range(params)]

    result += [
        function_workload(
            f"sgd_momentum_{params}x256x256",
            f"SGD momentum, {params}×256×256",
            sgd_momentum,
            lambda: (matrices(), matrices(), matrices(), 0.01, 0.9),
            500 // scale,
        ),
        function_workload(
            f"adam_{params}x256x256",
            f"Adam (written out), {params}×256×256",
            adam,
            lambda: (matrices(), matrices(), zeros(), zeros(), 3),
            500 // scale,
        ),
        adam_foreach_workload(params, 256, 500 // scale),
    ]
    batch = 4 if quick else 64
    result.append(
        function_workload(
            f"batch_norm_{batch}x256x28x28",
            f"BatchNorm training, {batch}×256×28×28",
            batch_norm_training,
            lambda: (
                torch.randn(batch, 256, 28, 28),
                torch.zeros(256),
                torch.ones(256),
                torch.randn(256),
                torch.randn(256),
            ),
            150 if not quick else 5,
        )
    )
    result += [
        conv_block_workload(2 if quick else 8, 32, 32, 500 // scale),
        conv_block_training_workload(2 if quick else 8, 32, 32, 200 // scale),
        training_step_workload(64 if quick else 256, 64, 1000 // scale),
        llama_decode_workload(1000 // scale),
        int_position_decode_workload(64, 64, 1500 // scale),
    ]
    return result


class _ExportedModule(torch.nn.Module):
    def __init__(self, program, constants: dict[int, object], structure):
        super().__init__()
        self.program, self.constants, self.structure = program, constants, structure

    def forward(self, *tensors):
        leaves = list(tensors)
        for index, value in sorted(self.constants.items()):
            leaves.insert(index, value)
        return self.program(*pytree.tree_unflatten(leaves, self.structure))


def build_torch_mlir_iree(program, inputs):
    """The standard path: torch.export functionalizes, torch-mlir imports
    (written user inputs as mutable arguments with an edge overwrite), IREE
    compiles from its torch input, and the runtime copies inputs in and
    written inputs back."""
    import iree.compiler as iree_compiler
    import iree.runtime as iree_runtime
    from torch_mlir.fx import export_and_import

    from torch_purity.iree.targets import get_target

    leaves, structure = pytree.tree_flatten(list(inputs))
    constants = {i: v for i, v in enumerate(leaves) if not isinstance(v, torch.Tensor)}
    tensor_positions = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]
    module = _ExportedModule(program, constants, structure)
    example = tuple(leaves[i].clone() for i in tensor_positions)
    mlir_module = export_and_import(
        module, *example, output_type="torch", func_name="main", experimental_support_mutation=True
    )
    text = str(mlir_module)
    vmfb = iree_compiler.compile_str(text, input_type="torch", extra_args=get_target("cpu").compile_flags)
    config = iree_runtime.Config("local-task")
    context = iree_runtime.SystemContext(config=config)
    context.add_vm_module(iree_runtime.VmModule.copy_buffer(config.vm_instance, vmfb))
    main = context.modules.module["main"]
    signature = [line for line in text.splitlines() if "func.func @main" in line][0]
    written = [i for i in range(len(tensor_positions)) if f"%arg{i}: !torch.tensor<" in signature]

    def run(*args):
        flat = pytree.tree_leaves(list(args))
        tensors = [flat[i] for i in tensor_positions]
        device_arrays = [iree_runtime.asdevicearray(config.device, t.detach().numpy()) for t in tensors]
        results = main(*device_arrays)
        with torch.no_grad():
            for index in written:
                tensors[index].copy_(torch.from_numpy(np.asarray(device_arrays[index].to_host())))
        results = results if isinstance(results, (list, tuple)) else [results]
        outputs = [torch.from_numpy(np.array(r.to_host())) for r in results]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return run


SYSTEMS = {
    "eager": System("eager", lambda fn: fn, lambda fn: fn),
    "inductor": System("inductor", _inductor, _inductor),
    "torch-mlir+iree": System("torch-mlir+iree", lambda fn: fn, lambda fn: fn),
    "purity": System("purity", torch_purity.compile, _purity_dynamo),
}


# ----------------------------------------------------------------------------
# Measuring
# ----------------------------------------------------------------------------


@contextmanager
def recording_purity_programs(found: list[CompiledProgram]):
    """Collects every CompiledProgram made inside (both entry points make one)."""
    original = CompiledProgram.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        found.append(self)

    with mock.patch.object(CompiledProgram, "__init__", recording):
        yield


def written_inputs_copied(programs: list[CompiledProgram]) -> list[str]:
    """Inputs eager writes in place that crossed to IREE as a copy on the
    last call (each such call copies the whole tensor in and back). 0-d
    inputs are left out: their 8 bytes come back in a buffer of their own
    (IREE-WORKAROUND(scalar-tie-transfer))."""
    problems = []
    for program in programs:
        for entry in program.cache.values():
            for executable, part in ((entry, "forward"), (getattr(entry, "backward", None), "backward")):
                if executable is None or getattr(executable, "convention", None) is None:
                    continue  # (a split program's entry: its compiled steps are programs of their own here)
                written = {i for _, i in executable.convention.written_inputs}
                if executable.hand_over == "host copies" and written:
                    problems.append(f"{part}: every input through host copies")
                    continue
                names = getattr(executable, "input_names", None) or getattr(entry, "input_names", [])
                shapes = dict(executable.convention.result_storage)
                for result, index in executable.convention.written_inputs:
                    if index in executable.convention.tied_inputs and index in executable.imports:
                        continue
                    if shapes.get(result) == ():
                        continue  # IREE-WORKAROUND(scalar-tie-transfer): a 0-d value comes back on its own
                    name = names[index] if index < len(names) else f"input {index}"
                    problems.append(f"{part}: {name} copied")
                problems += _whole_copies_inside_iree(executable, part, names)
    return problems


def _whole_copies_inside_iree(executable, part: str, names: list[str]) -> list[str]:
    """Copies in IREE's own schedule as large as an input written in place
    (IREE copied a returned KV cache whole on every call before
    purity-elide-input-view-results)."""
    lowered = getattr(executable, "lowered", None)
    in_place = [i for _, i in executable.convention.written_inputs if i in executable.convention.tied_inputs]
    signatures = [line for line in lowered.iree_input.splitlines() if "func.func" in line] if lowered else []
    if len(signatures) != 1 or not in_place:
        return []  # (a training module's two functions: not checked here)
    types = re.findall(r"%arg(\d+): tensor<([\dx]+)x(\w+)>", signatures[0])
    widths = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i8": 1, "i1": 1}
    sizes = {int(i): math.prod(int(d) for d in dims.split("x")) * widths.get(t, 1) for i, dims, t in types}
    smallest = min((sizes[i] for i in in_place if i in sizes), default=None)
    if smallest is None:
        return []
    scheduled = scheduled_buffers(lowered.iree_input, "cpu")
    copied = [size for kind, size in scheduled if kind == "copy" and size >= smallest]
    written = ", ".join(names[i] if i < len(names) else f"input {i}" for i in in_place)
    return [f"{part}: IREE copies {size} bytes (written in place: {written})" for size in copied]


def purity_stage_seconds(programs: list[CompiledProgram]) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for program in programs:
        for entry in program.cache.values():
            for stage, value in getattr(entry, "seconds", {}).items():
                if stage != "segments":  # a split program's steps: their own stages count them
                    seconds[stage] = seconds.get(stage, 0.0) + value
    return seconds


def resident_bytes() -> tuple[int, int]:
    """(current, peak since the last reset) resident set size of this process."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def peak_memory_growth(step: Callable[[], object], calls: int = 3) -> int | None:
    """How far the resident set grew above its size before `calls` calls.
    Memory freed earlier is first handed back to the system (glibc's
    malloc_trim), so the calls' allocations show in the peak rather than
    reusing pages already resident."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # resets VmHWM to the current resident size
    except OSError:
        return None
    before, _ = resident_bytes()
    for _ in range(calls):
        step()
    _, peak = resident_bytes()
    return max(0, peak - before)


def _max_difference(ours: list[torch.Tensor], theirs: list[torch.Tensor], what: str) -> list[str]:
    problems = []
    if len(ours) != len(theirs):
        return [f"{what}: {len(ours)} tensors, eager {len(theirs)}"]
    for index, (a, b) in enumerate(zip(ours, theirs)):
        a = torch.as_tensor(a).detach()
        b = torch.as_tensor(b).detach()
        try:
            torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-3, equal_nan=True)
        except AssertionError as error:
            problems.append(f"{what} {index}: {str(error).splitlines()[0]}")
    return problems


@dataclass
class Measured:
    workload: str
    system: str
    samples: list[float] = field(default_factory=list)
    first_call_s: float | None = None
    stages: dict[str, float] = field(default_factory=dict)
    peak_bytes: int | None = None
    copies: list[str] = field(default_factory=list)
    drivers: list[str] = field(default_factory=list)  # Purity: IREE's runtime driver of each compiled entry
    error: str | None = None

    @property
    def median_us(self) -> float | None:
        return statistics.median(self.samples) * 1e6 if self.samples else None


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * (len(ordered) - 1) + 0.5))]


@dataclass
class Ratio:
    median: float
    p10: float
    p90: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.median:.2f}x [{self.p10:.2f}-{self.p90:.2f}]"

    @staticmethod
    def of(ours: list[float], theirs: list[float]) -> Ratio | None:
        if not ours or not theirs:
            return None
        ratios = [a / b for a, b in zip(ours, theirs)]
        return Ratio(
            statistics.median(ratios), percentile(ratios, 0.1), percentile(ratios, 0.9), min(ratios), max(ratios)
        )


def _flatten_output(output) -> list[torch.Tensor]:
    return _tensors_in(output.logits if hasattr(output, "logits") else output)


def run_workload(workload: Workload, systems: list[str], rounds: int) -> list[Measured]:
    measured: dict[str, Measured] = {}
    runners: dict[str, Runner] = {}
    recorded: dict[str, list[CompiledProgram]] = {}
    reference: tuple[list[torch.Tensor], list[torch.Tensor]] | None = None
    for name in systems:
        result = measured[name] = Measured(workload.name, name)
        if name == "torch-mlir+iree" and not workload.plain:
            result.error = "not run: takes plain tensor programs only"
            continue
        programs: list[CompiledProgram] = []
        try:
            torch._dynamo.reset()
            with recording_purity_programs(programs):
                runner = workload.make(SYSTEMS[name])
                start = time.perf_counter()
                output = runner.step()
                result.first_call_s = time.perf_counter() - start
            outputs, state = _flatten_output(output), [t.detach().clone() for t in runner.state()]
            if reference is None:
                reference = (copy.deepcopy(outputs), state)  # eager comes first
            else:
                problems = _max_difference(outputs, reference[0], "output")
                problems += _max_difference(state, reference[1], "state")
                if problems:
                    result.error = "differs from eager: " + "; ".join(problems)[:300]
                    continue
            runner.step()  # a second call: entries settle (ties join on the second call)
            if programs:
                result.stages = purity_stage_seconds(programs)
                recorded[name] = programs
            runners[name] = runner
        except Exception as error:  # a system failing a workload is a result, not a crash
            result.error = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
    # A fresh random order each round (seeded: a rerun times the same
    # sequence). A rotated order keeps each system's predecessor fixed, and a
    # predecessor leaves caches and allocator state behind: two copies of one
    # Purity program timed in a rotation differed by 13-15%, in shuffled
    # rounds by 1%.
    shuffle = random.Random(0).shuffle
    order = list(runners)
    for _ in range(rounds):
        shuffle(order)
        for name in order:
            step = runners[name].step
            start = time.perf_counter()
            step()
            measured[name].samples.append(time.perf_counter() - start)
    # After the timed calls: how the last of them handed the inputs over. (A
    # program Dynamo compiles anew on the second call, as for a StaticCache
    # that sets itself up on the first, is on its first call there.)
    for name, programs in recorded.items():
        measured[name].copies = written_inputs_copied(programs)
        measured[name].drivers = sorted(
            {e.module.driver for p in programs for e in p.cache.values() if getattr(e, "module", None) is not None}
        )
    for name, runner in runners.items():
        measured[name].peak_bytes = peak_memory_growth(runner.step)
    return [measured[name] for name in systems]


# ----------------------------------------------------------------------------
# Reporting
# ----------------------------------------------------------------------------


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:.1f}"


def summary_rows(results: list[Measured], labels: dict[str, str]) -> tuple[list[list[str]], Ratio | None, str | None]:
    by_key = {(r.workload, r.system): r for r in results}
    rows, worst, worst_name = [], None, None
    for name in dict.fromkeys(r.workload for r in results):

        def cell(system: str, name: str = name) -> str:
            r = by_key.get((name, system))
            if r is None or r.median_us is None:
                return "-" if r is None or not r.error else "fails" if "not run" not in r.error else "-"
            return f"{r.median_us:.1f}" if r.median_us < 1000 else f"{r.median_us:.0f}"

        purity, inductor, eager = (by_key.get((name, s)) for s in ("purity", "inductor", "eager"))
        vs_inductor = Ratio.of(purity.samples, inductor.samples) if purity and inductor else None
        vs_eager = Ratio.of(purity.samples, eager.samples) if purity and eager else None
        if vs_inductor and (worst is None or vs_inductor.median > worst.median):
            worst, worst_name = vs_inductor, name
        compile_inductor = f"{inductor.first_call_s:.1f}" if inductor and inductor.first_call_s else "-"
        compile_purity = f"{purity.first_call_s:.1f}" if purity and purity.first_call_s else "-"
        memory = " / ".join(
            _mib(by_key[(name, s)].peak_bytes) if (name, s) in by_key else "-" for s in ("eager", "inductor", "purity")
        )
        rows.append(
            [
                labels[name],
                cell("eager"),
                cell("inductor"),
                cell("torch-mlir+iree"),
                cell("purity"),
                str(vs_eager) if vs_eager else "-",
                str(vs_inductor) if vs_inductor else "-",
                f"{compile_inductor} / {compile_purity}",
                memory,
            ]
        )
    return rows, worst, worst_name


def purity_ratios(results: list[Measured]) -> dict[str, dict[str, tuple[float, float, str]]]:
    """Per workload, Purity against inductor and eager: (median, p10, printed ratio) of the per-round ratios."""
    by_key = {(r.workload, r.system): r for r in results}
    found: dict[str, dict[str, tuple[float, float, str]]] = {}
    for name in dict.fromkeys(r.workload for r in results):
        purity = by_key.get((name, "purity"))
        for target in ("inductor", "eager"):
            other = by_key.get((name, target))
            ratio = Ratio.of(purity.samples, other.samples) if purity and other else None
            if ratio:
                found.setdefault(name, {})[target] = (ratio.median, ratio.p10, str(ratio))
    return found


TABLE_HEAD = [
    "workload",
    "eager µs",
    "inductor µs",
    "torch-mlir+IREE µs",
    "Purity µs",
    "Purity vs eager",
    "Purity vs inductor",
    "first call s (inductor / Purity)",
    "peak MiB (eager / inductor / Purity)",
]
README = Path(__file__).resolve().parent.parent / "README.md"
README_START, README_END = "<!-- compare-systems -->", "<!-- /compare-systems -->"


def markdown_table(rows: list[list[str]], header: str) -> str:
    lines = [header, "", "| " + " | ".join(TABLE_HEAD) + " |", "|" + "---|" * len(TABLE_HEAD)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def update_readme(text: str) -> None:
    readme = README.read_text()
    head, found, rest = readme.partition(README_START)
    if not found:
        raise SystemExit(f"README.md has no {README_START} marker")
    _, _, tail = rest.partition(README_END)
    README.write_text(f"{head}{README_START}\n{text}{README_END}{tail}")


def write_csv(results: list[Measured], out: Path) -> None:
    by_key = {(r.workload, r.system): r for r in results}
    with open(out / "results.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "workload", "system", "rounds", "median_us", "min_us", "max_us",
                "vs_eager", "vs_eager_p10", "vs_eager_p90",
                "vs_inductor", "vs_inductor_p10", "vs_inductor_p90", "vs_inductor_min", "vs_inductor_max",
                "first_call_s", "stages_s", "peak_growth_bytes", "written_inputs_copied", "error",
            ]
        )  # fmt: skip
        for r in results:
            eager, inductor = by_key.get((r.workload, "eager")), by_key.get((r.workload, "inductor"))
            vs_eager = Ratio.of(r.samples, eager.samples) if eager else None
            vs_inductor = Ratio.of(r.samples, inductor.samples) if inductor else None
            writer.writerow(
                [
                    r.workload,
                    r.system,
                    len(r.samples),
                    r.median_us,
                    min(r.samples) * 1e6 if r.samples else None,
                    max(r.samples) * 1e6 if r.samples else None,
                    *((vs_eager.median, vs_eager.p10, vs_eager.p90) if vs_eager else (None,) * 3),
                    *(
                        (vs_inductor.median, vs_inductor.p10, vs_inductor.p90, vs_inductor.low, vs_inductor.high)
                        if vs_inductor
                        else (None,) * 5
                    ),
                    r.first_call_s,
                    " ".join(f"{k}={v:.3f}" for k, v in r.stages.items()),
                    r.peak_bytes,
                    "; ".join(r.copies),
                    r.error or "",
                ]
            )


def write_plot(results: list[Measured], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_key = {(r.workload, r.system): r for r in results}
    names = list(dict.fromkeys(r.workload for r in results))
    systems = [s for s in SYSTEMS if any(r.system == s and r.samples for r in results)]
    figure, axis = plt.subplots(figsize=(14, 5))
    width = 0.8 / max(1, len(systems))
    for index, system in enumerate(systems):
        medians, low, high = [], [], []
        for n in names:
            r = by_key.get((n, system))
            median = r.median_us if r and r.samples else float("nan")
            medians.append(median)
            low.append(median - min(r.samples) * 1e6 if r and r.samples else 0)
            high.append(max(r.samples) * 1e6 - median if r and r.samples else 0)
        axis.bar(
            [i + index * width for i in range(len(names))], medians, width, yerr=[low, high], capsize=2, label=system
        )
    axis.set_yscale("log")
    axis.set_ylabel("median µs per call (log), min-max bars")
    axis.set_xticks([i + width * (len(systems) - 1) / 2 for i in range(len(names))])
    axis.set_xticklabels(names, rotation=25, ha="right", fontsize=8)
    axis.legend()
    axis.set_title("Purity vs eager, inductor and torch-mlir+IREE (CPU, round robin)")
    figure.tight_layout()
    figure.savefig(out / "results.png", dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds (a smoke run)")
    parser.add_argument("--rounds", type=int, help="rounds per workload (default: each workload's own)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--workloads", nargs="*", help="names to run (default: all)")
    parser.add_argument("--systems", nargs="*", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--readme", action="store_true", help="put the table into README.md")
    args = parser.parse_args()
    systems = ["eager", *(s for s in args.systems if s != "eager")]  # eager first: the reference
    chosen = [w for w in workloads(args.quick) if not args.workloads or w.name in args.workloads]
    threads = torch.get_num_threads()
    forced = os.environ.get("PURITY_IREE_CPU_DRIVER")
    driver = f"{forced} (forced)" if forced else "chosen per program (iree/cpu_driver.py)"
    print(f"torch {torch.__version__}, {threads} threads, {os.cpu_count()} cores, IREE CPU driver: {driver}")
    results: list[Measured] = []
    for workload in chosen:
        rounds = args.rounds or workload.rounds
        measured = run_workload(workload, systems, rounds)
        results += measured
        print(f"\n{workload.name} ({rounds} rounds round robin)")
        eager, inductor = measured[0], next((m for m in measured if m.system == "inductor"), None)
        for m in measured:
            if m.error:
                print(f"  {m.system:16s} {m.error}")
                continue
            spread = f"[{min(m.samples) * 1e6:.1f}-{max(m.samples) * 1e6:.1f}]"
            line = f"  {m.system:16s} median {m.median_us:10.1f} µs {spread}"
            for other in (eager, inductor):
                ratio = Ratio.of(m.samples, other.samples) if other and other is not m and other.samples else None
                line += f"  vs {other.system} {ratio}" if ratio else ""
            first = f"{m.first_call_s:.2f} s" if m.first_call_s is not None else "-"
            line += f"  first call {first}  peak +{_mib(m.peak_bytes)} MiB"
            print(line, flush=True)
            if m.stages:
                print("  " + " " * 16 + " stages: " + ", ".join(f"{k} {v:.2f}" for k, v in m.stages.items()))
            if m.drivers:
                print("  " + " " * 16 + " IREE driver: " + ", ".join(m.drivers))
            if m.copies:
                print("  " + " " * 16 + " WHOLE-TENSOR COPIES of written inputs: " + "; ".join(m.copies))
    labels = {w.name: w.label for w in chosen}
    rows, worst, worst_name = summary_rows(results, labels)
    header = (
        f"`benchmarks/compare_systems.py` ({time.strftime('%Y-%m-%d')}, torch {torch.__version__}, "
        f"{threads} threads, {os.cpu_count()} cores; medians per call, Purity's ratios as the median of "
        "per-round ratios with their p10-p90; peak = resident memory growth over 3 calls)"
    )
    table = markdown_table(rows, header)
    if worst is not None:
        table += f"\nWorst Purity/inductor: {worst_name}, {worst} (min-max {worst.low:.2f}-{worst.high:.2f}).\n"
    table += "\n" + targets_report(purity_ratios(results))
    print("\n" + table)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(results, out)
    write_plot(results, out)
    (out / "compare_systems_table.md").write_text(table)
    print(f"wrote {out}/results.csv, results.png and compare_systems_table.md")
    if args.readme:
        update_readme(table)
    copies = [f"{r.workload}: {c}" for r in results for c in r.copies]
    failures = [f"{r.workload} {r.system}: {r.error}" for r in results if r.error and "not run" not in r.error]
    if copies:
        print("FAIL: whole-tensor copies where eager writes in place:\n  " + "\n  ".join(copies))
    if failures:
        print("FAIL: systems that did not run or differ from eager:\n  " + "\n  ".join(failures))
    return 1 if copies or any(r.system == "purity" for r in results if r.error and "not run" not in r.error) else 0


if __name__ == "__main__":
    sys.exit(main())
