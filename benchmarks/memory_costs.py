"""What project memory costs: build time and size per 100,000 lines, a one-file refresh, the
reads of one review unit, and the review's wall time with memory built versus not.

The repository is real: aiohttp (about 100,000 lines of Python), cloned from the mirror on this
machine into a temporary directory (`--repo` for another), with an isolated cache
(REDLINE_CACHE_DIR) and configuration. Each figure is printed with the machine's load average
beside it: on a shared 2-core machine, other processes move every figure.

1. Build: the embedding model loaded (timed apart), then `build_memory` over the whole tree,
   in this process; lines counted in the files the index holds; size = the store's files.
2. Refresh after a one-file change: a function appended to one file (a typical one: the median
   number of symbols; and the file with the most), then `build_memory(paths=[file])` in this
   process with the model loaded (what the language server does on save), and the CLI
   `redline memory build -q FILE` as a user runs it (a new process: imports and model load
   included); plus a whole-tree refresh with nothing changed. Medians of `--rounds`.
3. Reads per review unit (measured before 2.): for a sample of functions, what the review
   context asks for each changed function — ProjectMemory.callers and ProjectMemory.similar
   (its text embedded) — median and 90th percentile over the functions.
4. Review wall time, memory built versus not, alternating in one loop (`--review-rounds` each,
   medians): the installed CLI `redline review --range C^..C` on the newest commit that
   changed 2 to 12 of the library's Python files, offline (no model), then with a model, the
   scripted server on 127.0.0.1 (tests/review_script.py answers each role) — model answers
   not cached (`review.cache = false`), so every call happens.

    python benchmarks/memory_costs.py [--repo DIR] [--rounds 5] [--review-rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
DEFAULT_REPO = Path("/work/.mirror/aio-libs+aiohttp/repo")
REDLINE = Path(sys.executable).with_name("redline")
PER = 100_000  # lines
TARGET_BUILD_S = 60.0
TARGET_BUILD_MB = 50.0
TARGET_REFRESH_MS = 300.0
TARGET_READ_MS = 20.0
READ_SAMPLE = 60

# Before numpy is imported: one BLAS thread (see the report; with OpenBLAS's default threads
# on this loaded machine one embedding took 1.9 s instead of 0.17 s). `--default-blas`
# measures what an unconfigured process gets.
if "--default-blas" not in sys.argv:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
_TMP = Path(tempfile.mkdtemp(prefix="redline-memory-costs-"))
os.environ["REDLINE_CACHE_DIR"] = str(_TMP / "cache-memory")  # before redline is imported
os.environ["HOME"] = str(_TMP / "home")
(_TMP / "home").mkdir()

from redline.config_models import MemorySettings  # noqa: E402
from redline.memory.build import build_memory  # noqa: E402
from redline.memory.embed import Embedder, load_embedder, symbol_text  # noqa: E402
from redline.memory.query import ProjectMemory  # noqa: E402
from redline.memory.store import store_path  # noqa: E402

from review_script import ReviewScript  # noqa: E402
from scripted_llm import ScriptedLLM  # noqa: E402


def load() -> str:
    return "load " + "/".join(f"{x:.1f}" for x in os.getloadavg())


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def target(name: str, value: str, op: str, limit: str, met: bool) -> str:
    return f"TARGET {name} {value} {op} {limit}: {'met' if met else 'MISSED'}"


def median_ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


def p90_ms(samples: list[float]) -> float:
    ordered = sorted(samples)
    return 1000 * ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def store_mb(root: Path, settings: MemorySettings) -> float:
    path = store_path(root, create_dir=False)
    files = [p for p in path.parent.glob(path.name + "*") if p.is_file()]  # -wal, -shm too
    return sum(p.stat().st_size for p in files) / 1e6


@dataclass
class Built:
    lines: int
    files: int
    symbols: int
    seconds: float
    model_seconds: float
    mb: float
    load: str


def build(root: Path, settings: MemorySettings) -> tuple[Built, Embedder]:
    start = time.perf_counter()
    embedder = load_embedder()
    model_seconds = time.perf_counter() - start
    report = build_memory(root, settings, embedder=embedder)
    memory = ProjectMemory.open(root, settings, embedder=embedder)
    assert memory is not None, "built, but ProjectMemory.open finds nothing"
    with memory:
        indexed = memory.store.indexed_files()
    lines = sum(len((root / p).read_bytes().splitlines()) for p in indexed)
    built = Built(
        lines, len(indexed), report.symbols, report.seconds, model_seconds,
        store_mb(root, settings), load(),
    )  # fmt: skip
    return built, embedder


def refresh_files(root: Path, settings: MemorySettings) -> dict[str, str]:
    """A typical file (the median number of symbols) and the one with the most."""
    memory = ProjectMemory.open(root, settings)
    assert memory is not None
    with memory:
        counts = {
            p: len(memory.store.symbols(path=p))
            for p in memory.store.indexed_files()
            if p.endswith(".py")
        }
    ranked = sorted((c, p) for p, c in counts.items() if c > 0)
    typical, largest = ranked[len(ranked) // 2], ranked[-1]
    return {
        f"typical file ({typical[0]} symbols)": typical[1],
        f"largest file ({largest[0]} symbols)": largest[1],
    }


def cli_env(cache: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PYTHONPATH"):
        env.pop(key, None)
    config = _TMP / "config.toml"
    config.write_text("[review]\ncache = false\n\n[llm]\nmax_retries = 0\ntimeout = 120\n")
    env |= {"REDLINE_CONFIG": str(config), "REDLINE_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    return env | (extra or {})


def refresh(root: Path, settings: MemorySettings, embedder: Embedder, rounds: int) -> list[str]:
    out: list[str] = []
    worst_in_process = 0.0
    for label, path in refresh_files(root, settings).items():
        inproc: list[float] = []
        cli: list[float] = []
        original = (root / path).read_bytes()
        for i in range(rounds):
            for how, times in (("in-process", inproc), ("cli", cli)):
                text = (
                    original + f"\n\ndef _bench_refresh_{how[:3]}_{i}(x):\n    return x\n".encode()
                )
                (root / path).write_bytes(text)
                start = time.perf_counter()
                if how == "cli":
                    subprocess.run(
                        [str(REDLINE), "memory", "build", "-q", path],
                        cwd=root,
                        env=cli_env(Path(os.environ["REDLINE_CACHE_DIR"])),
                        check=True,
                        capture_output=True,
                    )
                else:
                    build_memory(root, settings, paths=[path], embedder=embedder)
                times.append(time.perf_counter() - start)
        (root / path).write_bytes(original)
        build_memory(root, settings, paths=[path], embedder=embedder)
        worst_in_process = max(worst_in_process, median_ms(inproc))
        out.append(
            f"  {label:<30} {path}: in-process {median_ms(inproc):7.0f} ms, "
            f"`redline memory build FILE` {median_ms(cli):7.0f} ms   ({load()})"
        )
    unchanged: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        build_memory(root, settings, embedder=embedder)
        unchanged.append(time.perf_counter() - start)
    out.append(
        f"  whole-tree refresh, nothing changed: in-process {median_ms(unchanged):7.0f} ms   "
        f"({load()})"
    )
    out.append(
        target("one-file refresh (in-process, median)", f"{worst_in_process:.0f} ms", "<=",
               f"{TARGET_REFRESH_MS:.0f} ms", worst_in_process <= TARGET_REFRESH_MS)
    )  # fmt: skip
    return out


def reads(root: Path, settings: MemorySettings, embedder: Embedder) -> list[str]:
    memory = ProjectMemory.open(root, settings, embedder=embedder)
    assert memory is not None
    with memory:
        functions = [
            s
            for p in sorted(memory.store.indexed_files())
            for s in memory.store.symbols(path=p)
            if s.symbol.kind != "class"
        ]
        step = max(1, len(functions) // READ_SAMPLE)
        sample = functions[::step][:READ_SAMPLE]
        callers: list[float] = []
        similar: list[float] = []
        both: list[float] = []
        for stored in sample:
            start = time.perf_counter()
            memory.callers(stored.symbol.name, limit=10)
            middle = time.perf_counter()
            memory.similar(symbol_text(stored.symbol), limit=5, exclude=stored.symbol)
            end = time.perf_counter()
            callers.append(middle - start)
            similar.append(end - middle)
            both.append(end - start)
    return [
        f"  {len(sample)} functions: callers median {median_ms(callers):.1f} ms "
        f"(p90 {p90_ms(callers):.1f}), similar median {median_ms(similar):.1f} ms "
        f"(p90 {p90_ms(similar):.1f}), both median {median_ms(both):.1f} ms "
        f"(p90 {p90_ms(both):.1f})   ({load()})",
        target("memory reads per review unit (median)", f"{median_ms(both):.1f} ms", "<=",
               f"{TARGET_READ_MS:.0f} ms", median_ms(both) <= TARGET_READ_MS),
    ]  # fmt: skip


def review_commit(root: Path) -> str:
    """The newest commit changing 2 to 12 of the library's own Python files."""
    log = git(root, "log", "--no-merges", "-n200", "--format=%H", "--", "*.py")
    for commit in log.split():
        changed = git(root, "diff-tree", "-r", "--no-commit-id", "--name-only", commit).split()
        py = [p for p in changed if p.endswith(".py") and not p.startswith(("tests/", "docs/"))]
        if 2 <= len(py) <= 12 and len(changed) <= 20:
            return commit
    raise SystemExit("no commit changing 2 to 12 Python files in the last 200")


def review_once(root: Path, commit: str, env: dict[str, str]) -> tuple[float, str, int]:
    start = time.perf_counter()
    proc = subprocess.run(
        [str(REDLINE), "review", "--range", f"{commit}^..{commit}", "--format", "json", "-q"],
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
    memory = report["coverage"].get("memory")
    return elapsed, f"coverage: memory {memory}", len(report["findings"])


def reviews(root: Path, rounds: int) -> list[str]:
    commit = review_commit(root)
    built = Path(os.environ["REDLINE_CACHE_DIR"])
    empty = _TMP / "cache-empty"
    subject = git(root, "log", "-1", "--format=%s", commit).strip()[:70]
    out = [f"  change reviewed: {commit[:12]} ({subject})"]
    with ScriptedLLM(handler=ReviewScript()) as llm:
        model = {
            "REDLINE_MODEL": "openai/scripted",
            "REDLINE_API_BASE": llm.base_url,
            "REDLINE_API_KEY": "sk-benchmark-not-secret",
        }
        setups: dict[str, Callable[[], dict[str, str]]] = {
            "offline, memory not built": lambda: cli_env(empty),
            "offline, memory built": lambda: cli_env(built),
            "model, memory not built": lambda: cli_env(empty, model),
            "model, memory built": lambda: cli_env(built, model),
        }
        times: dict[str, list[float]] = {name: [] for name in setups}
        sizes: dict[str, list[int]] = {name: [] for name in setups}
        notes: dict[str, str] = {}
        for _ in range(rounds):
            for name, env in setups.items():
                before = len(llm.sizes)
                elapsed, note, _ = review_once(root, commit, env())
                times[name].append(elapsed)
                sizes[name].append(sum(llm.sizes[before:]))
                notes[name] = note
        for name in setups:
            out.append(
                f"  {name:<26} median {statistics.median(times[name]):6.2f} s "
                f"(min {min(times[name]):.2f}, max {max(times[name]):.2f}); request bytes "
                f"{statistics.median(sizes[name]):>8,.0f}; {notes[name]}"
            )
    out.append(f"  ({rounds} rounds each, alternating; {load()})")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--review-rounds", type=int, default=5)
    parser.add_argument(
        "--default-blas",
        action="store_true",
        help="leave OpenBLAS's thread count alone (default: one thread)",
    )
    args = parser.parse_args()
    try:
        root = _TMP / "repo"
        subprocess.run(
            ["git", "clone", "-q", "--depth", "200", f"file://{args.repo}", str(root)], check=True
        )
        commit = git(ROOT, "rev-parse", "HEAD").strip()
        print(f"Redline at {commit[:12]}; {args.repo} at {git(root, 'rev-parse', 'HEAD')[:12]}")
        settings = MemorySettings()
        blas = os.environ.get("OPENBLAS_NUM_THREADS", "OpenBLAS's default")
        print(f"OPENBLAS_NUM_THREADS={blas} (the CLI runs below inherit it)")
        print(f"build ({load()} before)")
        built, embedder = build(root, settings)
        scale = PER / built.lines
        print(
            f"  {built.lines:,} lines in {built.files:,} files, {built.symbols:,} symbols: "
            f"{built.seconds:.1f} s (model load {built.model_seconds:.1f} s apart), "
            f"{built.mb:.1f} MB   ({built.load} after)"
        )
        per_s, per_mb = built.seconds * scale, built.mb * scale
        print(f"  per 100,000 lines: {per_s:.1f} s, {per_mb:.1f} MB")
        print("memory reads per review unit (callers + similar of one changed function)")
        read_lines = reads(root, settings, embedder)
        print(read_lines[0], flush=True)
        print("refresh after a one-file change")
        lines = refresh(root, settings, embedder, args.rounds)
        print("\n".join(lines[:-1]), flush=True)
        print("review wall time, memory built vs not")
        print("\n".join(reviews(root, args.review_rounds)))
        print(
            target("build per 100,000 lines", f"{per_s:.1f} s", "<=", f"{TARGET_BUILD_S:.0f} s",
                   per_s <= TARGET_BUILD_S)
        )  # fmt: skip
        print(
            target("index size per 100,000 lines", f"{per_mb:.1f} MB", "<=",
                   f"{TARGET_BUILD_MB:.0f} MB", per_mb <= TARGET_BUILD_MB)
        )  # fmt: skip
        print(lines[-1])
        print(read_lines[1])
    finally:
        shutil.rmtree(_TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
