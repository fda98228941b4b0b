"""Offline review of a ~25,000-line real Python change, as the CLI runs it, beside `git diff`.

The change is real code: the standard library's Python modules as CPython 3.10 ships them
(commit A) and as 3.12 ships them (commit B), from the pyenv installs on this machine, in a
temporary git repository. Of the modules both versions have (tests left out), those with at
least MIN_CHANGED changed lines are taken in path order until the change reaches TARGET_LINES,
so it looks like a large real pull request: a few dozen files, hundreds of lines each.

Each round times, one after the other in the same loop, `git diff A..B` and
`redline review --range A..B --format json` (a subprocess with the package's bytecode compiled,
an isolated configuration, no model) in three analyzer settings:

- default (bandit_scope=beyond_ruff): ruff on every file, bandit on the files whose added lines
  hold what one of its checks that ruff lacks looks for;
- bandit_scope=security_sensitive: bandit on the files with security-sensitive changes;
- bandit_scope=all: bandit on every file too (what every review did before);
- ruff only (bandit off), and no analyzers at all: what the rest of the review costs.

It prints the medians side by side, where bandit ran (its coverage line) and a TARGET line for
the default (≤ 0.5 s).

`--before DIR` adds the default setting run from a second source tree, in the same loop (e.g.
`git archive <base> | tar -x -C DIR`): its `server/` goes first on PYTHONPATH, with this
interpreter and its dependencies.

    python benchmarks/offline_review.py [--rounds 5] [--lines 25000] [--before DIR]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redline

TARGET_LINES = 25_000
MIN_CHANGED = 40
TARGET_SECONDS = 0.5
OLD, NEW = "3.10", "3.12"
REDLINE = Path(sys.executable).with_name("redline")
SETTINGS = {
    "default": {},
    "bandit_scope=security_sensitive": {"REDLINE_BANDIT_SCOPE": "security_sensitive"},
    "bandit_scope=all": {"REDLINE_BANDIT_SCOPE": "all"},
    "ruff only": {"REDLINE_BANDIT": "0"},
    "no analyzers": {"REDLINE_RUFF": "0", "REDLINE_BANDIT": "0"},
}


def stdlib(version: str) -> Path | None:
    """The pyenv install's standard library directory for `version` (newest patch release)."""
    try:
        root = subprocess.run(
            ["pyenv", "root"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        root = os.path.expanduser("~/.pyenv")
    candidates = sorted(Path(root, "versions").glob(f"{version}.*"))
    for base in reversed(candidates):
        lib = base / "lib" / f"python{version}"
        if lib.is_dir():
            return lib
    return None


class _Missing(Exception):
    """What the benchmark is built from is not on this machine."""


def modules(lib: Path) -> dict[str, Path]:
    """Repository path → file of the library's own Python modules (no tests, no site-packages)."""
    skip = {"test", "tests", "idle_test", "site-packages", "__pycache__"}
    out: dict[str, Path] = {}
    for path in lib.rglob("*.py"):
        rel = path.relative_to(lib)
        if not skip.intersection(rel.parts[:-1]):
            out[rel.as_posix()] = path
    return out


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def build_change(root: Path, lines: int) -> tuple[int, int]:
    """A repository at `root` whose tags a and b hold the chosen modules of OLD and NEW.
    Returns (files, changed lines)."""
    old_lib, new_lib = stdlib(OLD), stdlib(NEW)
    if old_lib is None or new_lib is None:
        raise _Missing(f"needs pyenv's CPython {OLD} and {NEW} (`pyenv install {OLD} {NEW}`)")
    old, new = modules(old_lib), modules(new_lib)
    common = sorted(set(old) & set(new))
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.invalid")
    git(root, "config", "user.name", "bench")
    git(root, "config", "commit.gpgsign", "false")

    def commit(files: dict[str, Path], tag: str) -> None:
        for rel in common:
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(files[rel], target)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", tag)
        git(root, "tag", tag)

    commit(old, "all-a")
    commit(new, "all-b")
    changed: dict[str, int] = {}
    for row in git(root, "diff", "--numstat", "all-a", "all-b").splitlines():
        added, removed, path = row.split("\t", 2)
        if added != "-":
            changed[path] = int(added) + int(removed)
    chosen: list[str] = []
    total = 0
    for path in sorted(changed):
        if changed[path] >= MIN_CHANGED and total < lines:
            chosen.append(path)
            total += changed[path]
    # The benchmark's own history: only the chosen modules, old then new.
    git(root, "checkout", "-q", "--orphan", "bench")
    git(root, "rm", "-rq", "--cached", ".")
    for path in common:
        (root / path).unlink()
    for tag, files in (("a", old), ("b", new)):
        for rel in chosen:
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(files[rel], target)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", tag)
        git(root, "tag", tag)
    return len(chosen), total


def env_for(home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env.update(
        {
            "REDLINE_CONFIG": os.devnull,
            "REDLINE_CACHE_DIR": str(home / "cache"),
            "HOME": str(home),
            "NO_COLOR": "1",
        }
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


def time_git_diff(root: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["git", "diff", "--no-ext-diff", "--no-textconv", "a..b"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def time_review(root: Path, env: dict[str, str]) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    proc = subprocess.run(
        [str(REDLINE), "review", "--range", "a..b", "--format", "json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"redline review failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lines", type=int, default=TARGET_LINES)
    parser.add_argument("--before", type=Path, help="another source tree, run side by side")
    args = parser.parse_args()
    # Bytecode compiled, as an installed CLI is after its first run.
    compileall.compile_dir(Path(redline.__file__).parent, quiet=1)
    if args.before is not None:
        compileall.compile_dir(args.before.resolve() / "server" / "redline", quiet=1)
    with tempfile.TemporaryDirectory(prefix="redline-offline-bench-") as tmp:
        root = Path(tmp, "repo")
        try:
            files, lines = build_change(root, args.lines)
        except _Missing as exc:
            print(f"skipped: {exc}")
            return 0
        home = Path(tmp, "home")
        home.mkdir()
        envs = {name: env_for(home, extra) for name, extra in SETTINGS.items()}
        if args.before is not None:
            source = str(args.before.resolve() / "server")
            envs["default, before"] = env_for(home, {"PYTHONPATH": source})
        print(f"change: CPython {OLD} -> {NEW} stdlib, {files} Python files, {lines} changed lines")
        reports: dict[str, dict[str, object]] = {}
        for name, env in envs.items():  # warm-up: page cache, bytecode
            _, reports[name] = time_review(root, env)
        git_times: list[float] = []
        times: dict[str, list[float]] = {name: [] for name in envs}
        for _ in range(args.rounds):
            git_times.append(time_git_diff(root))
            for name, env in envs.items():
                elapsed, reports[name] = time_review(root, env)
                times[name].append(elapsed)
        git_med = statistics.median(git_times)
        print(f"{'git diff a..b':<48} median {git_med * 1000:8.1f} ms  ({args.rounds} runs)")
        for name in envs:
            med = statistics.median(times[name])
            report = reports[name]
            findings = len(report["findings"])  # type: ignore[arg-type]
            print(
                f"{'redline review (' + name + ')':<48} median {med * 1000:8.1f} ms"
                f"  ({med / git_med:5.1f}x git diff, {findings} findings)"
            )
            for run in report["coverage"]["analyzers"]:  # type: ignore[index]
                message = f" ({run['message']})" if run["message"] else ""
                print(f"    {run['name']}: {run['status']}, {run['files']} files{message}")
        default = statistics.median(times["default"])
        met = default <= TARGET_SECONDS
        print(
            f"TARGET offline review of {lines} changed lines {default:.2f} s <= "
            f"{TARGET_SECONDS} s: {'met' if met else 'MISSED'}"
        )
        print("load average (1, 5, 15 min)    " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
