"""Differential fuzzing: a bounded run in the suite (a long run is
`purity fuzz --n 5000`), and every saved regression program."""

from pathlib import Path

import pytest

from torch_purity.fuzz import FuzzProgram, check_program, run_fuzz

REGRESSIONS = sorted((Path(__file__).parent / "fuzz_regressions").glob("case_*.py"))

# Wrong answers the fuzzer found that are not fixed yet: strict, so a fix shows.
KNOWN_WRONG: dict[str, str] = {}


def test_bounded_fuzz_run():
    result = run_fuzz(120, random_seed=2026, save=False)
    assert result.failure is None, result.failure
    assert result.counts.passed >= 0.8 * result.counts.programs


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[p.stem]))
        if p.stem in KNOWN_WRONG
        else p
        for p in REGRESSIONS
    ],
    ids=[p.stem for p in REGRESSIONS],
)
def test_saved_regression(path):
    check_program(FuzzProgram(path.read_text()))
