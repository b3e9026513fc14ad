"""Native crashes (a signal) are contained: `purity run` reports a CRASH and
exits 1, `purity fuzz` reports and saves the crashing program and goes on."""

import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def test_purity_run_reports_a_crash_of_the_program(tmp_path):
    program = tmp_path / "crashes.py"
    program.write_text(
        "import os, signal, torch\n"
        "program = lambda x: x + 1\n"
        "def example_inputs():\n"
        "    os.kill(os.getpid(), signal.SIGSEGV)  # stands for a native crash while running\n"
    )
    result = subprocess.run([str(BIN / "purity"), "run", str(program)], capture_output=True, text=True)
    assert result.returncode == 1
    assert "CRASH" in result.stderr and "SIGSEGV" in result.stderr
    assert "Traceback" not in result.stderr


def test_purity_fuzz_saves_a_crashing_program_and_goes_on(tmp_path):
    env = {"PURITY_FUZZ_CRASH_AT": "2", "PATH": str(BIN)}
    result = subprocess.run(
        [str(BIN / "purity"), "fuzz", "--n", "3", "--seed", "5", "--progress", "0", "--save-to", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, **env},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "CRASHED: CRASH: the process died with SIGSEGV" in result.stdout
    saved = sorted(tmp_path.glob("case_*.py"))
    assert saved and "def program(" in saved[0].read_text()
    assert "crashed" in result.stdout.splitlines()[-1]
    # The run went on to the end: a child finished and printed its counts.
    assert any(line.startswith("programs ") for line in result.stdout.splitlines())
