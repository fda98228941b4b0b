"""Project memory kept fresh in the background while the user edits, never delaying a request.

When it builds, per workspace folder:
- the first time in a session, once the user has been idle `memoryIdleDelay` seconds (no
  edit, save or change on disk): a whole-tree build. The builder is incremental by blob, so
  where memory was built before this catches up with what changed while the editor was
  closed (a pull, a checkout) cheaply; where it was never built, this is its full build;
- after that, shortly after a save: the saved files (a "save all" is one refresh);
- files changed on disk by others (the client's file watcher: a checkout, a formatter) when
  the user is next idle; past `MAX_PENDING` of them, one whole-tree build again.

How it builds: memory_process.py's worker (the installed CLI's `redline memory worker`, the
same hardened builder as every build), one per repository, started when its first build is
due and kept: it keeps the embedding model loaded, so a one-file refresh costs the refresh
alone (and a refresh embeds only the functions whose text changed: build.py keeps the others'
stored vectors). One build at a time for the whole server, at the lowest CPU and I/O
priority, awaited on the event loop. Saves during a build are coalesced into the next one. A
worker that died is started again at the next refresh. `shutdown`, `exit`, and the setting
turned off kill the workers (a running build with them: no orphan left).

A folder that is not inside a git repository is skipped quietly (memory is per repository). A
failed build is a warning in the server's log; after `FAIL_LIMIT` failures in a row the user
is told once, with the build's own reason, and the folder is left alone for the session.

Settings (settings.py): `memoryRefresh` (default on), `memoryIdleDelay` (seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

from redline.lsp import memory_process, publish, uris

if TYPE_CHECKING:
    from pygls.workspace import Workspace

    from redline.lsp.settings import LspSettings


class RefreshHost(Protocol):
    """What the refresher needs of the language server (RedlineServer is one): its settings,
    workspace folders, loop and messages. A protocol, so that language_server.py can own a
    refresher without the two modules importing each other."""

    settings: LspSettings

    @property
    def workspace(self) -> Workspace: ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...

    def log_message(self, message: str, kind: types.MessageType = ...) -> None: ...

    def show_message(self, message: str, kind: types.MessageType = ...) -> None: ...


log = logging.getLogger("redline.lsp")

# Seconds after a save before its refresh starts: an editor's "save all" sends its didSave
# notifications within milliseconds (one refresh for all); saves during a refresh are
# coalesced into the next one anyway. Short: it is part of what the user waits for.
SAVE_DEBOUNCE = 0.05
MAX_PENDING = 500  # files changed on disk past this: one whole-tree build instead
FAIL_LIMIT = 3  # failures in a row before the user is told and the folder left alone

ArgvFor = Callable[[Path], list[str]]  # the worker's argv for a repository root


def default_argv(root: Path) -> list[str]:
    return memory_process.bootstrap_argv(memory_process.worker_args(root))


@dataclass
class FolderMemory:
    """What the refresher knows of one workspace folder."""

    uri: str
    path: Path
    root: Path | None = None  # the git work tree; found off the loop before the first build
    skipped: bool = False  # not in a git repository: never built
    full_due: bool = True  # the session's first (whole-tree) build is still to come
    pending: set[Path] = field(default_factory=set)  # saved or changed files not yet refreshed
    failures: int = 0  # in a row
    paused: bool = False  # FAIL_LIMIT reached: left alone until the server restarts
    runs: int = 0  # builds that succeeded
    last_seconds: float | None = None  # the last successful build's wall time (start-up too)
    last_error: str | None = None


class MemoryRefresher:
    """The scheduler: timers on the event loop, one build at a time (see the module doc)."""

    def __init__(self, ls: RefreshHost, argv_for: ArgvFor = default_argv) -> None:
        self.ls = ls
        self.argv_for = argv_for
        self.folders: dict[str, FolderMemory] = {}  # by folder uri key
        self.ready: list[FolderMemory] = []  # due now, in order
        self.last_activity = 0.0
        self.idle_timer: asyncio.TimerHandle | None = None
        self.save_timer: asyncio.TimerHandle | None = None
        self.worker: asyncio.Task[None] | None = None
        self.current: tuple[FolderMemory, int] | None = None  # the build running, its pid
        self.workers: dict[Path, memory_process.MemoryWorker] = {}  # by repository root
        self.stopped = False

    # -- settings --------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self.ls.settings.memory_refresh and not self.stopped

    @property
    def idle_delay(self) -> float:
        return self.ls.settings.memory_idle_delay

    # -- what the handlers tell it ----------------------------------------------------------

    def start(self) -> None:
        """After `initialized` (and when the setting is turned on): every workspace folder is
        known, and the idle timer runs."""
        if not self.enabled:
            return
        for uri in self._workspace_folders():
            self._folder_state(uri)
        self.activity()

    def activity(self) -> None:
        """The user did something (an edit, a save): the idle delay starts again. Cheap: it
        runs on every keystroke (the timer is re-armed only when it fires early)."""
        if not self.enabled:
            return
        self.last_activity = time.monotonic()
        if self.idle_timer is None:
            self.idle_timer = self._loop().call_later(self.idle_delay, self._idle_check)

    def saved(self, uri: str) -> None:
        """A document was saved: refresh it soon (once the whole tree was built)."""
        if not self._note_file(uri):
            return
        if self.save_timer is not None:
            self.save_timer.cancel()
        self.save_timer = self._loop().call_later(SAVE_DEBOUNCE, self._save_due)

    def changed_on_disk(self, uri: str) -> None:
        """The client's file watcher saw a change: refreshed when the user is next idle."""
        self._note_file(uri)

    def settings_changed(self) -> None:
        if self.ls.settings.memory_refresh:
            self.start()
        else:
            self.stop(kill=True, final=False)

    def stop(self, *, kill: bool = True, final: bool = True) -> None:
        """`shutdown` (final) or the setting turned off: no timer left, the build killed."""
        self.stopped = self.stopped or final
        for timer in (self.idle_timer, self.save_timer):
            if timer is not None:
                timer.cancel()
        self.idle_timer = self.save_timer = None
        self.ready.clear()
        if kill and self.worker is not None:
            self.worker.cancel()  # a request cancelled kills its worker's process group
        if kill:
            for worker in self.workers.values():
                worker.kill()
            self.workers.clear()
            memory_process.kill_running()

    def describe(self) -> dict[str, Any]:
        """For `redline/debugInfo`: tests and bug reports."""
        running = self.current
        # "running" from the moment the worker takes a folder's work (its paths are no longer
        # pending, its process not yet started) to the end of the build: a client waiting for
        # "idle" must not see it in between.
        working = self.worker is not None and not self.worker.done()
        due = (
            bool(self.ready)
            or self.save_timer is not None
            or any(f.full_due or f.pending for f in self.folders.values() if _buildable(f))
        )
        state = "off" if not self.enabled else "running" if working else "due" if due else "idle"
        return {
            "enabled": self.enabled,
            "state": state,
            "idleDelay": self.idle_delay,
            "pid": running[1] if running else None,
            "folders": [
                {
                    "uri": f.uri,
                    "root": str(f.root) if f.root else None,
                    "skipped": f.skipped,
                    "fullDue": f.full_due,
                    "pending": sorted(str(p) for p in f.pending),
                    "runs": f.runs,
                    "lastSeconds": f.last_seconds,
                    "failures": f.failures,
                    "paused": f.paused,
                    "lastError": f.last_error,
                }
                for f in self.folders.values()
            ],
        }

    # -- scheduling -------------------------------------------------------------------------

    def _loop(self) -> asyncio.AbstractEventLoop:
        return self.ls.loop or asyncio.get_running_loop()

    def _workspace_folders(self) -> list[str]:
        found = [f.uri for f in self.ls.workspace.folders.values()]
        if not found and self.ls.workspace.root_uri:
            found = [self.ls.workspace.root_uri]
        return found

    def _folder_state(self, uri: str) -> FolderMemory | None:
        key = uris.key(uri)
        state = self.folders.get(key)
        if state is None:
            path = publish.uri_path(uri)
            if path is None:
                return None
            state = self.folders[key] = FolderMemory(uri=uri, path=path)
        return state

    def _folder_of(self, path: Path) -> FolderMemory | None:
        """The innermost workspace folder holding `path`."""
        for uri in self._workspace_folders():
            self._folder_state(uri)
        holding = [f for f in self.folders.values() if path.is_relative_to(f.path)]
        return max(holding, key=lambda f: len(f.path.parts), default=None)

    def _note_file(self, uri: str) -> bool:
        if not self.enabled:
            return False
        self.activity()
        path = publish.uri_path(uri)
        if path is None or ".git" in path.parts:
            return False
        folder = self._folder_of(path)
        if folder is None or not _buildable(folder):
            return False
        folder.pending.add(path)
        if len(folder.pending) > MAX_PENDING:
            folder.pending.clear()
            folder.full_due = True
        return True

    def _idle_check(self) -> None:
        self.idle_timer = None
        if not self.enabled:
            return
        quiet = time.monotonic() - self.last_activity
        if quiet < self.idle_delay:  # an edit since the timer was armed: wait the rest
            self.idle_timer = self._loop().call_later(self.idle_delay - quiet, self._idle_check)
            return
        self._due([f for f in self.folders.values() if f.full_due or f.pending])

    def _save_due(self) -> None:
        self.save_timer = None
        # Not before the session's whole-tree build: that one waits for the user to be idle,
        # and reads the saved files anyway.
        self._due([f for f in self.folders.values() if f.pending and not f.full_due])

    def _due(self, folders: list[FolderMemory]) -> None:
        for folder in folders:
            if _buildable(folder) and folder not in self.ready:
                self.ready.append(folder)
        if self.ready and (self.worker is None or self.worker.done()):
            self.worker = self._loop().create_task(self._work())

    async def _work(self) -> None:
        """Build what is ready, one folder at a time, until nothing is."""
        while self.ready and self.enabled:
            folder = self.ready.pop(0)
            try:
                await self._refresh(folder)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug here must not stop the server's loop
                log.exception("memory refresh of %s failed", folder.path)
                self._failed(folder, f"{type(exc).__name__}: {exc}")

    async def _refresh(self, folder: FolderMemory) -> None:
        if folder.root is None:
            folder.root = await asyncio.to_thread(_repo_root, folder.path)
            if folder.root is None:
                folder.skipped = True  # not a git repository: quietly never built
                folder.pending.clear()
                log.info("memory refresh: %s is not in a git repository, skipped", folder.path)
                return
        full = folder.full_due
        taken = set(folder.pending)
        folder.pending.clear()
        paths = None if full else await asyncio.to_thread(_repo_paths, folder.root, taken)
        if paths is not None and not paths:
            return
        what = "the whole tree" if paths is None else _files(len(paths))
        root = folder.root
        try:
            worker = await self._worker(root)
            self.current = (folder, worker.pid)
            run = await worker.request(paths)
            if not run.ok and not worker.alive and worker.served:
                # A worker that had served died while idle (killed, the OOM killer) or on
                # this request: once more with a new one, then it counts as a failure.
                self.workers.pop(root, None)
                worker = await self._worker(root)
                self.current = (folder, worker.pid)
                run = await worker.request(paths)
        except asyncio.CancelledError:
            folder.pending |= taken
            raise
        except OSError as exc:  # the interpreter could not be started
            folder.pending |= taken
            self._failed(folder, f"cannot start the build: {exc}")
            return
        finally:
            self.current = None
        if not worker.alive:
            self.workers.pop(root, None)  # the next refresh starts another
        if run.ok:
            folder.full_due = False if full else folder.full_due
            folder.failures, folder.last_error = 0, None
            folder.runs += 1
            folder.last_seconds = run.seconds
            self.ls.log_message(
                f"Redline: project memory refreshed ({what}) in {run.seconds:.1f} s",
                types.MessageType.Log,
            )
        else:
            folder.pending |= taken
            self._failed(folder, run.reason())

    async def _worker(self, root: Path) -> memory_process.MemoryWorker:
        """The repository's worker, started when none runs (the first refresh, or the last
        one died or was killed)."""
        worker = self.workers.get(root)
        if worker is not None and worker.alive:
            return worker
        worker = await memory_process.MemoryWorker.start(self.argv_for(root), root)
        self.workers[root] = worker
        self.ls.log_message(
            f"Redline: project memory worker for {root} started (pid {worker.pid})",
            types.MessageType.Log,
        )
        return worker

    def _failed(self, folder: FolderMemory, reason: str) -> None:
        folder.failures += 1
        folder.last_error = reason
        self.ls.log_message(
            f"Redline: background memory refresh of {folder.root or folder.path} failed: {reason}",
            types.MessageType.Warning,
        )
        if folder.failures >= FAIL_LIMIT and not folder.paused:
            folder.paused = True
            self.ls.show_message(
                f"Redline: the background memory refresh failed {folder.failures} times in a "
                f"row ({reason}). It is paused for {folder.path.name} until the language "
                "server restarts; `redline memory build` in a terminal shows the whole error, "
                "and the setting redline.memoryRefresh turns it off.",
                types.MessageType.Warning,
            )


def _buildable(folder: FolderMemory) -> bool:
    return not (folder.skipped or folder.paused)


def _repo_root(path: Path) -> Path | None:
    """The work tree holding `path`, found by Redline's hardened discovery; None outside one."""
    from redline.errors import RedlineError
    from redline.git.runner import find_repo_root

    with contextlib.suppress(RedlineError, OSError):
        return find_repo_root(path)
    return None


def _repo_paths(root: Path, paths: set[Path]) -> list[str]:
    """`paths` as the repository's relative paths, those outside it or in `.git` left out.
    A client may name a file through a linked directory (`/tmp` for `/private/tmp`): its
    directory is resolved, never the file itself (a link to outside stays a path inside,
    and the builder's hardened read refuses it)."""
    top = Path(os.path.realpath(root))
    out: set[str] = set()
    for path in paths:
        where = Path(os.path.realpath(path.parent)) / path.name
        if not where.is_relative_to(top):
            continue
        rel = where.relative_to(top)
        if rel.parts and ".git" not in rel.parts:
            out.add(rel.as_posix())
    return sorted(out)


def _files(count: int) -> str:
    return "1 file" if count == 1 else f"{count} files"
