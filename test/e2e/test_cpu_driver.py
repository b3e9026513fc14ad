"""IREE's runtime driver, chosen per CPU program (iree/cpu_driver.py): the
worker pool (`local-task`) where its linalg ops span 2^18 elements or more
on average, the calling thread (`local-sync`) otherwise; programs on the
pool match eager, write their inputs in place, and a saved program keeps
its driver."""

import pytest
import torch

import torch_purity
from torch_purity.iree.cpu_driver import CALLING_THREAD, POOL, POOL_MEAN_ELEMENTS, cpu_driver, linalg_op_elements
from torch_purity.iree.targets import get_target


def _generic(*types: str) -> str:
    ins = ", ".join(f"tensor<{t}>" for t in types[:-1])
    return (
        f"%0 = linalg.generic {{indexing_maps = [], iterator_types = []}} ins(%a : {ins}) "
        f"outs(%b : tensor<{types[-1]}>) {{\n  ^bb0(%x: f32, %y: f32):\n  linalg.yield %x : f32\n"
        f"}} -> tensor<{types[-1]}>\n"
    )


@pytest.fixture(autouse=True)
def _no_forced_driver(monkeypatch):
    monkeypatch.delenv("PURITY_IREE_CPU_DRIVER", raising=False)


def test_the_average_op_decides():
    assert linalg_op_elements(_generic("64x256xf32", "64x256xf32") + _generic("1024x1024xf32", "1024xf32")) == [
        64 * 256,
        1 << 20,
    ]
    assert cpu_driver(_generic("512x512xf32", "512xf32")) == POOL
    assert cpu_driver(_generic("511x512xf32", "511xf32")) == CALLING_THREAD
    # The reduction's result is small, its input decides.
    assert cpu_driver(_generic("64x256x28x28xf32", "256xf32")) == POOL
    # One large op among many small ones: the pool's cost per dispatch would outweigh it.
    many_small = _generic("4x1024x1024xf32", "4x1024x1024xf32") + _generic("256xf32", "256xf32") * 16
    assert sum(linalg_op_elements(many_small)) < POOL_MEAN_ELEMENTS * 17
    assert cpu_driver(many_small) == CALLING_THREAD
    assert cpu_driver(_generic("4x1024x1024xf32", "4x1024x1024xf32") + _generic("256xf32", "256xf32") * 4) == POOL


def test_slices_written_into_large_tensors_and_dynamic_sizes_do_not_count():
    row_write = (
        "%1 = tensor.insert_slice %row into %arg0[7, 0] [1, 256] [1, 1] : tensor<256xf32> into tensor<131072x256xf32>\n"
        "%2 = tensor.scatter %r into %arg0[%i] scatter_dims([0]) unique : "
        "(tensor<1x256xf32>, tensor<131072x256xf32>, tensor<1x1xi64>) -> tensor<131072x256xf32>\n"
        + _generic("256xf32", "f32")
    )
    assert linalg_op_elements(row_write) == [256]
    assert cpu_driver(row_write) == CALLING_THREAD
    assert linalg_op_elements(_generic("?x1048576xf32", "?x1048576xf32")) == [0]
    assert cpu_driver(_generic("?x1048576xf32", "?x1048576xf32")) == CALLING_THREAD
    assert cpu_driver("") == CALLING_THREAD


def test_the_override_and_other_targets(monkeypatch):
    small = _generic("4xf32", "4xf32")
    assert get_target("cpu").runtime_driver(small) == CALLING_THREAD
    assert get_target("cuda").runtime_driver(small) == "cuda"
    monkeypatch.setenv("PURITY_IREE_CPU_DRIVER", POOL)
    assert get_target("cpu").runtime_driver(small) == POOL
    assert get_target("cpu").runtime_driver() == POOL


def _driver_of(compiled, *args) -> str:
    entry, _ = compiled.entry_for(*args)
    return entry.module.driver


def batch_norm_step(x, running_mean, running_var, weight, bias):
    return torch.relu(torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training=True))


def _batch_norm_inputs(length: int) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return torch.randn(16, 64, length, 1), torch.zeros(64), torch.ones(64), torch.randn(64), torch.randn(64)


@pytest.mark.parametrize(("length", "driver"), [(1024, POOL), (256, CALLING_THREAD)], ids=["1M", "262k"])
def test_batch_norm_runs_where_chosen_and_matches_eager(length, driver):
    ours, theirs = _batch_norm_inputs(length), _batch_norm_inputs(length)
    compiled = torch_purity.compile(batch_norm_step)
    for _ in range(2):
        result, expected = compiled(*ours), batch_norm_step(*theirs)
        torch.testing.assert_close(result, expected)
        for mine, eager in zip(ours, theirs):  # the running statistics, written in place
            torch.testing.assert_close(mine, eager)
    assert _driver_of(compiled, *ours) == driver
    entry, _ = compiled.entry_for(*ours)
    assert entry.hand_over == "in place" and {1, 2} <= entry.convention.tied_inputs


def test_an_update_on_the_pool_writes_the_callers_tensor():
    def update(p, g):
        p.mul_(0.9).add_(g, alpha=0.1)
        return p.sum()

    torch.manual_seed(0)
    p, g = torch.randn(1 << 20), torch.randn(1 << 20)
    p_eager = p.clone()
    pointer = p.data_ptr()
    compiled = torch_purity.compile(update)
    for _ in range(3):
        torch.testing.assert_close(compiled(p, g), update(p_eager, g))
    torch.testing.assert_close(p, p_eager)
    assert p.data_ptr() == pointer and _driver_of(compiled, p, g) == POOL


def test_a_saved_program_keeps_its_driver(tmp_path):
    inputs = _batch_norm_inputs(1024)
    compiled = torch_purity.compile(batch_norm_step)
    compiled(*inputs)
    loaded = torch_purity.load(compiled.save(tmp_path / "saved"))
    fresh, eager = _batch_norm_inputs(1024), _batch_norm_inputs(1024)
    torch.testing.assert_close(loaded(*fresh), batch_norm_step(*eager))
    [[(_, _, executable)]] = loaded.entries.values()
    assert executable.module.driver == POOL
