"""The edit storm of the responsiveness benchmark: a 200-file review with over a thousand
findings, then 1,000 line inserts into an open file, typed as fast as an editor sends them.

The review is offline (ruff on generated files, each with six bare `except:` blocks: E722 on
every one), so the findings are many and real and no model is involved. As soon as the opened
file's diagnostics arrive the storm starts, while the rest of the review is still being
published: rounds of EDITS_PER_ROUND `didChange` notifications (one line inserted at the top,
each moving every finding of the file) sent back to back, then a codeAction and a hover on the
first finding, at the line it has moved to, timed one at a time. The latencies are those an
editor sees while the server works through the edits; the bytes are every `redline/findings`
body the server sent from the storm's first edit until the server has caught up (its answer to
the last request).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _lsp_client import Client, percentile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from gitrepo import GitRepo

BRANCH_BASE = "main"
BLOCKS_PER_FILE = 6
EDITS_PER_ROUND = 5
TIMEOUT_S = 600.0


def storm_path(i: int) -> str:
    return f"pkg{i // 10}/handler_{i}.py"


def storm_module(i: int) -> str:
    """A module with BLOCKS_PER_FILE functions, each swallowing every error (ruff E722)."""
    out = [f'"""Handlers of service {i}."""', "", "import logging", ""]
    out.append("log = logging.getLogger(__name__)")
    for f in range(BLOCKS_PER_FILE):
        out += [
            "",
            "",
            f"def handle_{f}(records: list[dict]) -> int:",
            f'    """Count the valid records of batch {f}."""',
            "    count = 0",
            "    for record in records:",
            "        try:",
            f'            count += int(record["n_{f}"])',
            # Each block's line differs: identical quoted code is ambiguous to re-anchor.
            f"        except:  # batch {f}",
            "            log.warning('skipped')",
            "    return count",
        ]
    return "\n".join(out) + "\n"


def build_storm_repo(root: Path, files: int) -> GitRepo:
    """`main` with a README; `feature` adds `files` modules (every line is changed)."""
    repo = GitRepo(root, branch=BRANCH_BASE)
    repo.write("README.md", "handlers\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(files):
        repo.write(storm_path(i), storm_module(i))
    repo.commit("feature: handlers")
    return repo


@dataclass
class Storm:
    edits: int
    code_action_ms: list[float] = field(default_factory=list)
    hover_ms: list[float] = field(default_factory=list)
    # `redline/findings` bodies sent during the storm: the edits' updates, and whole lists (the
    # review's own, published while the storm runs; an old server sends one per edit).
    edit_lists: int = 0
    edit_bytes: int = 0
    whole_lists: int = 0
    whole_bytes: int = 0
    catch_up_s: float = 0.0  # from the first edit to the answer after the last one
    review_findings: int = 0  # findings listed once the review finished
    review_s: float = 0.0


async def run_storm(
    root: Path, env: dict[str, str], log: Path, edits: int, server: list[str] | None = None
) -> Storm:
    client = await Client.launch(env, log, server)
    try:
        await client.initialize(root)
        return await _storm(client, root, edits)
    finally:
        await client.close()


async def _storm(client: Client, root: Path, edits: int) -> Storm:
    path = root / storm_path(0)
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8")
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    await client.notify("textDocument/didOpen", {"textDocument": doc})
    start = time.perf_counter()
    result = await client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "branch", "base": BRANCH_BASE}]},
    )
    task_id = str(result["taskId"])
    while not client.diagnostics.get(uri):
        if client.ended(task_id):
            raise RuntimeError(f"the review ended without findings here: {client.states[-1]}")
        await asyncio.sleep(0.01)
    first = min(client.diagnostics[uri], key=lambda d: d["range"]["start"]["line"])
    line, char = first["range"]["start"]["line"], first["range"]["start"]["character"]

    storm = Storm(edits)
    sent_before = len(client.findings_sent)
    t0 = time.perf_counter()
    version = 1
    top = {"line": 0, "character": 0}
    while version - 1 < edits:
        for _ in range(min(EDITS_PER_ROUND, edits - (version - 1))):
            version += 1
            await client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": {"start": top, "end": top}, "text": "# typed\n"}],
                },
            )
        at = {"line": line + version - 1, "character": char}
        await _timed(client, storm.code_action_ms, "textDocument/codeAction", _action(uri, at))
        await _timed(client, storm.hover_ms, "textDocument/hover", _hover(uri, at))
    storm.catch_up_s = time.perf_counter() - t0
    during = client.findings_sent[sent_before:]
    storm.edit_lists = sum(1 for _, full in during if not full)
    storm.edit_bytes = sum(size for size, full in during if not full)
    storm.whole_lists = sum(1 for _, full in during if full)
    storm.whole_bytes = sum(size for size, full in during if full)

    deadline = time.monotonic() + TIMEOUT_S
    while not client.ended(task_id):
        if time.monotonic() > deadline:
            raise RuntimeError("the review did not end")
        await asyncio.sleep(0.02)
    storm.review_s = time.perf_counter() - start
    final = next(s for s in reversed(client.states) if s.get("taskId") == task_id)
    if final["state"] != "finished":
        raise RuntimeError(f"the review did not finish: {final}")
    storm.review_findings = int(final.get("findings") or 0)
    return storm


def _action(uri: str, at: dict[str, int]) -> dict[str, Any]:
    return {
        "textDocument": {"uri": uri},
        "range": {"start": at, "end": at},
        "context": {"diagnostics": [], "triggerKind": 2},
    }


def _hover(uri: str, at: dict[str, int]) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": at}


async def _timed(client: Client, into: list[float], method: str, params: Any) -> None:
    t0 = time.perf_counter()
    answer = await client.request(method, params)
    into.append((time.perf_counter() - t0) * 1000)
    if not answer:
        raise RuntimeError(f"{method} found no finding at {params}: the storm lost track")


def storm_env(tmp: Path) -> dict[str, str]:
    """No model: ruff alone reviews (bandit off: its findings are not what is measured)."""
    config = tmp / "storm.toml"
    config.write_text("[analyzers]\nruff = true\nbandit = false\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env.update(
        REDLINE_CONFIG=str(config),
        REDLINE_CACHE_DIR=str(tmp / "storm-cache"),
        REDLINE_LSP_LOG="WARNING",
    )
    return env


def baseline_server(rev: str, tmp: Path) -> tuple[list[str], dict[str, str]]:
    """The server as of git revision `rev` of this checkout (its `server/` tree extracted to a
    temporary directory with `git archive`, nothing written to the checkout), first on the
    import path: the "before" of a before/after comparison."""
    checkout = Path(__file__).resolve().parents[1]
    target = tmp / f"baseline-{rev}"
    target.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(checkout), "archive", rev, "server"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return [sys.executable, "-m", "redline.lsp"], {"PYTHONPATH": str(target / "server")}


def storm_rows(label: str, storm: Storm) -> None:
    lists = f"{storm.edit_lists} + {storm.whole_lists}"
    kb = f"{storm.edit_bytes / 1024:.0f} + {storm.whole_bytes / 1024:.0f}"
    per_edit = (storm.edit_bytes + storm.whole_bytes) / storm.edits / 1024
    for name, values in (("codeAction", storm.code_action_ms), ("hover", storm.hover_ms)):
        cells = "".join(f"{percentile(values, p):>9.1f}" for p in (50, 99))
        print(f"  {label:16}{name:12}{len(values):>5}{cells}", end="")
        print(f"{lists:>12}{kb:>14}{per_edit:>10.1f}{storm.catch_up_s:>9.2f}")
