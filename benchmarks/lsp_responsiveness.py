"""Language-server responsiveness: how fast `python -m redline.lsp` answers an editor while a
200-file model review runs, how fast it starts, and how much memory it holds while idle.

The server is driven as an editor drives it: a child process speaking JSON-RPC over stdio,
launched with the model configured through the environment (REDLINE_MODEL=openai/scripted,
REDLINE_API_BASE, REDLINE_API_KEY, REDLINE_CONFIG with `[llm] max_concurrency = 8`,
REDLINE_CACHE_DIR in a temporary directory). The client is a small raw JSON-RPC client: no
client-library overhead inside the timings, which are taken with time.perf_counter around each
request (write → matching response read).

The scripted model runs in its own process (its HTTP threads would otherwise compete with the
client for this process's GIL and inflate the client-side timings). It answers every call after
--delay seconds, with a finding in every fifth file, so diagnostics are published all through the
review. Once the first file's diagnostics arrive, that file is opened and codeAction and hover
requests on the finding are sent one at a time, alternating, until --requests of each have been
answered; only the answers received while the review was still running count.

Then the edit storm (`_lsp_storm.py`): 1,000 line inserts into an open file while a 200-file
review with over a thousand findings is published, hover and codeAction latency during it, and
the bytes of `redline/findings` sent per edit; `--baseline REV` runs the same storm on the server
of an earlier revision first, for a before/after table; `--storm-only` runs the storm alone.

Then the results landing (`_lsp_landing.py`): the storm's review (~1,200 findings over 200 files)
with a cursor sending hovers and codeActions a few ms apart, their p50/p99/max before the results
land and while they land, and the answer time of a `shutdown` sent as they start landing; on
--baseline's server too; `--landing-only` runs it alone.

    python benchmarks/lsp_responsiveness.py [--files 200] [--delay 0.3] [--requests 300]
        [--storm-files 200] [--storm-edits 1000] [--baseline REV] [--storm-only]
        [--landing-only]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _lsp_client import Client, percentile
from _lsp_landing import PACE_S, Landing, landing_rows, run_landing
from _lsp_storm import (
    EDITS_PER_ROUND,
    Storm,
    baseline_server,
    build_storm_repo,
    run_storm,
    storm_env,
    storm_rows,
)

from _change import BASE_BRANCH, FEATURE_BRANCH, finding_for, module_text, path_of, target_line
from gitrepo import GitRepo
from review_script import ReviewScript

TARGET_P99_MS = 20.0
TARGET_START_S = 0.5
TARGET_RSS_MB = 80.0
FINDING_EVERY = 5  # every fifth file has a finding
LAUNCHES = 5


# -- the scripted model, in its own process ----------------------------------------------------


def _serve_model(conn: Connection, files: int, delay: float) -> None:
    from _change import BenchLLM

    findings = {path_of(i): [finding_for(i)] for i in range(0, files, FINDING_EVERY)}
    with BenchLLM(handler=ReviewScript(findings=findings, delay=delay)) as llm:
        conn.send(llm.base_url)
        conn.recv()  # until told to stop
        conn.send(llm.max_in_flight)


# -- measurements --------------------------------------------------------------------------------


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc status")


def cpu_s(pid: int) -> float:
    """CPU time (user + system) the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def startup(
    root: Path, env: dict[str, str], log: Path, launches: int, *, idle: bool
) -> tuple[list[float], list[float]]:
    """Seconds from launch to the initialize response, and (with `idle`) RSS in MB after a
    second of idling, per launch."""
    times: list[float] = []
    rss: list[float] = []
    for _ in range(launches):
        start = time.perf_counter()
        client = await Client.launch(env, log)
        await client.initialize(root)
        times.append(time.perf_counter() - start)
        if idle:
            await asyncio.sleep(1.0)  # `initialized` handled, nothing else asked
            rss.append(rss_mb(client.proc.pid))
        await client.close()
    return times, rss


@dataclass
class Samples:
    code_action_ms: list[float] = field(default_factory=list)
    hover_ms: list[float] = field(default_factory=list)
    answered: int = 0  # requests with a non-empty answer
    late: int = 0  # answered after the review ended: not kept


@dataclass
class Load:
    early: Samples  # before the first diagnostics (nothing to act on yet)
    main: Samples  # on a finding, while the review ran
    review_s: float
    first_diag_s: float
    diagnostics_files: int
    cpu_s: float  # the server's CPU time during the review
    rss_after_mb: float


def doc_params(uri: str, rng: dict[str, Any], diagnostics: list[Any]) -> list[tuple[str, Any]]:
    return [
        (
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": rng,
                "context": {"diagnostics": diagnostics, "triggerKind": 2},
            },
        ),
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": rng["start"]}),
    ]


async def sample(
    client: Client,
    task_id: str,
    requests: list[tuple[str, Any]],
    into: Samples,
    limit: int,
    stop: Callable[[], bool] | None = None,
) -> None:
    """Send the requests in turn, one at a time at an editor's pace, until `limit` of each
    were answered during the review, the review ended, or `stop()` says so."""
    lists = [into.code_action_ms, into.hover_ms]
    while any(len(values) < limit for values in lists):
        for (method, params), values in zip(requests, lists, strict=True):
            if len(values) >= limit:
                continue
            t0 = time.perf_counter()
            answer = await client.request(method, params)
            elapsed = (time.perf_counter() - t0) * 1000
            into.answered += bool(answer)
            if client.ended(task_id):
                into.late += 1
            else:
                values.append(elapsed)
        if client.ended(task_id) or (stop is not None and stop()):
            return
        await asyncio.sleep(0.005)  # cursor moves, not a flood


async def under_load(root: Path, env: dict[str, str], log: Path, requests: int) -> Load:
    client = await Client.launch(env, log)
    await client.initialize(root)
    # The user has a changed file open before asking for the review.
    first = root / path_of(0)
    text = first.read_text(encoding="utf-8")
    uri = first.as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    await client.notify("textDocument/didOpen", {"textDocument": doc})

    cpu0 = cpu_s(client.proc.pid)
    start = time.perf_counter()
    result = await client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "branch", "base": BASE_BRANCH}]},
    )
    task_id = str(result["taskId"])

    # Until something is shown: the same requests, which find nothing yet (the engine and
    # litellm are being imported and the change planned in the meantime).
    early = Samples()
    line = {"start": {"line": 10, "character": 0}, "end": {"line": 10, "character": 0}}

    def anything_shown() -> bool:
        return any(client.diagnostics.values())

    await sample(client, task_id, doc_params(uri, line, []), early, 10**9, stop=anything_shown)
    if client.ended(task_id):
        raise RuntimeError(f"the review ended without diagnostics: {client.states[-1]}")
    first_diag = time.perf_counter() - start

    # Then the first file with findings, opened as if the user clicked on its diagnostic.
    shown_uri, diags = next((u, d) for u, d in client.diagnostics.items() if d)
    if shown_uri != uri:
        uri = shown_uri
        text = Path(unquote(urlparse(uri).path)).read_text(encoding="utf-8")
        opened = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        await client.notify("textDocument/didOpen", {"textDocument": opened})
    main = Samples()
    await sample(client, task_id, doc_params(uri, diags[0]["range"], diags[:1]), main, requests)

    while not client.ended(task_id):
        await asyncio.sleep(0.02)
    review_s = time.perf_counter() - start
    cpu = cpu_s(client.proc.pid) - cpu0
    final = next(s for s in reversed(client.states) if s.get("taskId") == task_id)
    if final["state"] != "finished":
        raise RuntimeError(f"the review did not finish: {final}")
    rss_after = rss_mb(client.proc.pid)
    shown = sum(1 for d in client.diagnostics.values() if d)
    await client.close()
    return Load(early, main, review_s, first_diag, shown, cpu, rss_after)


# -- setup ------------------------------------------------------------------------------------


def build_repo(root: Path, files: int) -> GitRepo:
    """`main` with `files` ~130-line modules; `feature` changes three functions in each."""
    repo = GitRepo(root, branch=BASE_BRANCH)
    for i in range(files):
        repo.write(path_of(i), module_text(i, 0))
    repo.commit("base")
    repo.checkout("-b", FEATURE_BRANCH)
    for i in range(files):
        repo.write(path_of(i), module_text(i, 1))
    repo.commit("feature: new scoring")
    return repo


def server_env(tmp: Path, base_url: str, concurrency: int) -> dict[str, str]:
    config = tmp / "redline.toml"
    config.write_text(
        f"[llm]\nmax_concurrency = {concurrency}\nmax_retries = 0\ntimeout = 30\n\n"
        # The analyzers are subprocesses, not work on the server's loop; off, so what is measured
        # is the model review's effect on the server.
        "[analyzers]\nruff = false\nbandit = false\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env.update(
        REDLINE_MODEL="openai/scripted",
        REDLINE_API_BASE=base_url,
        REDLINE_API_KEY="test",
        REDLINE_CONFIG=str(config),
        REDLINE_CACHE_DIR=str(tmp / "cache"),
        REDLINE_LSP_LOG="WARNING",
    )
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200, help="files in the branch change")
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per model call")
    parser.add_argument("--requests", type=int, default=300, help="codeActions (and hovers)")
    parser.add_argument("--concurrency", type=int, default=8, help="llm.max_concurrency")
    parser.add_argument("--storm-files", type=int, default=200, help="files of the storm review")
    parser.add_argument("--storm-edits", type=int, default=1000, help="line inserts in the storm")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also run the storm on the server of git revision REV (before/after)",
    )
    parser.add_argument("--storm-only", action="store_true", help="run the edit storm alone")
    parser.add_argument("--landing-only", action="store_true", help="run the results landing alone")
    args = parser.parse_args(argv)

    if args.landing_only:
        with tempfile.TemporaryDirectory(prefix="redline-bench-lsp-") as tmp_name:
            landings = landing_phase(args, Path(tmp_name))
        report_landing(args, landings)
        return 0
    if args.storm_only:
        with tempfile.TemporaryDirectory(prefix="redline-bench-lsp-") as tmp_name:
            storms = storm_phase(args, Path(tmp_name))
        report_storm(args, storms)
        return 0

    ctx = mp.get_context("spawn")
    ours, theirs = ctx.Pipe()
    model = ctx.Process(target=_serve_model, args=(theirs, args.files, args.delay), daemon=True)
    model.start()
    try:
        base_url = str(ours.recv())
        with tempfile.TemporaryDirectory(prefix="redline-bench-lsp-") as tmp_name:
            tmp = Path(tmp_name)
            repo = build_repo(tmp / "repo", args.files)
            env = server_env(tmp, base_url, args.concurrency)
            # An installed package has its bytecode compiled (pip does it at install time; else
            # the first run writes it). Here it goes to a private prefix, so nothing is written
            # next to the sources, and a first, uncounted launch fills it.
            warm = dict(env, PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
            warm.pop("PYTHONDONTWRITEBYTECODE", None)
            # No bytecode at all: what a checkout run with PYTHONDONTWRITEBYTECODE=1 pays.
            cold = dict(env, PYTHONPYCACHEPREFIX=str(tmp / "no-pycache"))
            cold["PYTHONDONTWRITEBYTECODE"] = "1"
            log = tmp / "server.log"
            try:
                asyncio.run(startup(repo.root, warm, log, 1, idle=False))
                times, rss = asyncio.run(startup(repo.root, warm, log, LAUNCHES, idle=True))
                cold_times, _ = asyncio.run(startup(repo.root, cold, log, 3, idle=False))
                floor = pygls_floor(warm, LAUNCHES)
                load = asyncio.run(under_load(repo.root, warm, log, args.requests))
            except Exception:
                sys.stderr.write(log.read_text(errors="replace")[-4000:])
                raise
            storms = storm_phase(args, tmp)
            landings = landing_phase(args, tmp)
        ours.send("stop")
        peak = int(ours.recv())
    finally:
        model.join(timeout=5)
        if model.is_alive():
            model.kill()

    report(args, times, cold_times, floor, rss, load, peak)
    print()
    report_storm(args, storms)
    print()
    report_landing(args, landings)
    return 0


def storm_phase(args: argparse.Namespace, tmp: Path) -> list[tuple[str, Storm]]:
    """The edit storm on this checkout's server, and on --baseline's if given."""
    repo = build_storm_repo(tmp / "storm-repo", args.storm_files)
    env = storm_env(tmp)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    log = tmp / "storm.log"
    runs: list[tuple[str, list[str] | None, dict[str, str]]] = []
    if args.baseline:
        server, extra = baseline_server(args.baseline, tmp)
        runs.append((f"before {args.baseline[:7]}", server, dict(env, **extra)))
    runs.append(("after", None, env))
    storms = []
    for label, server, run_env in runs:
        try:
            storm = asyncio.run(run_storm(repo.root, run_env, log, args.storm_edits, server))
        except Exception:
            sys.stderr.write(log.read_text(errors="replace")[-4000:])
            raise
        storms.append((label, storm))
    return storms


def landing_phase(args: argparse.Namespace, tmp: Path) -> list[tuple[str, Landing]]:
    """The results landing on this checkout's server, and on --baseline's if given."""
    repo = build_storm_repo(tmp / "landing-repo", args.storm_files)
    env = storm_env(tmp)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    log = tmp / "landing.log"
    runs: list[tuple[str, list[str] | None, dict[str, str]]] = []
    if args.baseline:
        (tmp / "landing-baseline").mkdir()
        server, extra = baseline_server(args.baseline, tmp / "landing-baseline")
        runs.append((f"before {args.baseline[:7]}", server, dict(env, **extra)))
    runs.append(("after", None, env))
    landings = []
    for label, server, run_env in runs:
        try:
            landing = asyncio.run(run_landing(repo.root, run_env, log, server))
        except Exception:
            sys.stderr.write(log.read_text(errors="replace")[-4000:])
            raise
        landings.append((label, landing))
    return landings


def report_landing(args: argparse.Namespace, landings: list[tuple[str, Landing]]) -> None:
    after = landings[-1][1]
    print(
        f"results landing — an offline {args.storm_files}-file review with {after.findings} "
        f"findings (ruff): its early list, then its final one, each published to every file "
        f"while a cursor sends a hover and a codeAction {1000 * PACE_S:.0f} ms apart"
    )
    print(
        f"  {'server':16}{'phase':9}{'request':12}{'n':>5}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
    )
    for label, landing in landings:
        landing_rows(label, landing)
    for name in ("hover", "codeAction"):
        values = after.landing.get(f"textDocument/{name}", [])
        p99 = percentile(values, 99) if values else float("inf")
        met = p99 <= TARGET_P99_MS
        label = f"{name} p99 while results land"
        print(target_line(label, f"{p99:.1f} ms", "<=", f"{TARGET_P99_MS:.0f} ms", met))


def report_storm(args: argparse.Namespace, storms: list[tuple[str, Storm]]) -> None:
    after = storms[-1][1]
    print(
        f"edit storm — {args.storm_edits} line inserts (didChange, {EDITS_PER_ROUND} back to back "
        f"per round, then a codeAction and a hover on the moving finding) into an open file, "
        f"started at its first diagnostics of an offline {args.storm_files}-file review with "
        f"{after.review_findings} findings (ruff)"
    )
    print(
        f"  {'server':16}{'request':12}{'n':>5}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'lists':>12}{'KB':>14}{'KB/edit':>10}{'total s':>9}"
    )
    for label, storm in storms:
        storm_rows(label, storm)
    print(
        "  lists, KB: `redline/findings` notifications sent from the first edit until the "
        "server caught up, partial + whole lists (a whole list: the review's own, or, before, "
        "one per edit);\n  KB/edit: all of them / edits; total: first edit → answer after "
        "the last edit"
    )
    for name, values in (("codeAction", after.code_action_ms), ("hover", after.hover_ms)):
        p99 = percentile(values, 99)
        met = p99 <= TARGET_P99_MS
        label = f"{name} p99 in the storm"
        print(target_line(label, f"{p99:.1f} ms", "<=", f"{TARGET_P99_MS:.0f} ms", met))


def latency_rows(title: str, samples: Samples) -> None:
    print(f"{title:44}{'n':>6}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}")
    rows = {"  textDocument/codeAction": samples.code_action_ms}
    rows["  textDocument/hover"] = samples.hover_ms
    for name, values in rows.items():
        cells = [percentile(values, p) for p in (50, 90, 99, 100)] if values else [0.0] * 4
        print(f"{name:44}{len(values):>6}" + "".join(f"{v:>8.2f}" for v in cells))


def report(
    args: argparse.Namespace,
    times: list[float],
    cold_times: list[float],
    floor: list[float],
    rss: list[float],
    load: Load,
    peak: int,
) -> None:
    print(
        f"LSP responsiveness — `python -m redline.lsp` over stdio (raw JSON-RPC client), "
        f"{args.files}-file branch review, scripted model at {args.delay * 1000:.0f} ms per call "
        f"(max_concurrency={args.concurrency}, peak in flight {peak}), analyzers off"
    )
    print()
    print(
        f"review: first diagnostics after {load.first_diag_s:.2f} s, finished after "
        f"{load.review_s:.2f} s, {load.diagnostics_files} files with diagnostics; "
        f"server CPU {load.cpu_s:.1f} s in that time"
    )
    main = load.main
    print(
        f"requests on the finding: {len(main.code_action_ms) + len(main.hover_ms)} answered while "
        f"the review ran ({main.answered} non-empty answers), {main.late} after it (not kept)"
    )
    print()
    latency_rows("latency (ms), on a finding, during the review", main)
    latency_rows("  before the first diagnostics (empty answers)", load.early)
    print()
    print(f"launch → initialize response (s), bytecode cached: {fmt(times, '.3f')}")
    print(f"launch → initialize response (s), no bytecode cache: {fmt(cold_times, '.3f')}")
    print(
        "floor: python + `import pygls.lsp.server, lsprotocol.types` alone (s), same run: "
        f"{fmt(floor, '.3f')} (median {statistics.median(floor):.3f}; startup / floor "
        f"{statistics.median(times) / statistics.median(floor):.2f})"
    )
    print(f"idle RSS 1 s after initialize (MB): {fmt(rss, '.1f')}")
    print(f"RSS after the review (MB, litellm loaded; for comparison): {load.rss_after_mb:.1f}")
    print()
    enough = min(len(main.code_action_ms), len(main.hover_ms)) >= args.requests
    if not enough:
        print(f"NOTE: fewer than {args.requests} samples per request came in during the review")
    for name, values in (("codeAction", main.code_action_ms), ("hover", main.hover_ms)):
        p99 = percentile(values, 99) if values else float("inf")
        met = p99 <= TARGET_P99_MS and enough
        print(target_line(f"{name} p99", f"{p99:.1f} ms", "<=", f"{TARGET_P99_MS:.0f} ms", met))
    start = statistics.median(times)
    met = start <= TARGET_START_S
    print(target_line("startup (median)", f"{start:.3f} s", "<=", f"{TARGET_START_S} s", met))
    idle = statistics.median(rss)
    met = idle <= TARGET_RSS_MB
    print(target_line("idle RSS (median)", f"{idle:.1f} MB", "<=", f"{TARGET_RSS_MB:.0f} MB", met))


def pygls_floor(env: dict[str, str], launches: int) -> list[float]:
    """What any pygls server pays before its first line of code: the interpreter and the
    pygls/lsprotocol imports (bytecode cached like the server's). The startup target is judged
    next to it, since no server built on pygls can answer initialize sooner."""
    command = [sys.executable, "-c", "import pygls.lsp.server, lsprotocol.types"]
    subprocess.run(command, env=env, check=True)  # fills the bytecode cache, not counted
    times = []
    for _ in range(launches):
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True)
        times.append(time.perf_counter() - start)
    return times


def fmt(values: list[float], spec: str) -> str:
    return ", ".join(format(v, spec) for v in values)


if __name__ == "__main__":
    sys.exit(main())
