"""Big changes: peak memory and the largest model request of `redline review --model`.

Builds repositories with one big change each and runs the installed CLI on them, as a user
would, against the scripted model server on 127.0.0.1 (which records the size of every request
body). Peak RSS is the redline process's own (its VmHWM, polled until it exits); the largest
peak among it and its children, as `/usr/bin/time -v` reports it, is printed too — git's own
memory for a 200 MB blob shows there, not in Redline's.

  - a small change (one function edited): the process's own floor (imports, litellm);
  - a single new file of 60 MB, and one of 200 MB (`--sizes`), over the read limit;
  - a many-file change (`--files` files of `--file-kb` KB each, every one within the limit).

Per case it prints the diff's size, the peak RSS, the largest request body, the exit code and
what the report says of the big file. Targets: no request over `llm.max_request_bytes`; a
skipped file never reaches a request; peak RSS at most the floor + `RSS_FACTOR` × the diff the
review keeps (the sections within the per-file cap; a cut section keeps only its header).

`--before DIR` runs a second source tree side by side (e.g. `git archive <base> | tar -x -C
DIR`): its `server/` goes first on PYTHONPATH, with this interpreter and its dependencies.

    python benchmarks/big_diff.py [--sizes 60,200] [--files 2000] [--file-kb 5] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from gitrepo import GitRepo
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

HERE = Path(__file__).resolve().parent
MB = 1024 * 1024
RSS_FACTOR = 3.0  # peak RSS over the floor, per byte of diff the review keeps
DEFAULT_MAX_FILE_BYTES = 1_000_000  # review.max_file_bytes' default
DEFAULT_MAX_REQUEST_BYTES = 4 * MB  # llm.max_request_bytes' default
MARKER = "BIG_FILE_MARKER_7f3a"  # in every line of the big file: must reach no request


def target_line(name: str, value: str, op: str, limit: str, met: bool) -> str:
    return f"TARGET {name} {value} {op} {limit}: {'met' if met else 'MISSED'}"


def redline_command() -> list[str]:
    script = Path(sys.executable).with_name("redline")
    return [str(script)] if script.exists() else [sys.executable, "-m", "redline.entry"]


def _base(repo: GitRepo) -> None:
    repo.write("app/util.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.checkout("-b", "feature")


def small_repo(root: Path) -> Path:
    repo = GitRepo(root)
    _base(repo)
    repo.write("app/util.py", "def add(a, b):\n    return a + b + 0\n")
    repo.commit("small edit")
    return root


def big_file_repo(root: Path, size: int) -> Path:
    repo = GitRepo(root)
    _base(repo)
    line = f'VALUE_{{:09d}} = "{MARKER} {"x" * 40}"\n'
    count = size // len(line.format(0))
    path = root / "data" / "table.py"
    path.parent.mkdir(parents=True)
    with path.open("w", encoding="ascii") as fh:
        for start in range(0, count, 100_000):
            fh.write("".join(line.format(i) for i in range(start, min(count, start + 100_000))))
    repo.commit("a big generated table")
    return root


def many_files_repo(root: Path, files: int, file_kb: int) -> Path:
    repo = GitRepo(root)
    _base(repo)
    body = "".join(
        f"def f_{j}(x):\n    return x * {j} + {j % 7}\n\n" for j in range(file_kb * 1024 // 40)
    )
    for i in range(files):
        repo.write(f"pkg{i // 100}/mod_{i}.py", f"# module {i}\n" + body)
    repo.commit("many files")
    return root


def diff_bytes(root: Path) -> int:
    """The size of `git diff main...feature`, counted as it streams (never held here: this
    process must stay small, its children's rusage starts from a fork of it)."""
    proc = subprocess.Popen(
        ["git", "diff", "--no-ext-diff", "main...feature"], cwd=root, stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    total = 0
    while chunk := proc.stdout.read(1 << 20):
        total += len(chunk)
    proc.wait()
    return total


@dataclass
class Run:
    rss: int  # the redline process's own peak RSS (VmHWM), bytes
    tree_rss: int  # the largest peak RSS among it and its children (git included), bytes
    seconds: float
    code: int
    largest_request: int
    requests: int
    marker_sent: bool
    skipped: list[tuple[str, str]]


def environment(tmp: Path, name: str, source: Path | None, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PYTHONPATH"):
        env.pop(key, None)
    config = tmp / f"config-{name}.toml"
    config.write_text("[llm]\nmax_retries = 0\ntimeout = 120\n", encoding="utf-8")
    env |= {
        "REDLINE_CONFIG": str(config),
        "REDLINE_CACHE_DIR": str(tmp / f"cache-{name}"),
        "REDLINE_API_KEY": "sk-benchmark-not-secret",
        "REDLINE_MODEL": "openai/scripted",
        "REDLINE_API_BASE": base_url,
    }
    if source is not None:
        env["PYTHONPATH"] = str(source / "server")
    return env


def _own_peak(parent: int, peak: list[int], done: threading.Event) -> None:
    """Poll the VmHWM (its own peak RSS, monotonic) of `parent`'s child — redline, under
    /usr/bin/time — until it exits."""
    children = Path(f"/proc/{parent}/task/{parent}/children")
    while not done.is_set():
        try:
            for pid in children.read_text().split():
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]) * 1024)
        except (OSError, ValueError):
            pass
        done.wait(0.02)


def review(root: Path, env: dict[str, str], llm: ScriptedLLM) -> Run:
    before = len(llm.sizes)
    report = root.parent / "report.json"
    usage = root.parent / "time.txt"
    cmd = ["/usr/bin/time", "-v", "-o", str(usage), *redline_command()]
    cmd += ["review", "--branch", "main", "-q", "--format", "json", "--output", str(report)]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    peak, done = [0], threading.Event()
    watcher = threading.Thread(target=_own_peak, args=(proc.pid, peak, done))
    watcher.start()
    proc.wait()
    done.set()
    watcher.join()
    seconds = time.perf_counter() - start
    # /usr/bin/time's figure: the largest peak among redline and the processes it waited for.
    tree = re.search(r"Maximum resident set size \(kbytes\): (\d+)", usage.read_text())
    code = re.search(r"Exit status: (\d+)", usage.read_text())
    bodies = llm.requests[before:]
    sizes = llm.sizes[before:]
    skipped: list[tuple[str, str]] = []
    if report.exists():
        data = json.loads(report.read_text(encoding="utf-8"))
        skipped = [(s["path"], s["reason"]) for s in data.get("coverage", {}).get("skipped", [])]
        report.unlink()
    return Run(
        rss=peak[0],
        tree_rss=int(tree.group(1)) * 1024 if tree else -1,
        seconds=seconds,
        code=int(code.group(1)) if code else proc.returncode,
        largest_request=max(sizes, default=0),
        requests=len(sizes),
        marker_sent=any(MARKER in json.dumps(b) for b in bodies),
        skipped=skipped,
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="60,200", help="big single files, in MB")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--file-kb", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another source tree, run side by side")
    args = parser.parse_args()
    trees = {"after": None} | ({"before": args.before.resolve()} if args.before else {})

    with tempfile.TemporaryDirectory(prefix="redline-bigdiff-") as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.perf_counter()
        cases: dict[str, Path] = {"small change": small_repo(tmp / "small" / "repo")}
        for mb in (int(s) for s in args.sizes.split(",") if s):
            cases[f"one {mb} MB file"] = big_file_repo(tmp / f"big{mb}" / "repo", mb * MB)
        many = f"{args.files} files × {args.file_kb} KB"
        cases[many] = many_files_repo(tmp / "many" / "repo", args.files, args.file_kb)
        print(f"repositories built in {time.perf_counter() - t0:.1f}s", flush=True)
        sizes = {name: diff_bytes(root) for name, root in cases.items()}

        results: dict[tuple[str, str], Run] = {}
        with ScriptedLLM(handler=ReviewScript()) as llm:
            envs = {n: environment(tmp, n, s, llm.base_url) for n, s in trees.items()}
            for case, root in cases.items():
                for name, env in envs.items():
                    run = review(root, env, llm)
                    results[(case, name)] = run
                    print(
                        f"{case:<24} {name:<6} diff {sizes[case] / MB:6.1f} MB  peak RSS "
                        f"{run.rss / MB:7.1f} MB (with git {run.tree_rss / MB:7.1f} MB)  "
                        f"largest request {run.largest_request / MB:7.2f} MB "
                        f"({run.requests} requests)  {run.seconds:6.1f} s  exit {run.code}  "
                        f"marker sent: {'yes' if run.marker_sent else 'no'}",
                        flush=True,
                    )
                    for path, reason in run.skipped:
                        if not path.startswith("pkg"):
                            print(f"{'':<34}skipped {path}: {reason}")

    floor = results[("small change", "after")].rss
    for (case, name), run in results.items():
        if case == "small change":
            continue
        over = run.rss - results[("small change", name)].rss
        cut = any("diff too large" in reason for _, reason in run.skipped)
        # A cut file keeps only its header: its diff, as kept, is next to nothing.
        ratio = "the file was cut" if cut else f"{over / sizes[case]:.1f} × the diff"
        print(
            f"{case} ({name}): peak RSS {over / MB:+.0f} MB over the small change's ({ratio})"
            + ("" if run.code == 0 else f"; exit {run.code}")
        )
    lines: list[str] = []
    for case, size in sizes.items():
        run = results[(case, "after")]
        big = case.startswith("one ")
        kept = 0 if big else size  # a cut section keeps its header only
        limit = floor + RSS_FACTOR * kept + 64 * MB
        lines.append(
            target_line(f"peak RSS, {case}", f"{run.rss / MB:.0f} MB", "<=",
                        f"{limit / MB:.0f} MB", run.rss <= limit)
        )  # fmt: skip
        lines.append(
            target_line(f"largest request, {case}", f"{run.largest_request / MB:.2f} MB", "<=",
                        f"{DEFAULT_MAX_REQUEST_BYTES / MB:.0f} MB",
                        run.largest_request <= DEFAULT_MAX_REQUEST_BYTES)
        )  # fmt: skip
        if big:
            lines.append(
                target_line(f"big file in a request, {case}", "yes" if run.marker_sent else "no",
                            "==", "no", not run.marker_sent)
            )  # fmt: skip
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
