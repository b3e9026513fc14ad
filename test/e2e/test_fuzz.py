"""Differential fuzzing: a bounded run in the suite (a long run is
`purity fuzz --n 5000`), and every saved regression program."""

from pathlib import Path

import pytest

from torch_purity.fuzz import FuzzProgram, check_program, run_fuzz

REGRESSIONS = sorted((Path(__file__).parent / "fuzz_regressions").glob("case_*.py"))


def test_bounded_fuzz_run():
    result = run_fuzz(120, random_seed=2026, save=False)
    assert result.failure is None, result.failure
    assert result.counts.passed >= 0.8 * result.counts.programs


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_saved_regression(path):
    check_program(FuzzProgram(path.read_text()))
