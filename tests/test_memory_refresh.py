"""The language server's background memory refresh (lsp/memory_refresh.py, memory_process.py):
its scheduling on a real event loop, with real subprocesses started through the real bootstrap
— a stand-in build (tests/fake_memory_build.py) in place of `redline memory build`, so what is
asserted here is when builds start, with which paths, how (priority, environment, stdin, the
working directory not on sys.path) and how they end. tests/test_lsp_memory_refresh.py and
tests/test_neovim_memory.py run the real server with the real CLI."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path

from redline.lsp import memory_process
from redline.lsp.memory_refresh import MemoryRefresher
from redline.lsp.settings import LspSettings, merge_settings

from gitrepo import GitRepo

TESTS = Path(__file__).resolve().parent


@dataclass
class FakeServer:
    """What MemoryRefresher uses of the server: settings, workspace folders, messages."""

    settings: LspSettings
    workspace: Any
    loop: asyncio.AbstractEventLoop | None = None

    def __post_init__(self) -> None:
        self.logs: list[tuple[types.MessageType, str]] = []
        self.shown: list[tuple[types.MessageType, str]] = []

    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.logs.append((kind, message))

    def show_message(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        self.shown.append((kind, message))


def uri(path: Path) -> str:
    found = from_fs_path(str(path))
    assert found is not None
    return found


class Bed:
    """A refresher over one folder, builds run by the stand-in, their records read back."""

    def __init__(self, tmp: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, **settings: Any):
        self.folder = folder
        self.log = tmp / "builds.jsonl"
        monkeypatch.setenv("FAKE_BUILD_LOG", str(self.log))
        monkeypatch.setenv("PYTHONPATH", str(TESTS))  # where the stand-in is imported from
        base = replace(LspSettings(), memory_idle_delay=0.2)
        self.server = FakeServer(
            merge_settings(base, settings),
            SimpleNamespace(folders={uri(folder): SimpleNamespace(uri=uri(folder))}, root_uri=None),
        )

        def argv_for(root: Path) -> list[str]:
            args = memory_process.worker_args(root)
            return memory_process.bootstrap_argv(args, entry="fake_memory_build")

        self.refresher = MemoryRefresher(self.server, argv_for)  # type: ignore[arg-type]
        BEDS.append(self)

    def records(self, event: str = "start") -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        rows = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [r for r in rows if r["event"] == event]

    def built(self) -> list[list[str]]:
        return [r["args"] for r in self.records()]

    async def until(self, check: Any, timeout: float = 30.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not check():
            assert asyncio.get_running_loop().time() < deadline, self.refresher.describe()
            await asyncio.sleep(0.02)

    async def settled(self, builds: int) -> None:
        """`builds` builds have ended and nothing more is running or due."""
        await self.until(
            lambda: (
                len(self.records("end")) >= builds
                and self.refresher.describe()["state"] in ("idle", "off")
            )
        )


BEDS: list[Bed] = []


@pytest.fixture(autouse=True)
async def _workers_stopped() -> Any:
    """Each test's workers killed and reaped while its event loop still runs."""
    yield
    while BEDS:
        refresher = BEDS.pop().refresher
        workers = list(refresher.workers.values())
        refresher.stop()
        for worker in workers:
            await worker.proc.wait()


@pytest.fixture
def git_folder(tmp_path: Path) -> Path:
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "def a():\n    return 1\n")
    repo.write("b.py", "def b():\n    return 2\n")
    repo.commit("two files")
    return repo.root


async def test_idle_builds_the_tree_then_saves_refresh_their_files_coalesced(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bed = Bed(tmp_path, git_folder, monkeypatch)
    monkeypatch.setenv("FAKE_BUILD_SLEEP", "1.5")
    bed.refresher.start()
    # Idle: the session's whole-tree build.
    await bed.until(lambda: len(bed.records()) == 1)
    whole = ["memory", "build", "--quiet", "--repo", str(git_folder)]
    assert bed.built() == [whole]
    # Saved while it runs (twice the same file, one twice): one refresh of both, after it.
    for name in ("b.py", "a.py", "b.py"):
        bed.refresher.saved(uri(git_folder / name))
    await bed.settled(2)
    assert bed.built() == [whole, [*whole, "--", "a.py", "b.py"]]
    starts, ends = bed.records(), bed.records("end")
    assert starts[1]["start"] >= ends[0]["end"], "two builds ran at once"

    # How each ran: in one worker process, started once (the model loaded once); the
    # repository as working directory but not on sys.path (the repository's modules are never
    # imported), lowest priority, its own group.
    assert len({record["pid"] for record in starts}) == 1
    for record in starts:
        assert record["cwd"] == str(git_folder)
        assert record["path0"] != "" and Path(record["path0"]).resolve() != git_folder.resolve()
        assert record["nice"] == 19
        assert record["ppid"] == os.getpid()
        assert record["pgid"] == record["pid"]
        if shutil.which("ionice"):
            assert record["io"] == "idle", record["io"]
    started = [m for kind, m in bed.server.logs if "project memory worker for" in m]
    assert len(started) == 1 and f"(pid {starts[0]['pid']})" in started[0]
    refreshed = [m for kind, m in bed.server.logs if "project memory refreshed" in m]
    assert len(refreshed) == 2 and "(2 files)" in refreshed[1]
    assert bed.server.shown == []

    # A later save alone: its file only; a path outside the repository or in .git is not sent.
    bed.refresher.saved(uri(git_folder / "a.py"))
    bed.refresher.saved(uri(git_folder / ".git" / "config"))
    bed.refresher.saved(uri(tmp_path / "elsewhere.py"))
    await bed.settled(3)
    assert bed.built()[-1] == [*whole, "--", "a.py"]


async def test_no_save_refresh_before_the_tree_was_built_once(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save before the user was ever idle waits for the whole-tree build (which reads it)."""
    bed = Bed(tmp_path, git_folder, monkeypatch, memoryIdleDelay=1.0)
    bed.refresher.start()
    bed.refresher.saved(uri(git_folder / "a.py"))
    await asyncio.sleep(0.7)  # past the save debounce, before the idle delay
    assert bed.built() == []
    await bed.settled(1)
    assert bed.built() == [["memory", "build", "--quiet", "--repo", str(git_folder)]]


async def test_typing_keeps_postponing_the_idle_build(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bed = Bed(tmp_path, git_folder, monkeypatch, memoryIdleDelay=0.5)
    bed.refresher.start()
    for _ in range(10):  # a keystroke every 0.1 s for 1 s: never idle for 0.5 s
        bed.refresher.activity()
        await asyncio.sleep(0.1)
    assert bed.built() == []
    await bed.settled(1)


async def test_setting_off_means_no_build(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bed = Bed(tmp_path, git_folder, monkeypatch, memoryRefresh=False)
    bed.refresher.start()
    bed.refresher.saved(uri(git_folder / "a.py"))
    bed.refresher.activity()
    assert bed.refresher.describe()["state"] == "off"
    assert bed.refresher.idle_timer is None and bed.refresher.save_timer is None
    await asyncio.sleep(0.5)  # past the idle delay (0.2 s): still nothing
    assert bed.built() == []


async def test_a_folder_outside_git_is_skipped_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "x.py").write_text("x = 1\n")
    bed = Bed(tmp_path, plain, monkeypatch)
    bed.refresher.start()
    await bed.until(lambda: bed.refresher.describe()["folders"][0]["skipped"])
    bed.refresher.saved(uri(plain / "x.py"))
    await asyncio.sleep(0.8)
    assert bed.built() == []
    assert bed.server.shown == [] and bed.server.logs == []
    assert bed.refresher.describe()["state"] == "idle"


async def test_repeated_failures_tell_the_user_once_why(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bed = Bed(tmp_path, git_folder, monkeypatch)
    monkeypatch.setenv("FAKE_BUILD_EXIT", "2")
    monkeypatch.setenv("FAKE_BUILD_STDERR", "progress...\nredline: memory: the disk is full\n")
    bed.refresher.start()
    for attempt in range(1, 6):  # each idle spell retries, until it pauses
        await asyncio.sleep(0.4)
        bed.refresher.activity()
        await bed.until(lambda: bed.refresher.describe()["state"] != "running")
        await asyncio.sleep(0.1)
        del attempt
    assert len(bed.built()) == 3, bed.built()
    warnings = [m for kind, m in bed.server.logs if kind == types.MessageType.Warning]
    assert len(warnings) == 3
    assert all(m.endswith("failed: redline: memory: the disk is full") for m in warnings)
    assert len(bed.server.shown) == 1, bed.server.shown
    kind, message = bed.server.shown[0]
    assert kind == types.MessageType.Warning
    assert "failed 3 times in a row (redline: memory: the disk is full)" in message
    assert "redline.memoryRefresh" in message
    assert bed.refresher.describe()["folders"][0]["paused"] is True


async def test_stop_kills_the_running_build_and_what_it_started(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bed = Bed(tmp_path, git_folder, monkeypatch)
    monkeypatch.setenv("FAKE_BUILD_SLEEP", "600")
    monkeypatch.setenv("FAKE_BUILD_GRANDCHILD", "1")
    bed.refresher.start()
    await bed.until(lambda: len(bed.records()) == 1)
    record = bed.records()[0]
    assert bed.refresher.describe()["pid"] == record["pid"]
    bed.refresher.stop()
    await bed.until(lambda: not _alive(record["pid"]) and not _alive(record["grandchild"]))
    assert memory_process.running_pids() == []
    assert bed.refresher.describe()["state"] == "off"


async def test_turning_the_setting_off_kills_the_build(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bed = Bed(tmp_path, git_folder, monkeypatch)
    monkeypatch.setenv("FAKE_BUILD_SLEEP", "600")
    bed.refresher.start()
    await bed.until(lambda: len(bed.records()) == 1)
    pid = bed.records()[0]["pid"]
    bed.server.settings = merge_settings(bed.server.settings, {"memoryRefresh": False})
    bed.refresher.settings_changed()
    await bed.until(lambda: not _alive(pid))
    assert bed.refresher.describe()["state"] == "off"


def _alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_idle_is_said_only_once_the_saved_file_is_in(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`redline/debugInfo`'s state is what a client waits on ("idle": what was saved is in
    memory): from a save to the end of its refresh it never says idle — not in the moment
    between taking the saved paths and the build's process starting."""
    bed = Bed(tmp_path, git_folder, monkeypatch)
    bed.refresher.start()
    await bed.settled(1)
    # From now on only the save starts a build (not the idle timer).
    bed.server.settings = replace(bed.server.settings, memory_idle_delay=60.0)
    bed.refresher.saved(uri(git_folder / "a.py"))
    seen: list[str] = []
    while len(bed.records("end")) < 2:
        seen.append(bed.refresher.describe()["state"])
        await asyncio.sleep(0)  # every turn of the loop
    assert "idle" not in seen, sorted(set(seen))
    await bed.settled(2)


async def test_one_worker_serves_every_refresh_and_a_dead_one_is_replaced(
    tmp_path: Path, git_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker is started once, when the first build is due, and kept for the saves after
    it; killed (the OOM killer), the next save's refresh starts another and succeeds."""
    bed = Bed(tmp_path, git_folder, monkeypatch)
    bed.refresher.start()
    await bed.settled(1)
    bed.refresher.saved(uri(git_folder / "a.py"))
    await bed.settled(2)
    first = {r["pid"] for r in bed.records()}
    assert len(first) == 1
    (pid,) = first
    assert _alive(pid), "the worker waits for the next refresh"

    os.kill(pid, 9)  # the save right after: the server may not have seen it die yet
    bed.refresher.saved(uri(git_folder / "b.py"))
    await bed.settled(3)
    last = bed.records()[-1]
    assert last["pid"] != pid and last["args"][-2:] == ["--", "b.py"]
    state = bed.refresher.describe()["folders"][0]
    assert state["runs"] == 3 and state["failures"] == 0, state
    started = [m for kind, m in bed.server.logs if "project memory worker for" in m]
    assert len(started) == 2

    bed.refresher.stop()  # shutdown: the idle worker goes too
    await bed.until(lambda: not _alive(last["pid"]))
    assert memory_process.running_pids() == []
