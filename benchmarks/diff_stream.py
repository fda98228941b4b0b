"""The diff stream's own cost (git/stream.py DiffStream: section cuts, the per-file cap, Redline's
state files left out, CR-broken files re-diffed), on synthetic diffs, beside another source
tree in the same run.

Three diffs of about `--mb` MB each: LF files only; CRLF files (a "\\r" on every line, which the
CR check must pass over without re-diffing); and the LF diff with a `.redline/dismissed.toml`
section and a CR-only file among its sections. Each round feeds each diff, in 64 KiB chunks as
git writes them, to a fresh DiffStream in a subprocess per source tree, alternating the trees;
it prints the median seconds per diff and tree, and their ratio.

`--before DIR` is another source tree (e.g. `git archive <base> server | tar -x -C DIR`): its
`server/` goes first on PYTHONPATH.

    python benchmarks/diff_stream.py [--mb 20] [--rounds 5] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TIMER = """
import sys, time
from redline.git.stream import DiffStream
data = open(sys.argv[1], "rb").read()
best = []
stream = DiffStream(None, None, 10 * 1024 * 1024)
start = time.perf_counter()
for i in range(0, len(data), 65536):
    stream.take(data[i : i + 65536])
stream.flush()
text, stats = stream.text(), stream.stats()
print(time.perf_counter() - start, stats.files, stats.added)
"""


def _section(name: str, lines: int, eol: str) -> str:
    body = "".join(f"+    value_{i} = compute({i}, 'x'){eol}\n" for i in range(lines))
    head = f"diff --git a/{name} b/{name}\nnew file mode 100644\nindex 0000000..1111111\n"
    return head + f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1,{lines} @@\n" + body


def _diffs(mb: int, out: Path) -> dict[str, Path]:
    per_file = 200
    files = max(1, mb * 1024 * 1024 // (per_file * 40))
    lf = "".join(_section(f"pkg/m{i}.py", per_file, "") for i in range(files))
    crlf = "".join(_section(f"pkg/m{i}.py", per_file, "\r") for i in range(files))
    cr_file = "diff --git a/mac.py b/mac.py\nnew file mode 100644\nindex 0000000..2222222\n"
    cr_file += "--- /dev/null\n+++ b/mac.py\n@@ -0,0 +1 @@\n+" + "\r".join(
        f"line_{i} = {i}" for i in range(500)
    )
    cr_file += "\n\\ No newline at end of file\n"
    mixed = _section(".redline/dismissed.toml", 5, "") + lf + cr_file
    paths = {}
    for name, text in (("lf", lf), ("crlf", crlf), ("state+cr", mixed)):
        path = out / f"{name}.diff"
        path.write_bytes(text.encode())
        paths[name] = path
    return paths


def _run(tree: Path, diff: Path) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=str(tree / "server"))
    proc = subprocess.run(
        [sys.executable, "-c", _TIMER, str(diff)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, files, added = proc.stdout.split()
    return float(seconds), f"{files} files, +{added}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another source tree, run side by side")
    args = parser.parse_args()
    trees = {"this": ROOT}
    if args.before:
        trees = {"before": args.before, "this": ROOT}
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
        diffs = _diffs(args.mb, Path(tmp))
        times: dict[tuple[str, str], list[float]] = {}
        seen: dict[tuple[str, str], str] = {}
        for _ in range(args.rounds):
            for diff_name, diff in diffs.items():
                for tree_name, tree in trees.items():
                    seconds, what = _run(tree, diff)
                    times.setdefault((diff_name, tree_name), []).append(seconds)
                    seen[(diff_name, tree_name)] = what
        rows = []
        for diff_name, diff in diffs.items():
            size = diff.stat().st_size / 1e6
            medians = {t: statistics.median(times[(diff_name, t)]) for t in trees}
            row = {"diff": diff_name, "MB": round(size, 1)}
            row |= {f"{t} s": round(m, 4) for t, m in medians.items()}
            row |= {f"{t} totals": seen[(diff_name, t)] for t in trees}
            if "before" in medians:
                row["ratio"] = round(medians["this"] / medians["before"], 3)
            rows.append(row)
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
