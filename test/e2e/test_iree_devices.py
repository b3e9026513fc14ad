"""The devices compiled CPU programs run on (iree/devices.py): one per
driver, whose allocator keeps what a call frees for the next call, bounded;
`PURITY_IREE_ALLOCATOR_CACHE=off` opens IREE's default device instead."""

import iree.runtime as iree_runtime
import torch

import torch_purity
from torch_purity.iree import devices

_MIB = 1 << 20


def _retained_after_three_allocations(device) -> int:
    """Bytes the device's allocator still holds after three 1 MiB buffers
    were allocated and freed one after the other."""
    allocator = device.allocator
    before = allocator.statistics
    for _ in range(3):
        buffer = allocator.allocate_buffer(
            memory_type=iree_runtime.MemoryType.DEVICE_LOCAL,
            allowed_usage=iree_runtime.BufferUsage.DEFAULT,
            allocation_size=_MIB,
        )
        del buffer
    after = allocator.statistics
    allocated = after["device_bytes_allocated"] - before["device_bytes_allocated"]
    freed = after["device_bytes_freed"] - before["device_bytes_freed"]
    return allocated - freed


def test_cpu_devices_are_shared_and_keep_freed_buffers(monkeypatch):
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    first, second = devices.config("local-sync"), devices.config("local-sync")
    assert first.device is second.device
    assert _retained_after_three_allocations(first.device) == _MIB


def test_the_variable_opens_the_default_device(monkeypatch):
    monkeypatch.setenv(devices.OFF_VARIABLE, "off")
    assert _retained_after_three_allocations(devices.config("local-sync").device) == 0


def test_what_the_cache_keeps_is_bounded(monkeypatch):
    monkeypatch.delenv(devices.OFF_VARIABLE, raising=False)
    allocator = devices.config("local-sync").device.allocator
    before = allocator.statistics
    for size in range(60, 66):  # distinct sizes: none is reused
        buffer = allocator.allocate_buffer(
            memory_type=iree_runtime.MemoryType.DEVICE_LOCAL,
            allowed_usage=iree_runtime.BufferUsage.DEFAULT,
            allocation_size=size * _MIB,
        )
        del buffer
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
