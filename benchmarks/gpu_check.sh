#!/usr/bin/env bash
# Runs the e2e programs (compiled for the `cuda` target) against eager on a
# machine with an NVIDIA GPU, in one go. Skipped, with exit 0, where there is none.
#   benchmarks/gpu_check.sh [extra pytest args]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_check: skipped: no NVIDIA GPU on this machine"
  exit 0
fi
"$root/scripts/ensure-venv"
cd "$root"
nvidia-smi -L
PURITY_E2E_TARGET=cuda exec .venv/bin/python -m pytest -q test/e2e -k "compile_matches or module_state" "$@"
