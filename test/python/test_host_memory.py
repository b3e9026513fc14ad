"""Results IREE writes first are asked for transparent huge pages
(iree/host_memory.py): a fresh 51 MB output faulted in 4 KiB pages cost more
than the computation writing it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torch_purity
from torch_purity.iree.host_memory import (
    ADVISED_BYTES,
    POOLED_BYTES,
    advise_huge_pages,
    fresh_tensor,
    fresh_tensor_maker,
)

CPU = torch.device("cpu")

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and /proc/self/smaps are Linux's")
THP_BUILT_IN = Path("/sys/kernel/mm/transparent_hugepage/enabled").exists()


def advised_for_huge_pages(tensor: torch.Tensor) -> bool:
    """Whether the mapping holding the tensor's middle byte carries the
    kernel's MADV_HUGEPAGE flag ("hg" in /proc/self/smaps' VmFlags)."""
    middle = tensor.data_ptr() + tensor.numel() * tensor.element_size() // 2
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and all(c in "0123456789abcdef-" for c in head):
            low, high = (int(part, 16) for part in head.split("-"))
            inside = low <= middle < high
        elif inside and line.startswith("VmFlags:"):
            return "hg" in line.split()[1:]
    return False


@linux_only
def test_a_large_fresh_tensor_is_advised_and_keeps_its_values():
    tensor = fresh_tensor((ADVISED_BYTES // 4 + 1000,), torch.float32, CPU)
    assert advised_for_huge_pages(tensor) == THP_BUILT_IN
    tensor.copy_(torch.arange(tensor.numel(), dtype=torch.float32))
    assert torch.equal(tensor, torch.arange(tensor.numel(), dtype=torch.float32))


@linux_only
def test_a_small_tensor_is_left_alone():
    small = fresh_tensor((1000,), torch.float32, CPU)
    assert advise_huge_pages(small) is False  # no whole huge page inside it


@linux_only
def test_a_compiled_programs_large_output_is_advised():
    x = torch.randn(64, 256, 64)  # 4 MiB
    output = torch_purity.compile(lambda x: x * 2 + 1)(x)
    torch.testing.assert_close(output, x * 2 + 1)
    assert advised_for_huge_pages(output) == THP_BUILT_IN


def test_the_call_plans_maker_advises_what_fresh_tensor_advises():
    """From the second call on a call plan makes the results with
    `fresh_tensor_maker`: a 4 MiB result (advised, below the pool's size)
    goes through `fresh_tensor` there too; a small one is plain torch.empty."""
    advised = fresh_tensor_maker((ADVISED_BYTES // 4,), torch.float32, CPU)
    assert advised.func is fresh_tensor
    assert fresh_tensor_maker((POOLED_BYTES // 4,), torch.float32, CPU).func is fresh_tensor
    assert fresh_tensor_maker((1000,), torch.float32, CPU).func is torch.empty
    assert advised().untyped_storage().resizable()  # torch's memory, not the pool's


@linux_only
def test_purity_huge_pages_0_turns_the_advice_off():
    probe = (
        "import torch; from torch_purity.iree.host_memory import fresh_tensor, advise_huge_pages; "
        "print(advise_huge_pages(fresh_tensor((2**22,), torch.float32, torch.device('cpu'))))"
    )
    for setting, expected in (("0", "False"), ("1", str(THP_BUILT_IN))):
        environment = {**os.environ, "PURITY_HUGE_PAGES": setting}
        printed = subprocess.run([sys.executable, "-c", probe], env=environment, capture_output=True, text=True)
        assert printed.stdout.strip() == expected, printed.stderr
