"""The search for deleted files' names in the new tree: one `-e` per name vs one alternation.

A generated repository: `--files` modules of code that call each other's functions, and a
change that deletes `--deleted` modules of `--names-per-file` top-level functions each (40 is
what a deleted file gives at most: diff/deleted.MAX_SYMBOLS). For a growing number of searched
names, one after the other in the same loop, it times through the hardened git runner:

- before: `git grep -w -F -e n1 -e n2 …` (tools/code_tools.git_grep_words), what
  review/deleted.py ran until issue 26, bounded by the review's timeout (GREP_TIMEOUT);
- after: `git grep -w -E -e '(n1|n2|…)'` (git_grep_any_word), what it runs now;

and prints the medians side by side with the hits each found (the same lines), then the whole
offline review of the change (`redline review --range`, the installed CLI) with its coverage
notes. The cost of `before` grows with the names; `after` should stay flat.

`--before DIR` reviews the change with a second source tree too (e.g. `git archive <base> |
tar -x -C DIR`): its `server/` goes first on PYTHONPATH, with this interpreter.

    python benchmarks/deleted_search.py [--rounds 3] [--files 1500] [--deleted 60] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redline.errors import RedlineError
from redline.git.process import ProcessResult
from redline.git.runner import GitRunner
from redline.review.deleted import GREP_MAX_OUTPUT, GREP_TIMEOUT
from redline.tools.code_tools import git_grep_any_word, git_grep_words, grep_hits

from gitrepo import GitRepo

REDLINE = Path(sys.executable).with_name("redline")
NAME_COUNTS = (50, 200, 1000, 2400)
TARGET_SECONDS = 2.0  # the search for every name, on this machine's loaded two cores


def _module(index: int, names: int, total: int) -> str:
    """A module defining `names` functions, each calling one of another module's."""
    out = [f'"""Generated module {index}."""\n\nimport os\n\n']
    for n in range(names):
        other = (index * 7 + n) % total
        out.append(
            f"def func_{index}_{n}(value, *, retries=3):\n"
            f"    # call a neighbour: {other}\n"
            f"    result = func_{other}_{(n + 1) % names}(value)\n"
            f"    return os.path.join(str(result), 'x{n}')\n\n\n"
        )
    return "".join(out)


def build(root: Path, files: int, deleted: int, names: int) -> list[str]:
    """The repository with tags a (all modules) and b (`deleted` of them gone, their callers
    kept); returns the deleted modules' names, in order."""
    repo = GitRepo(root)
    for index in range(files):
        repo.write(f"pkg/sub{index % 20}/mod_{index}.py", _module(index, names, files))
    repo.commit("all")
    repo.git("tag", "a")
    gone = list(range(0, files, max(1, files // deleted)))[:deleted]
    for index in gone:
        repo.git("rm", "-q", f"pkg/sub{index % 20}/mod_{index}.py")
    repo.commit("delete some modules")
    repo.git("tag", "b")
    return [f"func_{index}_{n}" for index in gone for n in range(names)]


def _time(
    search: Callable[..., ProcessResult], runner: GitRunner, root: Path, words: list[str]
) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        result = search(
            runner, root, words, rev="b", timeout=GREP_TIMEOUT, max_output=GREP_MAX_OUTPUT
        )
    except RedlineError as exc:
        return time.perf_counter() - start, f"cut short: {exc.message}"
    elapsed = time.perf_counter() - start
    return elapsed, f"{sum(1 for _ in grep_hits(result, 'b')):,} lines"


def review(root: Path, home: Path, source: Path | None) -> tuple[float, list[str], int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env |= {"REDLINE_CONFIG": os.devnull, "HOME": str(home), "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    if source is not None:
        env["PYTHONPATH"] = str(source / "server")
    env |= {"REDLINE_CACHE_DIR": str(home / "cache")}
    start = time.perf_counter()
    proc = subprocess.run(
        [str(REDLINE), "review", "--range", "a..b", "--format", "json", "-q"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"redline review failed ({proc.returncode}): {proc.stderr[-2000:]}")
    report = json.loads(proc.stdout)
    deleted = [f for f in report["findings"] if "redline:deleted-symbols" in f["sources"]]
    return elapsed, report["coverage"]["notes"], len(deleted)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=1500)
    parser.add_argument("--deleted", type=int, default=60)
    parser.add_argument("--names-per-file", type=int, default=40)
    parser.add_argument("--before", type=Path, help="another source tree, its review beside")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redline-deleted-bench-") as tmp:
        root = Path(tmp, "repo")
        words = build(root, args.files, args.deleted, args.names_per_file)
        size = sum(p.stat().st_size for p in root.rglob("*.py"))
        print(
            f"tree: {args.files - args.deleted} modules, {size / 1e6:.1f} MB; deleted: "
            f"{args.deleted} modules, {len(words)} names (timeout {GREP_TIMEOUT:g} s each)"
        )
        runner = GitRunner()
        print(f"{'names':>6}  {'before: -F, one -e per name':>40}  {'after: one alternation':>34}")
        last_after = 0.0
        for count in (n for n in NAME_COUNTS if n <= len(words)):
            chosen = words[:count]
            before: list[float] = []
            after: list[float] = []
            for _ in range(args.rounds):
                t_before, what_before = _time(git_grep_words, runner, root, chosen)
                before.append(t_before)
                t_after, what_after = _time(git_grep_any_word, runner, root, chosen)
                after.append(t_after)
                if what_before.startswith("cut short"):
                    break  # another round would only wait for the timeout again
            last_after = statistics.median(after)
            print(
                f"{count:>6}  {statistics.median(before):8.2f} s ({what_before:>20}) "
                f" {last_after:8.2f} s ({what_after:>20})"
            )
        home = Path(tmp, "home")
        home.mkdir()
        if args.before is not None:
            elapsed, notes, findings = review(root, home, args.before.resolve())
            print(f"redline review --range a..b (before): {elapsed:.2f} s, {findings} findings")
            for note in notes:
                print(f"    note: {note}")
        elapsed, notes, findings = review(root, home, None)
        print(f"redline review --range a..b: {elapsed:.2f} s, {findings} deleted-symbol findings")
        for note in notes:
            print(f"    note: {note}")
        met = last_after <= TARGET_SECONDS and not any("cut short" in n for n in notes)
        print(
            f"TARGET deleted-file search of {len(words)} names {last_after:.2f} s <= "
            f"{TARGET_SECONDS:g} s, not cut short: {'met' if met else 'MISSED'}"
        )
        print("load average (1, 5, 15 min)    " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
