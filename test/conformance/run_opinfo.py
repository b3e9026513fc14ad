"""Run OpInfo conformance cases in worker processes; write a CSV and a Markdown summary.

    scripts/conformance                       # the whole database (hours on 2 cores; resumable)
    scripts/conformance --ops add mul --jobs 1
    scripts/conformance --resume              # keep the CSV's rows, run the cases it lacks

Each worker runs cases one after the other; a worker that dies (a native
crash) or exceeds `--timeout` on a case marks that case CRASH and is
replaced, so one crash cannot hide the rest.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
FIELDS = ["op", "variant", "dtype", "status", "samples", "eager_ops", "compared", "seconds", "reason"]
COUNTED = ("PASS", "WRONG", "UNSUPPORTED", "CRASH")
RESULT_PREFIX = "@@conformance-result "


# --- worker ------------------------------------------------------------------------------------------


def worker(samples: int) -> None:
    """Reads case keys from stdin, writes one result line per case to the original stdout."""
    results = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the cases print goes to stderr, not into the result stream
    sys.path.insert(0, str(HERE))
    from opinfo_cases import Case, run_case

    for line in sys.stdin:
        case = Case.from_key(line.strip())
        results.write(RESULT_PREFIX + json.dumps(run_case(case, samples).row()) + "\n")


# --- supervisor --------------------------------------------------------------------------------------


class _Worker:
    def __init__(self, samples: int, log) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", "--samples", str(samples)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            if line.startswith(RESULT_PREFIX):
                self.lines.put(line[len(RESULT_PREFIX) :])
        self.lines.put(None)

    def run(self, key: str, timeout: float) -> dict | str:
        """The case's row, or why the worker gave none."""
        try:
            self.process.stdin.write(key + "\n")
            self.process.stdin.flush()
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            return f"no result within {timeout:.0f} s (killed)"
        except BrokenPipeError:
            line = None
        if line is None:
            code = self.process.wait()
            return f"the worker process died (exit status {code})"
        return json.loads(line)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def run_cases(keys: list[str], *, jobs: int, samples: int, timeout: float, log_path: Path, on_row=None) -> list[dict]:
    """Runs every case key in `jobs` workers; returns their rows in the order finished."""
    pending: queue.Queue[str] = queue.Queue()
    for key in keys:
        pending.put(key)
    rows: list[dict] = []
    lock = threading.Lock()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "a")  # noqa: SIM115 - shared by the workers until all finish

    def serve() -> None:
        current = _Worker(samples, log)
        while True:
            try:
                key = pending.get_nowait()
            except queue.Empty:
                break
            started = time.perf_counter()
            row = current.run(key, timeout)
            if isinstance(row, str):
                op, variant, dtype = key.split("|")
                row = {"op": op, "variant": variant, "dtype": dtype, "status": "CRASH", "reason": row}
                row["seconds"] = f"{time.perf_counter() - started:.1f}"
                current = _Worker(samples, log)
            with lock:
                rows.append(row)
                if on_row:
                    on_row(row)
        current.process.stdin.close()
        current.process.wait()

    threads = [threading.Thread(target=serve) for _ in range(max(1, jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()
    return rows


# --- reports -------------------------------------------------------------------------------------------


def _reason_class(row: dict) -> str:
    """A reason with its specifics (paths, numbers, sizes) taken out, to count alike failures together."""
    text = row.get("reason", "")
    text = re.sub(r"/\S+", "<path>", text)
    text = re.sub(r"\b\d+(\.\d+)?(e-?\d+)?\b", "N", text)
    text = re.sub(r"\(max abs difference [^)]*\)", "", text)
    return f"{row['status']}: {text[:140]}"


def summary(rows: list[dict], command: str) -> str:
    counted = [r for r in rows if r["status"] in COUNTED]
    statuses = Counter(r["status"] for r in rows)
    passed = statuses["PASS"]
    with_eager = sum(1 for r in counted if r["status"] == "PASS" and r.get("eager_ops"))
    rate = 100.0 * passed / len(counted) if counted else 0.0
    lines = [
        f"Command: `{command}`",
        "",
        f"{len(counted)} (op, variant, dtype) cases eager runs, from {len({r['op'] for r in rows})} OpInfos: "
        f"**{rate:.1f}% PASS** ({passed}, of which {with_eager} run some op in eager through the fallback), "
        f"{statuses['WRONG']} WRONG, {statuses['UNSUPPORTED']} UNSUPPORTED, {statuses['CRASH']} CRASH; "
        f"{statuses['EAGER_ERROR']} more cases have no sample eager runs.",
        "",
        "| variant | PASS | WRONG | UNSUPPORTED | CRASH | EAGER_ERROR |",
        "|---|---|---|---|---|---|",
    ]
    for key in ("variant", "dtype"):
        for value in sorted({r[key] for r in rows}):
            counts = Counter(r["status"] for r in rows if r[key] == value)
            cells = " | ".join(str(counts[s]) for s in (*COUNTED, "EAGER_ERROR"))
            lines.append(f"| {key} {value} | {cells} |")
    reasons = Counter(_reason_class(r) for r in counted if r["status"] != "PASS")
    if reasons:
        lines += ["", "| cases | status: reason (first 140 characters) |", "|---|---|"]
        for reason, count in reasons.most_common(40):
            lines.append(f"| {count} | {reason.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


README = HERE.parent.parent / "README.md"
README_START, README_END = "<!-- opinfo-summary -->", "<!-- /opinfo-summary -->"


def update_readme(text: str) -> None:
    """Replaces what README.md holds between its two summary markers."""
    readme = README.read_text()
    head, _, rest = readme.partition(README_START)
    _, _, tail = rest.partition(README_END)
    README.write_text(f"{head}{README_START}\n{text}{README_END}{tail}")


def _read_csv(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _key(row: dict) -> str:
    return f"{row['op']}|{row['variant']}|{row['dtype']}"


def _write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(sorted(rows, key=lambda r: (r["op"], r["variant"], r["dtype"])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", nargs="*", help="OpInfo names (name or name.variant_test_name); default: all")
    parser.add_argument("--dtypes", nargs="*", choices=["float32", "float64", "int64", "bool", "uint8", "int8"])
    parser.add_argument("--variants", nargs="*", choices=["function", "inplace", "out", "view", "inplace_view"])
    parser.add_argument("--samples", type=int, default=4, help="sample inputs per case (the OpInfo's first ones)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per case before it counts as CRASH")
    parser.add_argument("--csv", type=Path, default=RESULTS / "opinfo.csv")
    parser.add_argument("--summary", type=Path, default=RESULTS / "opinfo_summary.md")
    parser.add_argument("--resume", action="store_true", help="keep the CSV's rows and run only the missing cases")
    parser.add_argument("--readme", action="store_true", help="also put the summary into README.md's table")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.worker:
        worker(options.samples)
        return 0

    sys.path.insert(0, str(HERE))
    from opinfo_cases import cases

    try:
        keys = [c.key for c in cases(options.ops, tuple(options.dtypes) if options.dtypes else None)]
    except ValueError as error:
        parser.error(str(error))  # exits with status 2 and the usage line, no traceback
    if options.variants:
        keys = [k for k in keys if k.split("|")[1] in options.variants]
    partial = options.csv.with_suffix(".partial.csv")  # rows as they finish: an interrupted run resumes from it
    if not options.resume:
        partial.unlink(missing_ok=True)
    rows = list({_key(r): r for r in _read_csv(options.csv) + _read_csv(partial)}.values()) if options.resume else []
    done = {_key(r) for r in rows}
    keys = [k for k in keys if k not in done]
    print(f"{len(keys)} cases to run ({len(done)} already done)", flush=True)
    new_file = not partial.exists()
    with open(partial, "a", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS, extrasaction="ignore")
        if new_file:
            writer.writeheader()

        def record(row: dict) -> None:
            writer.writerow(row)
            handle.flush()
            if row["status"] not in ("PASS", "EAGER_ERROR"):
                print(f"{row['status']:12} {row['op']} {row['variant']} {row['dtype']}: {row['reason'][:160]}")

        rows += run_cases(
            keys,
            jobs=options.jobs,
            samples=options.samples,
            timeout=options.timeout,
            log_path=options.csv.with_suffix(".log"),
            on_row=record,
        )
    _write_csv(options.csv, rows)
    partial.unlink()
    command = "scripts/conformance " + " ".join(argv if argv is not None else sys.argv[1:])
    options.summary.write_text(summary(rows, command.strip()))
    print(options.summary.read_text())
    if options.readme:
        update_readme(options.summary.read_text())
    statuses = Counter(r["status"] for r in rows)
    return 1 if statuses["WRONG"] or statuses["CRASH"] else 0


if __name__ == "__main__":
    sys.exit(main())
