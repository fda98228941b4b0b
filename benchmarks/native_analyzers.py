"""The native analyzers (oxlint, shellcheck, hadolint, zizmor) as the CLI runs them.

A temporary git repository holds FILES generated files of each kind (TypeScript, shell scripts,
Dockerfiles, GitHub workflows); the change edits every one of them (uncommitted). Each round
times, one after the other in the same loop:

- `redline review --format json` with one native analyzer on and everything else off, for each
  of the four (its 100-file change alone): wall clock, and the tool's own `seconds` from the
  coverage;
- the same with all four on (a 400-file mixed change), against the slowest single one;
- the 1-file uncommitted review (a Python file and a TypeScript file edited in a 50-file
  repository) before (the tree at BEFORE_REV, from `git archive`, on PYTHONPATH) and after.

    python benchmarks/native_analyzers.py [--rounds 5] [--files 100]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[1]
REDLINE = Path(sys.executable).with_name("redline")
NATIVE = ("oxlint", "shellcheck", "hadolint", "zizmor")
BEFORE_REV = "6b46995"  # the branch point of issue 26's native analyzers
MIXED_TARGET = 1.5  # the mixed review costs at most this times the slowest analyzer alone
SMALL_TARGET_S = 0.3


def ts(i: int, variant: int) -> str:
    body = "".join(
        f"export function f{i}_{k}(x: number, y: string): number {{\n"
        f"  const z = x * {k + variant};\n  if (y.length > {k}) {{ return z + {variant}; }}\n"
        f"  return x == NaN ? {variant} : z;\n}}\n"
        for k in range(20)
    )
    return f"// module {i}\n{body}"


def sh(i: int, variant: int) -> str:
    body = "".join(
        f'step_{k}() {{\n  local dir="$1"\n  cd "$dir/{variant}"\n'
        f'  echo "step {k} {variant}" >> log_{i}\n}}\n'
        for k in range(20)
    )
    return f"#!/bin/bash\nset -eu\n{body}step_1 /tmp\n"


def dockerfile(i: int, variant: int) -> str:
    runs = "".join(f"RUN echo {k} {variant} && cd /srv && make t{k}\n" for k in range(10))
    return f'FROM python:3.{i % 13}\nWORKDIR /srv\n{runs}CMD ["python", "app_{i}.py"]\n'


def workflow(i: int, variant: int) -> str:
    steps = "".join(f"      - run: echo step {k} {variant}\n" for k in range(10))
    return (
        f"name: wf{i}\non:\n  issues:\njobs:\n  job{i}:\n    runs-on: ubuntu-latest\n"
        f"    steps:\n      - uses: actions/checkout@v4\n"
        f'      - run: echo "${{{{ github.event.issue.title }}}} {variant}"\n{steps}'
    )


KINDS = {
    "oxlint": (lambda i: f"web/m{i}.ts", ts),
    "shellcheck": (lambda i: f"scripts/s{i}.sh", sh),
    "hadolint": (lambda i: f"docker/d{i}/Dockerfile", dockerfile),
    "zizmor": (lambda i: f".github/workflows/w{i}.yml", workflow),
}


def build_repo(root: Path, files: int) -> GitRepo:
    repo = GitRepo(root)
    for path_of, make in KINDS.values():
        for i in range(files):
            repo.write(path_of(i), make(i, 0))
    repo.commit("base")
    for path_of, make in KINDS.values():
        for i in range(files):
            repo.write(path_of(i), make(i, 1))
    return repo


def build_small_repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    for i in range(25):
        repo.write(f"src/m{i}.py", f"def f{i}(x):\n    return x + {i}\n")
        repo.write(f"web/m{i}.ts", ts(i, 0))
    repo.commit("base")
    repo.write("src/m3.py", "def f3(x):\n    return x + 4\n")
    repo.write("web/m3.ts", ts(3, 1))
    return repo


def user_file(tmp: Path, on: set[str], python: bool) -> Path:
    path = tmp / f"user-{'-'.join(sorted(on)) or 'none'}-{int(python)}.toml"
    lines = [f"{name} = {'true' if name in on else 'false'}" for name in NATIVE]
    lines += [
        f"ruff = {'true' if python else 'false'}",
        f"bandit = {'true' if python else 'false'}",
    ]
    path.write_text("[analyzers]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def env_for(tmp: Path, config: Path | None, source: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CONFIG"] = str(config) if config else os.devnull
    env["REDLINE_CACHE_DIR"] = str(tmp / ("cache-before" if source else "cache"))
    env.pop("PYTHONPATH", None)
    if source is not None:
        env["PYTHONPATH"] = str(source / "server")
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU: dict[str, list[float]] = {}


def review(repo: Path, env: dict[str, str]) -> tuple[float, dict[str, float], int]:
    """Wall-clock seconds, each analyzer's own seconds (coverage), findings; the CPU seconds of
    the review and every process it started go to CPU (less sensitive to a loaded machine)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(
        [str(REDLINE), "review", "--repo", str(repo), "--format", "json"],
        env=env,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    CPU.setdefault(f"{repo}|{env['REDLINE_CONFIG']}|{env.get('PYTHONPATH')}", []).append(
        _children_cpu() - cpu
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"review exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    data = json.loads(proc.stdout)
    tools = {
        run["name"]: run.get("seconds") or 0.0
        for run in data["coverage"]["analyzers"]
        if run["status"] in ("ok", "partial")
    }
    return elapsed, tools, len(data["findings"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redline-bench-native-") as tmp_name:
        tmp = Path(tmp_name)
        big = build_repo(tmp / "big", args.files).root
        small = build_small_repo(tmp / "small").root
        before = tmp / "before"
        before.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", BEFORE_REV, "server"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        runs: dict[str, tuple[Path, dict[str, str]]] = {
            f"{name} alone ({args.files} files)": (
                big,
                env_for(tmp, user_file(tmp, {name}, python=False)),
            )
            for name in NATIVE
        }
        runs[f"all four ({4 * args.files} files)"] = (
            big,
            env_for(tmp, user_file(tmp, set(NATIVE), python=False)),
        )
        runs["1-file uncommitted (before)"] = (small, env_for(tmp, None, before))
        runs["1-file uncommitted (after)"] = (small, env_for(tmp, None))
        for repo, env in runs.values():  # warm: file cache, bytecode, git's index
            review(repo, env)
        wall: dict[str, list[float]] = {name: [] for name in runs}
        tool: dict[str, list[float]] = {name: [] for name in NATIVE}
        findings: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, (repo, env) in runs.items():
                elapsed, tools, count = review(repo, env)
                wall[name].append(elapsed)
                findings[name] = count
                if name.endswith(f"alone ({args.files} files)"):
                    analyzer = name.split()[0]
                    tool[analyzer].append(tools.get(analyzer, float("nan")))
        cpu = {
            name: statistics.median(CPU[f"{repo}|{env['REDLINE_CONFIG']}|{env.get('PYTHONPATH')}"])
            for name, (repo, env) in runs.items()
        }
    med = {name: statistics.median(values) for name, values in wall.items()}
    for name in runs:
        print(
            f"{name:<40} median {med[name] * 1000:8.1f} ms  CPU {cpu[name] * 1000:8.1f} ms  "
            f"findings {findings[name]}"
        )
    for name, values in tool.items():
        print(f"{name:<12} tool time (coverage) median {statistics.median(values) * 1000:8.1f} ms")
    slowest = max(med[f"{n} alone ({args.files} files)"] for n in NATIVE)
    ratio = med[f"all four ({4 * args.files} files)"] / slowest
    met = "met" if ratio <= MIXED_TARGET else "MISSED"
    print(f"TARGET mixed review / slowest analyzer alone {ratio:.2f} <= {MIXED_TARGET}: {met}")
    small_s = med["1-file uncommitted (after)"]
    met = "met" if small_s <= SMALL_TARGET_S else "MISSED"
    print(f"TARGET 1-file uncommitted review {small_s:.3f} s <= {SMALL_TARGET_S} s: {met}")
    print("load average (1, 5, 15 min)    " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
