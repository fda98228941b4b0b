"""Project memory's embedding (memory/embed.py): speed, peak memory and what it costs a
language server, side by side for token caps, batch sizes and BLAS thread counts.

The texts are real: every function of this repository's tracked Python files
(diff/functions.function_spans, as the index sees them), through `symbol_text`. A sample of
--symbols of them (evenly spread, so short and long functions alike) is embedded once per
configuration, each configuration in its own process (peak memory is per process). `thr` is
embed()'s worker threads (each on one BLAS thread). `--before REV` adds the default
configuration run on the code of git revision REV (its server/ tree exported to a temporary
directory and put first on the child's PYTHONPATH), side by side with today's. Figures:

- load: seconds to load the model (weights + tokenizer) in a fresh process;
- tokens: mean tokens per symbol at that cap (what the encoder pays for);
- sym/s: symbols per wall-clock second, and per CPU-second (the machine is shared: the load
  average is printed; CPU time is what an idle machine would need);
- 100k lines: the projected time to embed the symbols of 100,000 lines of this repository's
  code (its own symbols-per-line), from the wall rate (on this machine under its load), and
  from the CPU rate on an idle 2-core machine for ONE process (`redline memory build`): one
  core's work per worker thread, at most 2;
- peak MB: the process's peak resident memory.

Then responsiveness: while a thread embeds, the main thread runs a small task every 20 ms
(a language server answering requests); its latency is compared with no embedding running,
with embed() on 1 worker thread and on 2, and with the embedding in another process (nice 10).

    python benchmarks/memory_embed.py [--symbols 400] [--quick] [--before REV]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINES_TARGET = 100_000
SECONDS_TARGET = 60.0
CORES = 2  # the target machine
# (max_tokens, BATCH_TOKENS, embed() worker threads)
CONFIGS = (
    (128, 1024, 2),  # the default on a 2-core machine
    (128, 1024, 1),
    (128, 512, 2),
    (256, 1024, 2),
    (96, 1024, 2),
    (64, 1024, 2),
)
QUICK = ((128, 1024, 2), (128, 1024, 1))


def repository_texts() -> tuple[list[str], int]:
    """symbol_text of every function of the tracked *.py files, and their line count."""
    from redline.diff.functions import function_spans
    from redline.memory.embed import symbol_text
    from redline.memory.model import Symbol

    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "*.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    texts: list[str] = []
    lines = 0
    for name in files:
        data = (ROOT / name).read_bytes()
        source = data.decode("utf-8", "replace").splitlines()
        lines += len(source)
        for span in function_spans(name, data):
            body = "\n".join(source[span.start - 1 : span.end])
            symbol = Symbol(name, span.name, "function", span.start, span.end, "python", body=body)
            texts.append(symbol_text(symbol))
    return texts, lines


def export_revision(rev: str, target: Path) -> str:
    """The server/ tree of git revision `rev`, exported under `target`; its path."""
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "server"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return str(target / "server")


def child(config: str, texts_file: str, per_call: int) -> None:
    """One configuration, in its own process: print one JSON line of figures."""
    import numpy as np

    import redline.memory.embed as embed

    max_tokens, batch_tokens, threads = (int(x) for x in config.split(","))
    texts = json.loads(Path(texts_file).read_text("utf-8"))
    started = time.perf_counter()
    loaded = embed.load_embedder(max_tokens=max_tokens)
    load = time.perf_counter() - started
    loaded_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert isinstance(loaded, embed.MiniLMEmbedder)
    # (before the worker threads, `threads` was numpy's BLAS threads: 1 by default)
    embedder = dataclasses.replace(loaded, batch_tokens=batch_tokens, threads=threads)
    tokens = [embedder.token_count(t) for t in texts]
    embedder.embed(texts[:4])  # first-call costs (allocator, BLAS threads) out of the figure
    wall, cpu = time.perf_counter(), time.process_time()
    step = per_call or len(texts)
    vectors = np.vstack([embedder.embed(texts[i : i + step]) for i in range(0, len(texts), step)])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert vectors.shape == (len(texts), embedder.dim)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "load": load,
                "tokens": statistics.mean(tokens),
                "wall": wall,
                "cpu": cpu,
                "peak_mb": peak_mb,
                "loaded_mb": loaded_mb,
                "load_avg": os.getloadavg()[0],
                "code": embed.__file__,
            }
        )
    )


def responsiveness_child(texts_file: str, threads: int) -> None:
    """Latency of a small main-thread task every 20 ms while a thread embeds with `threads`
    worker threads (0: no embedding, the baseline; -1: another process embeds, at nice 10)."""
    from redline.memory.embed import MiniLMEmbedder, load_embedder

    texts = json.loads(Path(texts_file).read_text("utf-8"))
    loaded = load_embedder()
    assert isinstance(loaded, MiniLMEmbedder)
    embedder = dataclasses.replace(loaded, threads=max(threads, 1))
    embedder.embed(texts[:4])
    done = threading.Event()

    def work() -> None:
        if threads:
            while not done.is_set():
                embedder.embed(texts[:64])

    worker = threading.Thread(target=work, daemon=True)
    other = None
    if threads < 0:  # the embedding in a process of its own, at a lower priority
        other = subprocess.Popen(
            [sys.executable, __file__, "--responsive", "1", "--texts", texts_file],
            stdout=subprocess.DEVNULL,
            preexec_fn=lambda: os.nice(10),
        )
        time.sleep(1.0)  # its import and model load, before measuring
    else:
        worker.start()
    payload = {"diagnostics": [{"line": i, "message": "x" * 80} for i in range(50)]}
    latencies = []
    until = time.perf_counter() + 8.0
    while time.perf_counter() < until:
        asked = time.perf_counter()
        time.sleep(0.02)
        json.loads(json.dumps(payload))  # ~a request's own work
        latencies.append((time.perf_counter() - asked - 0.02) * 1000)
    done.set()
    if other is not None:
        other.kill()
        other.wait()
    else:
        worker.join()
    latencies.sort()
    print(
        json.dumps(
            {
                "p50": latencies[len(latencies) // 2],
                "p95": latencies[int(len(latencies) * 0.95)],
                "max": latencies[-1],
                "load_avg": os.getloadavg()[0],
            }
        )
    )


def run_child(args: list[str], code: str | None = None) -> dict[str, float]:
    """Run this script's child mode; `code`: a directory whose redline package it imports."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (code, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"child {args} failed")
    result: dict[str, float] = json.loads(proc.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--symbols", type=int, default=400, help="sample size (0: all)")
    parser.add_argument("--quick", action="store_true", help="only 128 tokens, 2 vs 1 threads")
    parser.add_argument("--before", help="also run the default on this git revision's code")
    parser.add_argument(
        "--per-call",
        type=int,
        default=64,
        help="texts per embed() call (64: as memory/build.py calls it; 0: all in one call)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--responsive", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--texts", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.texts, args.per_call)
        return
    if args.responsive is not None:
        responsiveness_child(args.texts, args.responsive)
        return

    texts, lines = repository_texts()
    per_100k = len(texts) * LINES_TARGET / lines
    sample = texts
    if args.symbols and args.symbols < len(texts):
        step = len(texts) / args.symbols
        sample = [texts[int(i * step)] for i in range(args.symbols)]
    print(
        f"{len(texts)} functions in {lines:,} lines of this repository's Python "
        f"({per_100k:,.0f} per 100k lines); embedding {len(sample)} of them, "
        f"{args.per_call or len(sample)} per embed() call; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = str(Path(tmp) / "texts.json")
        Path(texts_file).write_text(json.dumps(sample), "utf-8")
        print(
            f"{'code':>17} {'tokens':>6} {'batch':>6} {'thr':>3} | {'load s':>6} {'mean tok':>8} "
            f"{'sym/s':>6} {'sym/cpu-s':>9} | {'100k lines: wall':>16} {'idle 2-core':>11} | "
            f"{'loaded MB':>9} {'peak MB':>7} {'load':>5}"
        )
        best_128 = None
        runs: list[tuple[str, tuple[int, int, int], str | None]] = []
        if args.before:
            before = export_revision(args.before, Path(tmp) / "before")
            runs.append((f"before {args.before[:10]}", (128, 1024, 1), before))
        runs += [("now", config, None) for config in (QUICK if args.quick else CONFIGS)]
        for label, (max_tokens, batch, threads), code in runs:
            r = run_child(
                [
                    "--child",
                    f"{max_tokens},{batch},{threads}",
                    "--texts",
                    texts_file,
                    "--per-call",
                    str(args.per_call),
                ],
                code,
            )
            assert code is None or str(r["code"]).startswith(code), r["code"]
            n = len(sample)
            rate, cpu_rate = n / r["wall"], n / r["cpu"]
            projected_wall = per_100k / rate
            # On an idle machine each worker thread has a core of its own (at most CORES).
            projected_idle = per_100k / (cpu_rate * min(threads, CORES))
            if label == "now" and (max_tokens, batch, threads) == CONFIGS[0]:
                best_128 = projected_idle
            print(
                f"{label:>17} {max_tokens:>6} {batch:>6} {threads:>3} | {r['load']:>6.2f} "
                f"{r['tokens']:>8.1f} {rate:>6.1f} {cpu_rate:>9.1f} | {projected_wall:>14.0f} s "
                f"{projected_idle:>9.0f} s | {r['loaded_mb']:>9.0f} {r['peak_mb']:>7.0f} "
                f"{r['load_avg']:>5.1f}",
                flush=True,
            )
        if not args.quick:
            print(
                "\nA main-thread task every 20 ms while a thread embeds (latency beyond the sleep):"
            )
            for threads in (0, 1, 2, -1):
                r = run_child(["--responsive", str(threads), "--texts", texts_file])
                label = {0: "no embedding", -1: "other process"}.get(
                    threads, f"{threads} worker thr"
                )
                print(
                    f"  {label:14s} p50 {r['p50']:6.2f} ms  p95 {r['p95']:6.2f} ms  "
                    f"max {r['max']:7.2f} ms  (load {r['load_avg']:.1f})",
                    flush=True,
                )
    if best_128 is not None:
        met = "met" if best_128 <= SECONDS_TARGET else "MISSED"
        print(
            f"TARGET memory embed: 100k lines ({per_100k:,.0f} symbols) at 128 tokens in "
            f"{best_128:.0f} s of 2 idle cores, one process (target <= {SECONDS_TARGET:.0f} s): "
            f"{met}"
        )


if __name__ == "__main__":
    main()
