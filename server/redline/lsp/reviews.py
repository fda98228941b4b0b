"""Running reviews: what was asked, the registry of jobs per workspace folder, and the
cancellation that really stops a job.

The engine is synchronous and runs in a worker thread (its model stages run their own event
loop inside it with `asyncio.run`). `$/cancelRequest` cannot reach it, and cancelling the
asyncio task that awaits the thread leaves the thread running, so each job carries the
engine's `CancelToken`: the engine checks it at every stage and file and raises `Cancelled` in
the worker, and the event loops the engine attached to it are told to cancel their tasks (that
interrupts a model call in flight instead of waiting for its answer).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redline.errors import UsageError
from redline.progress import CancelToken, ProgressEvent

SCOPES = ("uncommitted", "staged", "branch", "commit", "since", "range", "pr", "ask")


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


class WorkerProgress:
    """The engine's Progress for one job: hands each event to the server loop (`emit` is
    called in the worker thread). Cancellation is the job's CancelToken, not this."""

    def __init__(self, emit: Callable[[ProgressEvent], None]) -> None:
        self._emit = emit

    def report(self, event: ProgressEvent) -> None:
        self._emit(event)


# -- registry ----------------------------------------------------------------------------------


@dataclass
class ReviewJob:
    task_id: str
    folder: str  # workspace folder URI, as the client spelled it
    request: ReviewRequest
    progress: WorkerProgress
    token: str  # the work-done progress token
    cancel_token: CancelToken = field(default_factory=CancelToken)
    task: asyncio.Task[None] | None = None
    started: float = field(default_factory=time.monotonic)
    progress_begun: bool = False

    @property
    def cancelled(self) -> bool:
        return self.cancel_token.cancelled

    @property
    def cancel_reason(self) -> str | None:
        return self.cancel_token.reason

    def cancel(self, reason: str) -> None:
        self.cancel_token.cancel(reason)


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
