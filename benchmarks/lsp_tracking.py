"""The finding tracker's cost per keystroke, with and without findings waiting to come back.

`FindingTracker.apply_change` runs on the language server's event loop for every `didChange`
entry, so its cost is a keystroke's. Since an undo can bring a finding back (lsp/revival.py),
stale findings and withdrawn ones (kept, at most `MAX_WITHDRAWN` per document) are re-checked on
the lines an edit's new text is on. Three workloads on a 10,000-line document with 200 findings
(one every 50 lines, each quoting its own line):

- **typing**: 2,000 one-character inserts at places spread over the document, none on a
  finding's line — the usual keystroke (nothing stale or withdrawn);
- **typing, 100 withdrawn + 50 stale**: the same after 100 finding lines were deleted and 50
  others edited, so every keystroke re-checks 150 candidates;
- **dd / u**: 100 pairs deleting a finding's whole line and putting it back (a line-range
  client's `dd` and `u`), then how many of the 200 findings are shown.

Each timing is one `apply_change` (time.perf_counter, the collector off: a collection says
nothing about the tracker). `--baseline REV` runs the same in a child process on the server of
git revision REV of this checkout (extracted with `git archive`), for a before/after table.

    python benchmarks/lsp_tracking.py [--baseline REV]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.model import Finding

LINES = 10_000
EVERY = 50
TYPED = 2_000


def _finding(code: str, line: int) -> Finding:
    from redline.model import Category, Finding, Severity, finding_id

    return Finding(
        id=finding_id("app.py", code, "Security", str(line)),
        file="app.py",
        line=line,
        end_line=line,
        severity=Severity.HIGH,
        category=Category.SECURITY,
        title=str(line),
        comment="c",
        existing_code=code,
    )


def _percentiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    pick = lambda p: values[min(len(values) - 1, int(len(values) * p / 100))]  # noqa: E731
    return {"p50_us": pick(50) * 1e6, "p99_us": pick(99) * 1e6, "max_us": values[-1] * 1e6}


def measure() -> dict[str, dict[str, float]]:
    """The three workloads on the `redline` importable here."""
    from redline.lsp.textlines import Range
    from redline.lsp.tracking import FindingTracker

    uri = "file:///bench/app.py"
    lines = [f"value_{i} = compute({i}) + other_{i}" for i in range(LINES)]
    text = "\n".join(lines) + "\n"
    findings = [_finding(lines[i], i + 1) for i in range(0, LINES, EVERY)]

    def fresh() -> FindingTracker:
        tracker = FindingTracker()
        tracker.set_findings(uri, text, findings)
        return tracker

    def typing(tracker: FindingTracker) -> list[float]:
        timings = []
        for k in range(TYPED):
            line = 10 + (k * 37) % (LINES - 200)
            if line % EVERY == 0:
                line += 1  # never a finding's line
            start = time.perf_counter()
            tracker.apply_change(uri, Range(line, 3, line, 3), "x")
            timings.append(time.perf_counter() - start)
        return timings

    out: dict[str, dict[str, float]] = {}
    gc.collect()
    gc.disable()
    try:
        out["typing"] = _percentiles(typing(fresh()))

        tracker = fresh()
        # Bottom up, so the line numbers above stay valid: 100 deleted, then 50 edited.
        for i in reversed(range(0, 100 * EVERY, EVERY)):
            tracker.apply_change(uri, Range(i, 0, i + 1, 0), "")
        for j in range(50):
            line = (100 + j) * EVERY - 100  # the 100 deleted lines moved these up by 100
            tracker.apply_change(uri, Range(line, 0, line, 0), "# ")
        out["typing, 100 withdrawn + 50 stale"] = _percentiles(typing(tracker))

        tracker = fresh()
        timings = []
        for k in range(100):
            i = ((k * 7) % 200) * EVERY
            for rng, new in ((Range(i, 0, i + 1, 0), ""), (Range(i, 0, i, 0), lines[i] + "\n")):
                start = time.perf_counter()
                tracker.apply_change(uri, rng, new)
                timings.append(time.perf_counter() - start)
        out["dd / u"] = _percentiles(timings)
        out["dd / u"]["shown_after"] = len(tracker.visible(uri))
    finally:
        gc.enable()
    return out


def baseline(rev: str) -> dict[str, dict[str, float]]:
    checkout = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="redline-bench-tracking-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(checkout), "archive", rev, "server"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = dict(os.environ, PYTHONPATH=str(Path(tmp) / "server"))
        done = subprocess.run(
            [sys.executable, __file__, "--json"], env=env, check=True, capture_output=True
        )
    result: dict[str, dict[str, float]] = json.loads(done.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also measure git revision REV")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(measure()))
        return 0
    runs = []
    if args.baseline:
        runs.append((f"before {args.baseline[:7]}", baseline(args.baseline)))
    runs.append(("after", measure()))
    print(
        f"finding tracker, one apply_change — {LINES:,} lines, {LINES // EVERY} findings, "
        f"{TYPED:,} keystrokes typed"
    )
    print(f"  {'server':16}{'workload':36}{'p50 µs':>9}{'p99 µs':>9}{'max µs':>9}{'shown':>7}")
    for label, result in runs:
        for name, row in result.items():
            shown = f"{int(row['shown_after'])}" if "shown_after" in row else ""
            print(
                f"  {label:16}{name:36}{row['p50_us']:>9.1f}{row['p99_us']:>9.1f}"
                f"{row['max_us']:>9.1f}{shown:>7}"
            )
    print("  shown: findings shown after the 100 dd / u pairs (of 200)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
