"""What learnings cost a review (issue 27), side by side in one run.

1. The format: parsing and rendering `.redline/learnings.md` at its cap (200 learnings, each
   with two globs, a language and a rule, ~50 KB).
2. Scope matching: the learnings of each of 1,000 files, with 20 and with 200 learnings (what
   a model review asks once per file).
3. The offline review of a branch that changes 20 Python files (the installed CLI, a real git
   repository): no learnings file, 20 learnings, 200 learnings on the base — median of 5 runs
   each, interleaved so that machine noise falls on all three alike.

    python benchmarks/learnings.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from redline.memory.learning_files import LearningFile
from redline.memory.learnings import COMMITTED_FILE, MAX_LEARNINGS, make_learning, parse, render
from redline.review.learnings_use import ReviewLearnings

REDLINE = Path(sys.executable).with_name("redline")
RUNS = 5
FILES = 20
TARGET_REVIEW_MS = 50  # a learnings file at its cap may add at most this to an offline review


def learnings(n: int) -> list:
    return [
        make_learning(
            f"learning {i}: this team's convention about module {i} is written down here",
            [f"pkg{i}/**", "*.py"],
            "python",
            ["S311"],
        )
        for i in range(n)
    ]


def format_costs() -> None:
    text = render(learnings(MAX_LEARNINGS))
    start = time.perf_counter()
    for _ in range(20):
        parsed = parse(text)
    took = (time.perf_counter() - start) / 20
    start = time.perf_counter()
    for _ in range(20):
        render(parsed.learnings)
    rendered = (time.perf_counter() - start) / 20
    print(f"format: {MAX_LEARNINGS} learnings, {len(text):,} bytes: parse {took * 1000:.1f} ms, "
          f"render {rendered * 1000:.1f} ms")  # fmt: skip


def scope_costs() -> None:
    paths = [f"pkg{i}/mod{j}.py" for i in range(50) for j in range(20)]
    for n in (20, MAX_LEARNINGS):
        review = ReviewLearnings(files=[LearningFile("committed", "x", learnings(n))])
        start = time.perf_counter()
        for path in paths:
            review.for_file(path)
        took = (time.perf_counter() - start) / len(paths)
        print(f"scope: {n} learnings: {took * 1000:.3f} ms a file ({len(paths):,} files)")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def make_repo(root: Path, n: int) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.invalid")
    git(root, "config", "user.name", "bench")
    for i in range(FILES):
        (root / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    if n:
        (root / ".redline").mkdir()
        (root / COMMITTED_FILE).write_text(render(learnings(n)), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "feature")
    for i in range(FILES):
        (root / f"mod{i}.py").write_text(
            f"import random\n\n\ndef f{i}():\n    return random.random() + {i}\n"
        )
    git(root, "commit", "-qam", "change")


def review_ms(root: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [str(REDLINE), "review", "--branch", "main", "--quiet", "--format", "json"],
        cwd=root, env=env, check=True, capture_output=True,
    )  # fmt: skip
    return (time.perf_counter() - start) * 1000


def review_costs() -> None:
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
        base = Path(tmp)
        (base / "user.toml").write_text("")
        env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
        env.update(
            REDLINE_CONFIG=str(base / "user.toml"),
            REDLINE_CACHE_DIR=str(base / "cache"),
            XDG_DATA_HOME=str(base / "data"),
        )
        sizes = (0, 20, MAX_LEARNINGS)
        for n in sizes:
            make_repo(base / f"r{n}", n)
            review_ms(base / f"r{n}", env)  # warm-up: the analyzers' first run
        times: dict[int, list[float]] = {n: [] for n in sizes}
        for _ in range(RUNS):
            for n in sizes:
                times[n].append(review_ms(base / f"r{n}", env))
        medians = {n: statistics.median(t) for n, t in times.items()}
        for n in sizes:
            print(f"offline review, {FILES} files, {n} learnings: {medians[n]:.0f} ms (median "
                  f"of {RUNS}; {', '.join(f'{t:.0f}' for t in times[n])})")  # fmt: skip
        extra = medians[MAX_LEARNINGS] - medians[0]
        verdict = "met" if extra <= TARGET_REVIEW_MS else "MISSED"
        print(f"TARGET learnings at the cap add ≤ {TARGET_REVIEW_MS} ms to an offline review: "
              f"{extra:+.0f} ms ({verdict})")  # fmt: skip


if __name__ == "__main__":
    format_costs()
    scope_costs()
    review_costs()
