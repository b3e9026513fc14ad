"""A fixed, bounded slice of the OpInfo conformance run (the whole database
is `scripts/conformance`): these OpInfos, float32 and int64, every variant,
their first 4 samples, in a worker process. No case may be WRONG or CRASH,
an UNSUPPORTED case must be a located PurityError, and at least 90% of the
cases eager runs must pass."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_opinfo import COUNTED, run_cases  # noqa: E402

# Elementwise (with in-place, out= and through-a-view variants), reductions,
# views, index ops, and ops where the run found wrong answers or crashes.
SLICE = (
    "add",
    "mul",
    "div.no_rounding_mode",
    "clamp",
    "where",
    "abs",
    "exp",
    "sum",
    "amax",
    "cumsum",
    "softmax",
    "t",
    "narrow",
    "unbind",
    "expand",
    "as_strided",
    "diagonal",
    "index_select",
    "gather",
    "scatter_add",
    "index_put",
    "masked_fill",
    "cat",
    "mm",
    "var_mean",
    "repeat",
    "renorm",
    "nonzero",
    "nn.functional.softshrink",
    "nn.functional.embedding_bag",
    "sort",
    "topk",
    "argmax",
    "max.reduction_with_dim",
)


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[dict]:
    from opinfo_cases import cases

    keys = [case.key for case in cases(list(SLICE), ("float32", "int64"))]
    log = tmp_path_factory.mktemp("conformance") / "worker.log"
    return run_cases(keys, jobs=1, samples=4, timeout=300.0, log_path=log)


@pytest.mark.parametrize("op", SLICE)
def test_no_wrong_answer_or_crash(rows, op):
    mine = [r for r in rows if r["op"] == op]
    assert mine, f"no case of {op} ran"
    bad = [f"{r['variant']} {r['dtype']}: {r['status']}: {r['reason']}" for r in mine
           if r["status"] in ("WRONG", "CRASH")]
    assert not bad, "\n".join(bad)
    unsupported = [r["reason"] for r in mine if r["status"] == "UNSUPPORTED"]
    unlocated = [reason for reason in unsupported if not reason.startswith("PurityError")]
    assert not unlocated, unlocated


def test_pass_rate(rows):
    counted = [r for r in rows if r["status"] in COUNTED]
    passed = sum(r["status"] == "PASS" for r in counted)
    assert passed >= 0.9 * len(counted), f"{passed} of {len(counted)} cases pass"


def test_an_unknown_op_name_is_a_clear_error(capsys):
    """`run_opinfo.py --ops` with a name the database lacks exits with status 2
    and names the variants meant, without a traceback (was a KeyError)."""
    from run_opinfo import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--ops", "scatter_reduce", "no_such_op"])
    assert exit_info.value.code == 2
    message = capsys.readouterr().err
    assert "no OpInfo named 'scatter_reduce' (did you mean scatter_reduce.amax" in message
    assert "no OpInfo named 'no_such_op'" in message
    assert "Traceback" not in message
