#!/usr/bin/env bash
# Purity on an NVIDIA GPU where one machine has the GPU and the whole stack:
# compiles every e2e program and workload for `cuda`, then loads and checks
# them on CUDA tensors (benchmarks/gpu_check.py). Skipped, with exit 0, where
# there is no GPU. Where the GPU machine lacks torch-mlir or IREE's compiler,
# run the two steps apart (gpu_check.py's docstring).
#   benchmarks/gpu_check.sh [extra `run` args, e.g. --out DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_check: skipped: no NVIDIA GPU on this machine"
  exit 0
fi
"$root/scripts/ensure-venv"
cd "$root"
nvidia-smi -L
.venv/bin/python benchmarks/gpu_check.py prepare
exec .venv/bin/python benchmarks/gpu_check.py run "$@"
