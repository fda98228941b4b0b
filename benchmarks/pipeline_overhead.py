"""Pipeline overhead: Redline's scope + units + rules + Markdown vs plain `git diff`.

Builds a synthetic repository whose branch changes 1,000 files (~50,000 changed lines), then
times, alternating in the same run, (a) `git diff main...feature` and (b) Redline's branch scope,
unitizer, rule layer and Markdown rendering with the analyzers off. Prints the medians, their
ratio (target ≤ 2.0) and the peak memory of the Redline stage.

    python benchmarks/pipeline_overhead.py [--files 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redline.config_models import Settings
from redline.git.runner import GitRunner
from redline.report import render
from redline.requests import ScopeKind, ScopeRequest
from redline.review.pipeline import plan_review, run_review

from gitrepo import GitRepo

LINES_PER_FILE = 120


def _module(rng: random.Random, index: int, variant: int) -> str:
    out = [f'"""Module {index}."""', "", "import math", ""]
    for f in range(LINES_PER_FILE // 6):
        out += [
            "",
            f"def func_{f}(x, y):",
            f"    total = x * {rng.randint(1, 9)} + y",
            f"    value = math.sqrt(abs(total)) + {variant * rng.randint(0, 3)}",
            f"    return value - {f}",
        ]
    return "\n".join(out) + "\n"


def build_repo(root: Path, files: int) -> GitRepo:
    repo = GitRepo(root)
    rng = random.Random(7)
    for i in range(files):
        repo.write(f"pkg{i // 100}/mod_{i}.py", _module(random.Random(i), i, 0))
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(files):
        # Same seed per file, different variant: about a quarter of the lines change.
        repo.write(f"pkg{i // 100}/mod_{i}.py", _module(random.Random(i), i, 1 + rng.randint(0, 2)))
    repo.commit("feature")
    return repo


def time_git_diff(root: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["git", "diff", "--no-ext-diff", "--no-textconv", "main...feature"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def time_redline(root: Path, settings: Settings) -> tuple[float, int, int, dict[str, float]]:
    """Total seconds, units, Markdown length, and seconds per phase. plan_review is one phase:
    scope, units and rules overlap inside it (the diff is parsed while git writes it)."""
    start = time.perf_counter()
    plan = plan_review(root, ScopeRequest(ScopeKind.BRANCH, "main"), settings)
    planned = time.perf_counter()
    review = run_review(plan, settings)
    reviewed = time.perf_counter()
    text = render(review, "markdown")
    end = time.perf_counter()
    phases = {
        "plan_review (scope+units+rules)": planned - start,
        "run_review": reviewed - planned,
        "render markdown": end - reviewed,
    }
    return end - start, len(plan.units), len(text), phases


def time_view(root: Path) -> float:
    """Building the private repository view every review's git runs against (git/view.py)."""
    start = time.perf_counter()
    runner = GitRunner()
    runner.view(root)
    elapsed = time.perf_counter() - start
    runner.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    settings = Settings.model_validate({"analyzers": {"ruff": False, "bandit": False}})
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
        root = Path(tmp) / "repo"
        t0 = time.perf_counter()
        repo = build_repo(root, args.files)
        numstat = repo.git("diff", "--numstat", "main...feature").splitlines()
        added = sum(int(line.split("\t")[0]) for line in numstat)
        removed = sum(int(line.split("\t")[1]) for line in numstat)
        print(
            f"repository: {len(numstat)} files changed, +{added} −{removed} "
            f"({added + removed} changed lines), built in {time.perf_counter() - t0:.1f}s"
        )

        # Warm both paths once (imports, filesystem cache), then alternate.
        time_git_diff(root)
        time_redline(root, settings)
        git_times: list[float] = []
        redline_times: list[float] = []
        view_times: list[float] = []
        phase_times: dict[str, list[float]] = {}
        units = 0
        for _ in range(args.rounds):
            git_times.append(time_git_diff(root))
            elapsed, units, _chars, phases = time_redline(root, settings)
            redline_times.append(elapsed)
            view_times.append(time_view(root))
            for name, seconds in phases.items():
                phase_times.setdefault(name, []).append(seconds)

        tracemalloc.start()
        time_redline(root, settings)
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

    git_med = statistics.median(git_times)
    red_med = statistics.median(redline_times)
    ratio = red_med / git_med
    print(f"git diff main...feature        median {git_med * 1000:8.1f} ms  ({args.rounds} runs)")
    print(f"redline scope+units+rules+md   median {red_med * 1000:8.1f} ms  ({units} units)")
    for name, times in phase_times.items():
        print(f"  {name:<32} median {statistics.median(times) * 1000:8.1f} ms")
    view_ms = statistics.median(view_times) * 1000
    print(f"  {'private repository view (in plan)':<32} median {view_ms:8.1f} ms")
    spread = ", ".join(f"{t / g:.2f}" for t, g in zip(redline_times, git_times, strict=True))
    print(f"ratio per round                {spread}")
    print(f"ratio redline / git diff       {ratio:.2f}  (target <= 2.0)")
    print(f"peak Python memory (tracemalloc, redline stage)  {peak / 1e6:.1f} MB")
    # Both sides share the machine's cores (git, cat-file and Python run at once): other load
    # moves the ratio, so say how busy the machine was.
    print("load average (1, 5, 15 min)    " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
