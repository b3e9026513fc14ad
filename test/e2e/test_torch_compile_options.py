"""torch.compile(..., backend="purity") with mode= and options=, as other backends take them."""

import pytest
import torch

import torch_purity  # noqa: F401  (registers the backend)
from torch_purity.pipeline import STAGES


def step(cache, row):
    cache[2] = row
    return cache.sum(0)


@pytest.mark.parametrize(
    "settings",
    [
        {"mode": "max-autotune"},
        {"mode": "reduce-overhead"},
        {"options": {"target": "cpu"}},
        {"dynamic": False, "fullgraph": True},
    ],
    ids=["mode-max-autotune", "mode-reduce-overhead", "options-target", "dynamic-fullgraph"],
)
def test_modes_and_options_compile_and_match_eager(settings):
    torch._dynamo.reset()
    compiled = torch.compile(step, backend="purity", **settings)
    cache, eager_cache, row = torch.zeros(4, 3), torch.zeros(4, 3), torch.ones(3)
    torch.testing.assert_close(compiled(cache, row), step(eager_cache, row))
    assert torch.equal(cache, eager_cache)


def test_options_dump_dir_writes_every_stage(tmp_path):
    torch._dynamo.reset()
    torch.compile(step, backend="purity", options={"dump_dir": str(tmp_path)})(torch.zeros(4, 3), torch.ones(3))
    names = sorted(p.name for p in tmp_path.glob("*.mlir"))
    assert names == [f"{number}-{stage.name}.mlir" for number, stage in enumerate(STAGES, start=2)]


def test_unknown_option_is_a_clear_error():
    torch._dynamo.reset()
    compiled = torch.compile(step, backend="purity", options={"tagret": "cuda"})
    with pytest.raises(Exception, match=r"unknown option\(s\) tagret for backend 'purity' \(known: target"):
        compiled(torch.zeros(4, 3), torch.ones(3))
