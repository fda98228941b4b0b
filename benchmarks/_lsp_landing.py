"""Results landing, for the responsiveness benchmark: how fast the server answers while a big
review's results are published, and how fast it answers `shutdown` then.

The review is the edit storm's (`_lsp_storm.py`): offline, ruff on 200 generated files, six
findings each (~1,200), no model. Its results land twice: the analyzers' early list, then the
final one; each is 200 files of diagnostics and a `redline/findings` list. From the moment the
review is asked for, a client sends a hover and a codeAction on a finding's line of an open
file, alternately, one at a time, a few ms apart (a cursor moving), and keeps each latency with
the times it was sent and answered (after one uncounted pair: the first hover imports what
hovers need). A request answered before the first diagnostics arrived counts as "before"; one
in flight at any time from then until the last diagnostics or list of the review arrived counts
as "while landing" (a request stalled by the publishing is counted where it was stalled). The
review is run three times in the session (each after the last has landed), for samples. A
second launch sends `shutdown` as the first diagnostics arrive and times its answer.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _lsp_client import Client, percentile
from _lsp_storm import BRANCH_BASE, TIMEOUT_S, storm_path

PACE_S = 0.003  # between two requests: an editor's cursor, not a flood
QUIET_S = 0.5  # nothing published for this long after the review ended: all has landed


@dataclass
class Landing:
    before: dict[str, list[float]] = field(default_factory=dict)  # method → ms
    landing: dict[str, list[float]] = field(default_factory=dict)
    landing_s: float = 0.0  # first diagnostics → last diagnostics or list of a review (mean)
    findings: int = 0
    shutdown_ms: float = 0.0  # `shutdown` sent as the first diagnostics arrived → its answer


def _requests(uri: str, line: int) -> list[tuple[str, dict[str, Any]]]:
    at = {"line": line, "character": 8}
    return [
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": at}),
        (
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": at, "end": at},
                "context": {"diagnostics": [], "triggerKind": 2},
            },
        ),
    ]


async def _open(client: Client, root: Path) -> tuple[str, int]:
    """Open the first file; the uri and the 0-based line of its first finding (a bare except)."""
    path = root / storm_path(0)
    text = path.read_text(encoding="utf-8")
    doc = {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}
    await client.notify("textDocument/didOpen", {"textDocument": doc})
    line = next(i for i, s in enumerate(text.splitlines()) if s.strip().startswith("except:"))
    return path.as_uri(), line


async def _review(client: Client) -> str:
    result = await client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "branch", "base": BRANCH_BASE}]},
    )
    return str(result["taskId"])


async def _ended(client: Client, task_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT_S
    while not client.ended(task_id):
        if time.monotonic() > deadline:
            raise RuntimeError("the review did not end")
        await asyncio.sleep(0.02)
    final = next(s for s in reversed(client.states) if s.get("taskId") == task_id)
    if final["state"] != "finished":
        raise RuntimeError(f"the review did not finish: {final}")
    return final


async def _landed(client: Client) -> float:
    """When the last diagnostics or list arrived, once nothing more has come for QUIET_S."""
    while True:
        last = client.landed_at[-1] if client.landed_at else 0.0
        await asyncio.sleep(QUIET_S)
        if client.landed_at and client.landed_at[-1] == last:
            return last


async def run_landing(
    root: Path, env: dict[str, str], log: Path, server: list[str] | None = None, runs: int = 3
) -> Landing:
    """`runs` reviews one after another in one session (each after the last has landed), the
    cursor moving all along; then the shutdown launch."""
    out = Landing()
    client = await Client.launch(env, log, server)
    try:
        await client.initialize(root)
        uri, line = await _open(client, root)
        samples: list[tuple[float, float, str]] = []  # (sent at, answered at, method)
        stop = asyncio.Event()
        for method, params in _requests(uri, line):  # warm-up, not counted
            await client.request(method, params)

        async def cursor() -> None:
            while not stop.is_set():
                for method, params in _requests(uri, line):
                    t0 = time.perf_counter()
                    await client.request(method, params)
                    samples.append((t0, time.perf_counter(), method))
                    await asyncio.sleep(PACE_S)

        task = asyncio.create_task(cursor())
        windows: list[tuple[float, float, float]] = []  # (asked, first landed, last landed)
        for _ in range(runs):
            asked, seen = time.perf_counter(), len(client.landed_at)
            task_id = await _review(client)
            final = await _ended(client, task_id)
            last = await _landed(client)
            windows.append((asked, client.landed_at[seen], last))
            out.findings = int(final.get("findings") or 0)
            out.landing_s += last - client.landed_at[seen]
        stop.set()
        await task
        out.landing_s /= runs
        for sent, answered, method in samples:
            for asked, first, last in windows:
                if asked <= sent and answered < first:
                    out.before.setdefault(method, []).append((answered - sent) * 1000)
                elif sent <= last and answered >= first:
                    out.landing.setdefault(method, []).append((answered - sent) * 1000)
    finally:
        await client.close()
    out.shutdown_ms = await _shutdown_while_landing(root, env, log, server)
    return out


async def _shutdown_while_landing(
    root: Path, env: dict[str, str], log: Path, server: list[str] | None
) -> float:
    client = await Client.launch(env, log, server)
    try:
        await client.initialize(root)
        await _open(client, root)
        await _review(client)
        deadline = time.monotonic() + TIMEOUT_S
        while not client.landed_at:
            if time.monotonic() > deadline:
                raise RuntimeError("nothing was published")
            await asyncio.sleep(0.001)
        t0 = time.perf_counter()
        await asyncio.wait_for(client.request("shutdown", None), timeout=60)
        elapsed = (time.perf_counter() - t0) * 1000
        await client.notify("exit", None)
        await asyncio.wait_for(client.proc.wait(), timeout=10)
        return elapsed
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()
        if client.reader is not None:
            await client.reader


def landing_rows(label: str, landing: Landing) -> None:
    for phase, by_method in (("before", landing.before), ("landing", landing.landing)):
        for method in ("textDocument/hover", "textDocument/codeAction"):
            values = by_method.get(method, [])
            name = method.removeprefix("textDocument/")
            cells = (
                "".join(f"{percentile(values, p):>9.1f}" for p in (50, 99, 100))
                if values
                else f"{'-':>9}" * 3
            )
            print(f"  {label:16}{phase:9}{name:12}{len(values):>5}{cells}")
    print(
        f"  {label:16}a landing lasted {landing.landing_s:.2f} s ({landing.findings} findings); "
        f"shutdown sent as the first diagnostics arrived answered in {landing.shutdown_ms:.0f} ms"
    )
