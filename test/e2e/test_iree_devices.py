"""The devices compiled CPU programs run on (iree/devices.py): one per
driver, whose allocator keeps what a call frees for the next call, bounded;
`PURITY_IREE_ALLOCATOR_CACHE=off` opens IREE's default device instead."""

import subprocess
import sys

import iree.runtime as iree_runtime
import pytest
import torch

import torch_purity
from torch_purity.iree import devices

_MIB = 1 << 20


@pytest.fixture(autouse=True)
def _devices_of_their_own(monkeypatch):
    """Each test opens devices of its own: what a shared pool holds from
    other tests (results still alive, buffers of other sizes) would change
    what these tests count."""
    own: dict[str, object] = {}
    monkeypatch.setattr(devices, "_devices", own)
    yield
    for device in own.values():  # (they live on, as every pooled device does: keep nothing in their pools)
        device.allocator.trim()


def _allocate_and_free(allocator, size: int) -> None:
    buffer = allocator.allocate_buffer(
        memory_type=iree_runtime.MemoryType.DEVICE_LOCAL,
        allowed_usage=iree_runtime.BufferUsage.DEFAULT,
        allocation_size=size,
    )
    del buffer


def _retained_after_three_allocations(device) -> int:
    """Bytes the device's allocator still holds after three 1 MiB buffers
    were allocated and freed one after the other."""
    allocator = device.allocator
    before = allocator.statistics
    for _ in range(3):
        _allocate_and_free(allocator, _MIB)
    after = allocator.statistics
    allocated = after["device_bytes_allocated"] - before["device_bytes_allocated"]
    freed = after["device_bytes_freed"] - before["device_bytes_freed"]
    return allocated - freed


def test_cpu_devices_are_shared_and_keep_freed_buffers(monkeypatch):
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    first, second = devices.config("local-sync"), devices.config("local-sync")
    assert first.device is second.device
    assert _retained_after_three_allocations(first.device) == _MIB


def test_buffers_of_earlier_programs_do_not_crowd_out_later_ones(monkeypatch):
    """Many small buffers freed first (a program with many intermediates),
    then a large one: the large one is still kept for the next request."""
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    allocator = devices.config("local-sync").device.allocator
    for kib in range(1, 65):  # 64 distinct sizes, each freed
        _allocate_and_free(allocator, kib << 10)
    assert _retained_after_three_allocations(devices.config("local-sync").device) == _MIB


def test_the_variable_opens_the_default_device(monkeypatch):
    monkeypatch.setenv(devices.OFF_VARIABLE, "off")
    assert _retained_after_three_allocations(devices.config("local-sync").device) == 0


def test_what_the_cache_keeps_is_bounded(monkeypatch):
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    allocator = devices.config("local-sync").device.allocator
    before = allocator.statistics
    for size in range(60, 66):  # distinct sizes: none is reused
        _allocate_and_free(allocator, size * _MIB)
    after = allocator.statistics
    allocated = after["device_bytes_allocated"] - before["device_bytes_allocated"]
    freed = after["device_bytes_freed"] - before["device_bytes_freed"]
    assert allocated == sum(range(60, 66)) * _MIB
    assert 0 < freed and allocated - freed <= 256 * _MIB


def test_programs_with_intermediates_stay_right_over_calls(monkeypatch):
    """A BatchNorm in training mode (float64 intermediates) called again
    and again on one shared device: buffers reused from earlier calls hold
    nothing the next call reads."""
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    torch.manual_seed(0)

    def step(x, mean, var, weight, bias):
        return torch.nn.functional.batch_norm(x, mean, var, weight, bias, training=True)

    compiled = torch_purity.compile(step)
    state = [torch.zeros(8), torch.ones(8), torch.randn(8), torch.randn(8)]
    expected_state = [t.clone() for t in state]
    for scale in (1.0, 3.0, 0.5):
        x = torch.randn(16, 8, 12, 12) * scale + scale
        torch.testing.assert_close(compiled(x, *state), step(x, *expected_state))
        for mine, theirs in zip(state, expected_state):
            torch.testing.assert_close(mine, theirs)


def _scaled(x):
    return x * 2 + 1


def test_large_results_come_from_the_pool_and_go_back_to_it(monkeypatch):
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    compiled = torch_purity.compile(_scaled)
    x = torch.randn(4096, 2048)  # a 32 MiB result
    compiled(x)
    allocator = devices.config("local-sync").device.allocator
    before = allocator.statistics["device_bytes_allocated"]
    out = compiled(x)
    assert not out.untyped_storage().resizable()  # IREE's memory, through DLPack
    torch.testing.assert_close(out, _scaled(x))
    del out
    for _ in range(3):  # each result freed before the next call: the pool's one buffer serves them all
        torch.testing.assert_close(compiled(x), _scaled(x))
    assert allocator.statistics["device_bytes_allocated"] - before <= x.nbytes
    small = torch.randn(16, 16)
    assert compiled(small).untyped_storage().resizable()  # below POOLED_BYTES: torch.empty


def test_results_kept_alive_keep_their_values(monkeypatch):
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    compiled = torch_purity.compile(_scaled)
    inputs = [torch.randn(4096, 2048) for _ in range(3)]
    results = [compiled(x) for x in inputs]
    assert len({r.data_ptr() for r in results}) == len(results)
    for x, result in zip(inputs, results):
        torch.testing.assert_close(result, _scaled(x))


def test_a_pooled_result_passed_back_in_and_written_in_place(monkeypatch):
    """A result handed back as the next call's input, written in place (a
    cache returned by one step and updated by the next): IREE imports the
    memory it exported and writes it."""
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)

    def step(cache, row, position: int):
        cache[position] = row
        return cache * 1.0

    compiled = torch_purity.compile(step)
    cache, expected = torch.zeros(8192, 1024), torch.zeros(8192, 1024)
    for position in range(3):
        row = torch.randn(1024)
        cache, expected = compiled(cache, row, position), step(expected, row, position)
        torch.testing.assert_close(cache, expected)


def test_growing_a_pooled_result_is_refused_by_torch(monkeypatch):
    """Documented: torch cannot resize memory it does not own. Growing the
    result raises torch's error (nothing is lost); shrinking it works."""
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    out = torch_purity.compile(_scaled)(torch.randn(4096, 2048))
    out.resize_(16)
    assert out.shape == (16,)
    with pytest.raises(RuntimeError, match="not resizable"):
        out.resize_(4096 * 2048 + 1)


def test_without_the_pool_results_are_torch_tensors(monkeypatch):
    monkeypatch.setenv(devices.OFF_VARIABLE, "off")
    out = torch_purity.compile(_scaled)(torch.randn(4096, 2048))
    assert out.untyped_storage().resizable()


def test_a_pooled_result_alive_at_exit_is_freed_cleanly():
    """A result kept in a module imported before torch_purity is freed after
    torch_purity's modules are torn down at exit: its pool must still be
    there (it crashed the process, SIGSEGV, before the device was held to
    the end), and nothing is reported as leaked."""
    script = (
        "import json, torch, torch_purity\n"
        "f = torch_purity.compile(lambda x: x * 2 + 1)\n"
        "json.KEEP = f(torch.randn(4096, 2048))\n"
        "import collections\n"
        "collections.KEEP = f(torch.randn(4096, 2304))\n"
        "assert not json.KEEP.untyped_storage().resizable()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "leaked" not in done.stderr
