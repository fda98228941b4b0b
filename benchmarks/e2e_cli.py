"""End to end: the `redline review` command as a user runs it, against `git diff`.

Builds two repositories: a branch changing 2,000 C files (no analyzer applies, so this is the
pipeline's own cost: git, units, rules, task record, report) and a small repository with one
uncommitted edit. Then, alternating in the same run (the machine's load moves both sides alike),
each as its own process:

  - `git diff main...feature`
  - `redline review --branch main --format json` (target: at most 3 × `git diff`)
  - `redline review` on the 1-file uncommitted edit (target: at most 0.3 s)
  - `redline review --branch main --estimate --model openai/gpt-4o-mini` (fewer rounds: slow
    before); once more with every socket connect refused, to show that it sends nothing.

`--before PATH` times a second source tree too (e.g. a `git worktree add` of the base commit):
its `server/` goes first on PYTHONPATH, with this interpreter and its installed dependencies,
so both trees run the same way, side by side.

    python benchmarks/e2e_cli.py [--files 2000] [--rounds 7] [--estimate-rounds 3] [--before DIR]

Redline's modules are compiled first (`compileall`, as `make setup` does): PYTHONDONTWRITEBYTECODE
would otherwise make every run compile its imports again.
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from gitrepo import GitRepo

HERE = Path(__file__).resolve().parent

MODEL = "openai/gpt-4o-mini"
RATIO_TARGET = 3.0
SMALL_TARGET_S = 0.3
ESTIMATE = ("review", "--branch", "main", "--estimate", "--model", MODEL, "-q")
FUNCTIONS_PER_FILE = 20

# Every socket connect refused, then the CLI: a network attempt ends the run with an error.
_NO_NETWORK = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("e2e_cli benchmark: network access attempted")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
from redline.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def target_line(name: str, value: str, op: str, limit: str, met: bool) -> str:
    """As benchmarks/_change.py prints them (not imported: it loads the model pipeline)."""
    return f"TARGET {name} {value} {op} {limit}: {'met' if met else 'MISSED'}"


def c_file(index: int, variant: int) -> str:
    rng = random.Random(index)
    out = [f"/* file {index} */", "#include <stdio.h>", ""]
    for f in range(FUNCTIONS_PER_FILE):
        out += [
            "",
            f"int func_{f}(int x, int y) {{",
            f"    int t = x * {rng.randint(1, 9)} + y;",
            f"    t += {variant * rng.randint(0, 3)};",
            f"    return t - {f};",
            "}",
        ]
    return "\n".join(out) + "\n"


def build_branch_repo(root: Path, files: int) -> GitRepo:
    repo = GitRepo(root)
    for i in range(files):
        repo.write(f"src{i // 100}/f_{i}.c", c_file(i, 0))
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(files):
        repo.write(f"src{i // 100}/f_{i}.c", c_file(i, 1 + i % 3))
    repo.commit("feature")
    return repo


def build_small_repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    for i in range(50):
        repo.write(f"src/f_{i}.c", c_file(i, 0))
    repo.commit("base")
    repo.write("src/f_3.c", c_file(3, 2))  # one uncommitted edit
    return repo


def redline_command() -> list[str]:
    """The console script installed next to this interpreter (what a user types), else -m."""
    script = Path(sys.executable).with_name("redline")
    return [str(script)] if script.exists() else [sys.executable, "-m", "redline.cli"]


def environment(tmp: Path, source: Path | None) -> dict[str, str]:
    """No user configuration, no REDLINE_* from the caller's shell, a private cache directory;
    with `source`, that tree's `server/` first on the import path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CONFIG"] = "/dev/null"  # no user file
    env["REDLINE_CACHE_DIR"] = str(tmp / ("cache-before" if source else "cache"))
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PYTHONPATH"):
        env.pop(key, None)
    if source is not None:
        env["PYTHONPATH"] = str(source / "server")
    return env


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(
            f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}"
        )
    return elapsed


def estimate_without_network(cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", _NO_NETWORK, *ESTIMATE],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or "Nothing was sent to the model." not in proc.stdout:
        return f"FAILED (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"
    return "no connection attempted"


def prompt_tokens(cwd: Path, env: dict[str, str]) -> str:
    out = subprocess.run(
        [*redline_command(), *ESTIMATE],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [line for line in out.splitlines() if line.startswith(("Prompt tokens", "Planned"))]
    return "; ".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--estimate-rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a source tree to time side by side")
    args = parser.parse_args()

    trees = {"after": None} | ({"before": args.before.resolve()} if args.before else {})
    for source in trees.values():
        server = (source or HERE.parent) / "server" / "redline"
        compileall.compile_dir(str(server), quiet=1)

    with tempfile.TemporaryDirectory(prefix="redline-e2e-") as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.perf_counter()
        big = build_branch_repo(tmp / "big", args.files).root
        small = build_small_repo(tmp / "small").root
        print(f"repositories: {args.files} changed C files + a 1-file edit, built in "
              f"{time.perf_counter() - t0:.1f}s")  # fmt: skip

        redline = redline_command()
        envs = {name: environment(tmp, source) for name, source in trees.items()}
        jobs: dict[str, Callable[[], float]] = {
            "git diff main...feature": lambda: timed(
                ["git", "diff", "--no-ext-diff", "main...feature"], big
            )
        }
        for name, env in envs.items():
            jobs[f"redline review --branch ({name})"] = lambda env=env: timed(
                [*redline, "review", "--branch", "main", "--format", "json", "-q"], big, env
            )
            jobs[f"redline review, 1-file edit ({name})"] = lambda env=env: timed(
                [*redline, "review", "-q"], small, env
            )
        slow: dict[str, Callable[[], float]] = {
            f"redline review --estimate --model ({name})": lambda env=env: timed(
                [*redline, *ESTIMATE], big, env
            )
            for name, env in envs.items()
        }

        for job in [*jobs.values(), *slow.values()]:  # warm: file cache, bytecode, git's index
            job()
        times: dict[str, list[float]] = {name: [] for name in [*jobs, *slow]}
        for round_ in range(args.rounds):
            for name, job in jobs.items():
                times[name].append(job())
            if round_ < args.estimate_rounds:
                for name, job in slow.items():
                    times[name].append(job())
        network = estimate_without_network(big, envs["after"])
        tokens = {name: prompt_tokens(big, env) for name, env in envs.items()}

    med = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"{name:<48} median {med[name] * 1000:8.1f} ms  ({len(values)} runs)")
    git = med["git diff main...feature"]
    for name in envs:
        ratio = med[f"redline review --branch ({name})"] / git
        print(f"ratio redline review / git diff ({name}){'':<9} {ratio:.2f}")
    for name, line in tokens.items():
        print(f"estimate ({name}): {line}")
    print(f"estimate with every socket connect refused: {network}")
    print("load average (1, 5, 15 min)    " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    ratio = med["redline review --branch (after)"] / git
    small_s = med["redline review, 1-file edit (after)"]
    print(target_line("e2e review / git diff", f"{ratio:.2f}", "<=", f"{RATIO_TARGET}",
                      ratio <= RATIO_TARGET))  # fmt: skip
    print(target_line("e2e 1-file review", f"{small_s:.3f} s", "<=", f"{SMALL_TARGET_S} s",
                      small_s <= SMALL_TARGET_S))  # fmt: skip
    return 1 if network != "no connection attempted" else 0


if __name__ == "__main__":
    raise SystemExit(main())
