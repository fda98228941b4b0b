"""Running reviews: what was asked, the registry of jobs per workspace folder, and the
cancellation that really stops a job.

The engine is synchronous and runs in a worker thread (its model stages run their own event
loop inside it with `asyncio.run`). `$/cancelRequest` cannot reach it, and cancelling the
asyncio task that awaits the thread leaves the thread running, so each job carries a
`threading.Event`: the job's Progress checks it at every stage and file and raises
`ReviewCancelled` in the worker, and any event loop the worker runs is told to cancel its tasks
(that interrupts a model call in flight instead of waiting for its answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redline.errors import UsageError

SCOPES = ("uncommitted", "staged", "branch", "commit", "since", "range", "pr", "ask")


class ReviewCancelled(asyncio.CancelledError):
    """Raised in the worker when its review was cancelled. A CancelledError, so the engine's
    task record says "cancelled" and no `except Exception` inside the engine swallows it."""


@dataclass(frozen=True)
class ReviewRequest:
    scope: str = "uncommitted"
    base: str | None = None
    ref: str | None = None
    range: str | None = None
    pr: str | None = None
    request: str | None = None  # the free-form request of `ask`
    folder: str | None = None  # workspace folder (or any URI inside it) to review

    @classmethod
    def from_args(cls, data: Any) -> ReviewRequest:
        """From the command's JSON argument; raises UsageError naming what is wrong."""
        if data is None:
            data = {}
        if isinstance(data, str):
            data = {"scope": data}
        if not isinstance(data, dict):
            raise UsageError("redline.review expects one object argument, e.g. {scope: 'branch'}")
        scope = str(data.get("scope") or "uncommitted").strip().lower()
        if scope not in SCOPES:
            raise UsageError(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")

        def text(key: str) -> str | None:
            value = data.get(key)
            if value is None:
                return None
            value = str(value).strip()
            return value or None

        req = cls(
            scope=scope,
            base=text("base"),
            ref=text("ref"),
            range=text("range"),
            pr=text("pr"),
            request=text("request"),
            folder=text("folder") or text("uri"),
        )
        req.check()
        return req

    def check(self) -> None:
        if self.scope in ("commit", "since") and not self.ref:
            raise UsageError(f"scope {self.scope!r} needs a ref")
        if self.scope == "range" and (not self.range or ".." not in self.range):
            raise UsageError("scope 'range' needs range: 'A..B' or 'A...B'")
        if self.scope == "pr" and not self.pr:
            raise UsageError("scope 'pr' needs pr: a number or URL")
        if self.scope == "ask" and not self.request:
            raise UsageError("scope 'ask' needs request: what to review, in words")

    def scope_arg(self, default_base: str | None) -> str | None:
        if self.scope == "branch":
            return self.base or default_base
        if self.scope in ("commit", "since"):
            return self.ref
        if self.scope == "range":
            return self.range
        if self.scope == "pr":
            return self.pr
        return None

    def describe(self) -> str:
        arg = self.request if self.scope == "ask" else self.scope_arg(None)
        return f"{self.scope} {arg}" if arg else self.scope


# -- progress ----------------------------------------------------------------------------------

_K_OF_N = re.compile(r"(\d+) of (\d+)")


def classify(message: str) -> tuple[str, int | None, int | None]:
    """The editor-facing stage of an engine progress message, and `k of N` when it says so."""
    low = message.lower()
    match = _K_OF_N.search(low)
    done, total = (int(match.group(1)), int(match.group(2))) if match else (None, None)
    for needle, stage in (
        ("collecting", "collecting"),
        ("splitting", "planning"),
        ("planning", "planning"),
        ("static analyzers", "analyzing"),
        ("reviewing", "reviewing"),
        ("verifying", "verifying"),
        ("summarizing", "summarizing"),
        ("review done", "done"),
    ):
        if needle in low:
            return stage, done, total
    return "working", done, total


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel("review cancelled")


class WorkerProgress:
    """The engine's Progress for one job: forwards stages to the server loop and is the point
    where a cancelled job stops."""

    def __init__(
        self,
        cancel: threading.Event,
        emit: Callable[[str, str], None],
        server_loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        self.cancel_event = cancel
        self._emit = emit
        self._server_loop = server_loop
        self._worker_loops: set[asyncio.AbstractEventLoop] = set()
        self._lock = threading.Lock()

    def check(self) -> None:
        if self.cancel_event.is_set():
            raise ReviewCancelled("review cancelled")

    def stage(self, message: str) -> None:
        self._watch_loop()
        self.check()
        self._emit("stage", message)

    def done(self, message: str) -> None:
        self.check()
        self._emit("done", message)

    def _watch_loop(self) -> None:
        # The model stages call stage() from inside their own asyncio.run(): remember that loop
        # so a cancel can interrupt the HTTP call it is awaiting. Never the server's own loop.
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if loop is self._server_loop:
            return
        with self._lock:
            self._worker_loops.add(loop)
        if self.cancel_event.is_set():
            self.stop_worker_loops()

    def stop_worker_loops(self) -> None:
        with self._lock:
            loops = list(self._worker_loops)
        for loop in loops:
            if loop.is_closed():
                continue
            with contextlib.suppress(RuntimeError):  # closed between the check and the call
                loop.call_soon_threadsafe(_cancel_all, loop)


# -- registry ----------------------------------------------------------------------------------


@dataclass
class ReviewJob:
    task_id: str
    folder: str  # workspace folder URI, as the client spelled it
    request: ReviewRequest
    progress: WorkerProgress
    token: str
    task: asyncio.Task[None] | None = None
    started: float = field(default_factory=time.monotonic)
    cancel_reason: str | None = None
    progress_begun: bool = False

    @property
    def cancelled(self) -> bool:
        return self.progress.cancel_event.is_set()

    def cancel(self, reason: str) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
        self.progress.cancel_event.set()
        self.progress.stop_worker_loops()


class ReviewRegistry:
    """At most one running review per workspace folder; every job reachable by task id and by
    progress token (for window/workDoneProgress/cancel)."""

    def __init__(self) -> None:
        self._by_folder: dict[str, ReviewJob] = {}
        self._by_id: dict[str, ReviewJob] = {}

    def start(self, job: ReviewJob) -> ReviewJob | None:
        """Register `job` as its folder's review; the one it replaces is cancelled and
        returned (the caller says so in the log and waits for it to wind down)."""
        previous = self._by_folder.get(job.folder)
        if previous is not None:
            previous.cancel(f"superseded by review {job.task_id}")
        self._by_folder[job.folder] = job
        self._by_id[job.task_id] = job
        return previous

    def finish(self, job: ReviewJob) -> None:
        if self._by_folder.get(job.folder) is job:
            del self._by_folder[job.folder]
        self._by_id.pop(job.task_id, None)

    def current(self, folder: str) -> ReviewJob | None:
        return self._by_folder.get(folder)

    def is_current(self, job: ReviewJob) -> bool:
        return self._by_folder.get(job.folder) is job and not job.cancelled

    def get(self, task_id: str) -> ReviewJob | None:
        return self._by_id.get(task_id)

    def by_token(self, token: str | int) -> ReviewJob | None:
        return next((j for j in self._by_id.values() if j.token == str(token)), None)

    def running(self) -> list[ReviewJob]:
        return list(self._by_id.values())
