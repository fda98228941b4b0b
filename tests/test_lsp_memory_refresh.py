"""The language server's background memory refresh, end to end: pytest-lsp drives `python -m
redline.lsp` in a real git repository, and the builds are the installed CLI's `redline memory
build` (tests/test_memory_refresh.py tests the scheduling with a stand-in build;
tests/test_neovim_memory.py the whole edit → save → search loop in Neovim).

- requests stay prompt while a build runs: a hover and a code action are answered while the
  build's process is still running (not a wall-time threshold);
- `shutdown` while a build runs leaves no process behind (the build, or anything it started);
- the setting off: no build, ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from gitrepo import GitRepo
from lsp_support import Session, server_env, start_session, stop_session
from real_clients import REDLINE

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")

BUILD_TIMEOUT = 150.0  # seconds: a whole build at the lowest priority on a busy 2-core machine


def _module(index: int) -> str:
    """A module of 30 documented functions: a build of a few hundred symbols, long enough
    (embedding) to still be running when the requests below are answered."""
    parts = [f'"""Module {index}: helpers for the ledger."""\n']
    for n in range(30):
        parts.append(
            f"def settle_account_{index}_{n}(ledger, amount):\n"
            f'    """Settle account {n} of ledger {index}: move the amount and log it."""\n'
            f"    ledger.move(amount, {n})\n"
            f"    return ledger.log('settled {index}.{n}')\n\n"
        )
    return "\n".join(parts)


@pytest.fixture
def project(repo: GitRepo) -> GitRepo:
    for index in range(12):
        repo.write(f"pkg/mod_{index}.py", _module(index))
    repo.write("app.py", "def main():\n    return 1\n")
    repo.commit("init")
    return repo


@pytest.fixture
async def refreshing(project: GitRepo, tmp_path: Path) -> AsyncIterator[Session]:
    """A session whose memory refresh starts its whole-tree build as soon as it is idle."""
    session = await start_session(
        project.root,
        "vscode",
        server_env(tmp_path / "cache"),
        init_options={"memoryRefresh": True, "memoryIdleDelay": 0.2},
    )
    yield session
    if session.client.error is None and not getattr(session, "stopped", False):
        await stop_session(session)


async def _build_running(session: Session) -> int:
    """The pid of the memory build once one runs (its start is logged)."""

    async def poll() -> int:
        while True:
            state = (await session.debug_info())["memoryRefresh"]
            folder = state["folders"][0] if state["folders"] else {}
            assert not folder.get("failures"), folder.get("lastError")
            if state["pid"]:
                return int(state["pid"])
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), BUILD_TIMEOUT)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _group(pgid: int) -> list[int]:
    """Live processes of a process group."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _logged(session: Session, text: str) -> list[int]:
    return [i for i, m in enumerate(session.client.log_messages) if text in m.message]


async def test_hover_and_code_action_are_answered_while_a_build_runs(
    refreshing: Session,
) -> None:
    session = refreshing
    uri = session.open("app.py")
    pid = await _build_running(session)
    assert _alive(pid)
    # The lowest CPU priority: the child sets it first thing, before importing anything.
    await session.until(lambda: os.getpriority(os.PRIO_PROCESS, pid) == 19, 10, "nice 19")

    hover = await session.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=5),
        )
    )
    hover_answered_while_running = _alive(pid)
    logged_before_hover = len(session.client.log_messages)
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(0, 0), end=types.Position(1, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    action_answered_while_running = _alive(pid)
    del hover, actions  # no review ran: nothing to show; what matters is when they came

    # Both were answered while the build's process still ran, and before the server said the
    # build was done; the build then finished successfully.
    assert hover_answered_while_running and action_answered_while_running
    await session.until(
        lambda: _logged(session, "project memory refreshed") or _logged(session, "failed"),
        BUILD_TIMEOUT,
        "the build to end",
    )
    assert not _logged(session, "failed"), [m.message for m in session.client.log_messages]
    assert _logged(session, "project memory refreshed")[0] >= logged_before_hover
    state = (await session.debug_info())["memoryRefresh"]
    assert state["folders"][0]["runs"] == 1 and state["folders"][0]["failures"] == 0, state


async def test_shutdown_while_a_build_runs_leaves_no_process(refreshing: Session) -> None:
    session = refreshing
    server_pid = int((await session.debug_info())["pid"])
    pid = await _build_running(session)
    assert _group(pid), "the build runs in a process group of its own"

    await stop_session(session)
    session.stopped = True  # type: ignore[attr-defined]

    async def gone() -> None:
        while _alive(server_pid) or _group(pid):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(gone(), 10)
    assert not _logged(session, "project memory refreshed")  # it did not get to finish


async def test_a_server_killed_outright_takes_its_build_along(refreshing: Session) -> None:
    """No `shutdown`, no `exit`: the server is SIGKILLed mid-build (an editor crash, the OOM
    killer). The build must not run on as an orphan: the kernel kills it (its death signal)."""
    session = refreshing
    server_pid = int((await session.debug_info())["pid"])
    pid = await _build_running(session)
    # The child sets its death signal first thing and its CPU priority last: once it is nice,
    # it will die with the server.
    await session.until(lambda: os.getpriority(os.PRIO_PROCESS, pid) == 19, 10, "nice 19")
    os.kill(server_pid, signal.SIGKILL)

    async def gone() -> None:
        while _alive(pid) or _group(pid):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(gone(), 10)
    session.stopped = True  # type: ignore[attr-defined]
    with contextlib.suppress(Exception):
        await session.client.stop()


async def test_the_setting_off_means_no_build(project: GitRepo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    session = await start_session(
        project.root,
        "vscode",
        server_env(cache),
        init_options={"memoryRefresh": False, "memoryIdleDelay": 0.2},
    )
    try:
        uri = session.open("app.py")
        session.edit("app.py", 2, types.Range(types.Position(1, 11), types.Position(1, 12)), "2")
        session.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        await asyncio.sleep(1.0)  # well past the idle delay and the save's debounce
        info = await session.debug_info()
        state: dict[str, Any] = info["memoryRefresh"]
        assert state["enabled"] is False and state["state"] == "off" and state["pid"] is None
        assert not _logged(session, "memory")
    finally:
        await stop_session(session)
    assert not (cache / "memory").exists()
    status = subprocess.run(
        [str(REDLINE), "memory", "status", "--repo", str(project.root), "--format", "json"],
        env=server_env(cache),
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"built": false' in status.stdout, status.stdout
