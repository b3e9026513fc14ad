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


def test_keep_going_reports_every_failure_and_runs_to_the_end(monkeypatch, tmp_path):
    """`purity fuzz --keep-going`: failing programs (here the second and the
    fourth, made to fail) are each counted and saved as found, and the run
    still generates all the programs asked for."""
    import torch_purity.fuzz as fuzz

    def fails_every_second(program, counts):
        counts.programs += 1
        if counts.programs % 2 == 0:
            raise fuzz.FuzzFailure(f"injected failure {counts.programs}")
        counts.passed += 1

    monkeypatch.setattr(fuzz, "check_program", fails_every_second)
    result = run_fuzz(5, random_seed=3, regression_directory=tmp_path, keep_going=True)
    assert (result.counts.programs, result.counts.passed, result.counts.failed) == (5, 3, 2)
    assert result.failures == ["injected failure 2", "injected failure 4"]
    assert len(set(result.saved)) == 2 and all("def program(" in p.read_text() for p in result.saved)
