"""Captured state: tensors a compiled function reaches without taking them as
arguments (closed-over modules, globals, tuples, dicts, objects), Python
attributes it assigns, and objects it returns, each call against an eager twin."""

from __future__ import annotations

import copy
import operator
from collections import namedtuple

import pytest
import torch
from object_walk import fake_tensors_in
from torch._subclasses.fake_tensor import FakeTensor

import torch_purity
from torch_purity.errors import PurityError


def test_closed_over_module_trains_batchnorm_statistics_like_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.BatchNorm1d(5), torch.nn.ReLU())
    twin = copy.deepcopy(model)
    compiled = torch_purity.compile(lambda x: model(x) * 2)
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(8, 6)
            torch.testing.assert_close(compiled(x), twin(x) * 2)
            torch.testing.assert_close(model[1].running_mean, twin[1].running_mean)
            torch.testing.assert_close(model[1].running_var, twin[1].running_var)
            assert model[1].num_batches_tracked.item() == twin[1].num_batches_tracked.item()
    assert len(compiled.cache) == 1


COUNTER = torch.tensor(0)
TABLE = torch.zeros(4, 3)


def write_globals(x: torch.Tensor, row: int) -> torch.Tensor:
    COUNTER.add_(1)
    TABLE[row].copy_(x)
    return TABLE.sum(0) * COUNTER


def test_globals_written_in_place_and_never_by_tracing():
    global COUNTER, TABLE
    COUNTER, TABLE = torch.tensor(0), torch.zeros(4, 3)
    rows = [torch.randn(3) for _ in range(3)]
    compiled = torch_purity.compile(write_globals, rows[0], 1)
    # Tracing ran the function on stand-ins: the real tensors are untouched
    # (a fake-tensor trace runs ops whose inputs are all real for real).
    assert COUNTER.item() == 0 and not TABLE.any()
    counter, table = COUNTER.clone(), TABLE.clone()
    with torch.no_grad():
        for step, row in enumerate(rows):
            out = compiled(row, 1)
            counter += 1
            table[1] = row
            torch.testing.assert_close(out, table.sum(0) * counter)
            assert COUNTER.item() == step + 1
            torch.testing.assert_close(TABLE, table)


SCALE = torch.tensor([2.0, 3.0])


def scaled(x: torch.Tensor) -> torch.Tensor:
    return x * SCALE


def test_rebound_global_compiles_again_with_the_new_tensor():
    global SCALE
    SCALE = torch.tensor([2.0, 3.0])
    compiled = torch_purity.compile(scaled)
    x = torch.ones(2)
    torch.testing.assert_close(compiled(x), torch.tensor([2.0, 3.0]))
    SCALE = torch.tensor([5.0, 7.0])  # a new tensor: the guard sees the rebinding
    torch.testing.assert_close(compiled(x), torch.tensor([5.0, 7.0]))
    SCALE.mul_(2)  # the same tensor written by the caller: read at the call
    torch.testing.assert_close(compiled(x), torch.tensor([10.0, 14.0]))
    SCALE.data = torch.tensor([1.0, 1.0, 1.0]).data  # a new shape: compiled again, eager broadcasting error kept
    with pytest.raises(PurityError):
        compiled(x)


def test_tuples_named_tuples_and_dicts_of_tensors():
    Params = namedtuple("Params", "weight bias")
    params = Params(torch.randn(3), torch.zeros(3))
    pair = (torch.ones(3), torch.tensor(0.0))
    state = {"momentum": torch.zeros(3)}

    def step(x):
        pair[1].add_(1)
        params.bias.add_(x)
        state["momentum"].mul_(0.9).add_(x)
        return x * params.weight + params.bias + pair[0] * pair[1] + state["momentum"]

    twin = copy.deepcopy((params, pair, state))
    compiled = torch_purity.compile(step)
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(3)
            out = compiled(x)
            twin[1][1].add_(1)
            twin[0].bias.add_(x)
            twin[2]["momentum"].mul_(0.9).add_(x)
            expected = x * twin[0].weight + twin[0].bias + twin[1][0] * twin[1][1] + twin[2]["momentum"]
            torch.testing.assert_close(out, expected)
            torch.testing.assert_close(params.bias, twin[0].bias)
            torch.testing.assert_close(pair[1], twin[1][1])
            torch.testing.assert_close(state["momentum"], twin[2]["momentum"])


class LazyAccumulator:
    """Creates its buffer on first use (as Hugging Face's static cache does)."""

    def __init__(self) -> None:
        self.total = None
        self.calls = 0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.total is None:
            self.total = torch.zeros_like(x)
        self.total.add_(x)
        return self.total * 2


def test_python_state_assigned_by_the_program_is_replayed_like_eager():
    compiled_owner, eager_owner = LazyAccumulator(), LazyAccumulator()
    compiled = torch_purity.compile(compiled_owner, torch.ones(3))
    assert compiled_owner.total is None, "tracing left its stand-in behind"
    with torch.no_grad():
        for _ in range(4):
            x = torch.randn(3)
            torch.testing.assert_close(compiled(x), eager_owner(x))
            torch.testing.assert_close(compiled_owner.total, eager_owner.total)
            assert not isinstance(compiled_owner.total, FakeTensor)
    assert len(compiled.cache) == 1  # the entry traced after the buffer existed


class Box:
    """A returned object pytree does not know."""

    def __init__(self, tensors: list[torch.Tensor], tag: str) -> None:
        self.tensors = tensors
        self.tag = tag


def test_returned_objects_hold_each_calls_real_tensors():
    def program(x):
        return Box([x + 1, x * 2], "pair"), x.sum()

    compiled = torch_purity.compile(program)
    first_input, second_input = torch.randn(3), torch.randn(3)
    first, total = compiled(first_input)
    second, _ = compiled(second_input)
    assert first is not second and first.tag == "pair"
    assert not fake_tensors_in(first) and not fake_tensors_in(second)
    torch.testing.assert_close(first.tensors[1], first_input * 2)
    torch.testing.assert_close(second.tensors[0], second_input + 1)
    torch.testing.assert_close(total, first_input.sum())


def test_returned_object_holding_a_module_is_refused_by_name():
    layer = torch.nn.Linear(2, 2)

    class Holder:
        def __init__(self, value):
            self.value, self.layer = value, layer

    with pytest.raises(PurityError, match="holds a Linear"):
        torch_purity.compile(lambda x: Holder(x + 1), torch.ones(2))


def test_tensor_purity_cannot_make_an_input_of_names_the_line():
    default_weight = torch.ones(3)

    def program(x, weight=default_weight):  # a default argument: no place to put a stand-in
        return x * weight

    with pytest.raises(PurityError) as error:
        torch_purity.compile(program, torch.ones(3))
    message = str(error.value)
    assert "pass it as an argument" in message and "test_captured_state.py:" in message
    assert "FakeTensor" not in message


def test_torch_compile_lifts_closed_over_state_and_optimizer_steps():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    twin = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    twin_optimizer = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    step = torch.compile(optimizer.step, backend="purity")
    for _ in range(3):
        x = torch.randn(2, 4)
        for network in (model, twin):
            network.zero_grad()
            network(x).square().sum().backward()
        step()
        twin_optimizer.step()
        for parameter, expected in zip(model.parameters(), twin.parameters()):
            torch.testing.assert_close(parameter, expected)
            momentum = optimizer.state[parameter]["momentum_buffer"]
            torch.testing.assert_close(momentum, twin_optimizer.state[expected]["momentum_buffer"])


def test_captured_parameters_requiring_grad_get_eager_gradients():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    twin = copy.deepcopy(model)
    compiled = torch_purity.compile(lambda x: model(x).relu())
    x = torch.randn(4, 3)
    out = compiled(x)
    assert out.requires_grad, "eager's output requires grad through the captured parameters"
    out.sum().backward()
    twin(x).relu().sum().backward()
    torch.testing.assert_close(model.weight.grad, twin.weight.grad)
    torch.testing.assert_close(model.bias.grad, twin.bias.grad)


class CountingScale(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(3))
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.count.add_(1)
        return x * self.weight + self.count


def test_graph_attributes_of_a_backend_graph_are_inputs_written_in_place():
    """What a torch.compile backend may get: a GraphModule whose parameters
    and buffers are `get_attr` nodes, not placeholders."""
    from torch_purity.dynamo_backend import purity_backend

    module = CountingScale()
    twin = copy.deepcopy(module)
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    weight, count = graph.get_attr("weight"), graph.get_attr("count")
    graph.call_method("add_", (count, 1))
    graph.output(graph.call_function(operator.add, (graph.call_function(operator.mul, (x, weight)), count)))
    graph_module = torch.fx.GraphModule(module, graph)
    compiled = purity_backend(graph_module, [torch.randn(3)])
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(3)
            torch.testing.assert_close(compiled(x), twin(x))
            assert graph_module.count.item() == twin.count.item()


def test_programs_with_captured_state_or_keywords_are_not_saved(tmp_path):
    table = torch.zeros(3)
    reads_captured = torch_purity.compile(lambda x: x + table, torch.ones(3))
    with pytest.raises(PurityError, match="captured"):
        reads_captured.save(tmp_path / "captured")
    with_keywords = torch_purity.compile(lambda x, scale: x * scale)
    with_keywords(torch.ones(3), scale=torch.full((3,), 2.0))
    with pytest.raises(PurityError, match="keyword arguments"):
        with_keywords.save(tmp_path / "keywords")


def test_an_argument_sharing_memory_with_captured_state_compiles_again():
    table = torch.zeros(4)

    def program(x):
        table.add_(1)
        return x * 2

    compiled = torch_purity.compile(program, torch.ones(4))
    torch.testing.assert_close(compiled(torch.ones(4)), torch.full((4,), 2.0))
    # The argument is now the captured tensor itself: eager reads it after the write.
    torch.testing.assert_close(compiled(table), torch.full((4,), 4.0))
    torch.testing.assert_close(table, torch.full((4,), 2.0))
    torch.testing.assert_close(compiled(table[1:3]), torch.full((2,), 6.0))


def test_a_captured_tensor_transposed_in_place_compiles_again():
    weight = torch.arange(9.0).reshape(3, 3)
    compiled = torch_purity.compile(lambda x: x @ weight)
    x = torch.randn(2, 3)
    torch.testing.assert_close(compiled(x), x @ weight)
    weight.t_()  # same object, same address and shape: only the strides change
    torch.testing.assert_close(compiled(x), x @ weight)


def test_a_captured_tensor_reinterpreted_as_another_dtype_compiles_again():
    # `.data =` a view of another dtype keeps the object, its address and its layout.
    weight = torch.ones(4)
    compiled = torch_purity.compile(lambda x: x + weight)
    x = torch.zeros(4)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), x + weight)
    (traced_for_float,) = compiled.cache.values()
    weight.data = weight.data.view(torch.int32)
    torch.testing.assert_close(compiled(x), x + weight)
    (entry,) = compiled.cache.values()  # compiled again, in the same slot
    assert entry is not traced_for_float


def test_captured_tensors_keep_one_entry_across_calls_and_grad_modes():
    weight, bias = torch.randn(4), torch.randn(4)
    compiled = torch_purity.compile(lambda x: x * weight + bias)
    x = torch.randn(4)
    for _ in range(3):
        compiled(x)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), x * weight + bias)
    assert len(compiled.cache) == 1


def test_captured_state_in_and_out_of_inference_mode_keeps_its_entry():
    weight = torch.randn(4)
    compiled = torch_purity.compile(lambda x: x * weight)
    x = torch.randn(4)
    compiled(x)
    (entry,) = compiled.cache.values()
    for _ in range(2):
        with torch.inference_mode():
            torch.testing.assert_close(compiled(x), x * weight)
        torch.testing.assert_close(compiled(x), x * weight)
    assert list(compiled.cache.values()) == [entry]
