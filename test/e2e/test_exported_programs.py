"""torch.export's ExportedProgram as Purity's input (its default IR keeps
in-place ops and buffer mutations), through compile() and import_fx()."""

from __future__ import annotations

import copy

import pytest
import torch

import torch_purity
from torch_purity.errors import PurityError


class CountingBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.register_buffer("count", torch.zeros(()))
        self.register_buffer("total", torch.zeros(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.count.add_(1)
        self.total.add_(x.sum(0))
        return self.linear(x).relu_() + self.count


def exported(model: torch.nn.Module) -> torch.export.ExportedProgram:
    batch = torch.export.Dim("batch", min=2, max=8)
    return torch.export.export(model, (torch.randn(3, 4),), dynamic_shapes={"x": {0: batch}})


def test_compiled_exported_program_mutates_the_exported_buffers_like_eager():
    model = CountingBlock()
    twin = copy.deepcopy(model)
    compiled = torch_purity.compile(exported(model))
    with torch.no_grad():
        for batch in (3, 2, 8, 3):
            x = torch.randn(batch, 4)
            torch.testing.assert_close(compiled(x), twin(x))
            torch.testing.assert_close(model.count, twin.count)
            torch.testing.assert_close(model.total, twin.total)
        assert len(compiled.cache) == 1  # the batch is a dynamic dim: one entry for 3, 2 and 8
        before = (model.count.clone(), model.total.clone())
        # Outside the exported range of `batch`: refused before anything runs.
        with pytest.raises(PurityError, match=r"x.shape\[0\] is 16, outside the range \[2, 8\]"):
            compiled(torch.randn(16, 4))
        torch.testing.assert_close(model.count, before[0])
        torch.testing.assert_close(model.total, before[1])


def test_import_fx_of_an_exported_program_keeps_its_mutations():
    text = torch_purity.import_fx(exported(CountingBlock()), torch.randn(3, 4)).operation.get_asm()
    assert 'purity.input = "buffer:count"' in text and 'purity.input = "param:linear.weight"' in text
    assert "torch.aten.add_.Tensor" in text and "torch.aten.relu_" in text
