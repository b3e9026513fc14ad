"""Floating-point reductions on the CPU target are reassociated
(`targets.CPU_REDUCTIONS_REASSOCIATED`): IREE's code for a sum adds vector
lanes and combines them at the end instead of one serial chain of adds (10x
faster on a large sum), and the results stay as close to the exact value as
eager's."""

from pathlib import Path

import torch

import torch_purity
from torch_purity.iree.module import compile_linalg

FLOAT64_SUM = """
func.func @main(%a: tensor<4096xf32>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<f64>
  %init = linalg.fill ins(%zero : f64) outs(%empty : tensor<f64>) -> tensor<f64>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%a : tensor<4096xf32>) outs(%init : tensor<f64>) {
  ^bb0(%in: f32, %out: f64):
    %wide = arith.extf %in : f32 to f64
    %next = arith.addf %wide, %out : f64
    linalg.yield %next : f64
  } -> tensor<f64>
  return %sum : tensor<f64>
}
"""


def test_the_cpu_code_of_a_sum_reduces_its_lanes_reassociated(tmp_path: Path) -> None:
    compile_linalg(FLOAT64_SUM, "cpu", (f"--iree-hal-dump-executable-intermediates-to={tmp_path}",))
    (optimized,) = tmp_path.glob("*.optimized.ll")
    lane_reductions = [line for line in optimized.read_text().splitlines() if "@llvm.vector.reduce.fadd" in line]
    calls = [line for line in lane_reductions if " call " in line]
    assert calls, "no vector reduction in the sum's code"
    # Without reassociation LLVM keeps the lanes' order: `call double @llvm.vector.reduce.fadd`, a serial chain.
    assert all("call reassoc" in line for line in calls), calls


def test_large_sums_and_batch_statistics_stay_as_close_as_eager() -> None:
    generator = torch.Generator().manual_seed(3)
    x = torch.rand(1 << 20, generator=generator) + 1000
    y = torch.randn(16, 32, 20, 20, generator=generator) * 5 + 100

    def reductions(x, y):
        return x.sum(), x.mean(), y.mean(dim=(0, 2, 3)), y.var(dim=(0, 2, 3)), y.sum(dim=1)

    ours = torch_purity.compile(reductions)(x, y)
    eager = reductions(x, y)
    exact = reductions(x.double(), y.double())
    for got, want, true in zip(ours, eager, exact, strict=True):
        torch.testing.assert_close(got, want)
        spacing = torch.finfo(torch.float32).eps * true.abs()
        assert bool(((got.double() - true).abs() <= (want.double() - true).abs() + spacing).all())
