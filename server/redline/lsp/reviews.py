"""Running reviews: what the editor asked for, the registry of jobs per workspace folder, and the
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

from redline.debate.events import DebateControl, DebateEvent
from redline.errors import UsageError
from redline.progress import CancelToken, ProgressEvent
from redline.requests import (
    MAX_ROUNDS,
    AskRequest,
    DebateRequest,
    EngineRequest,
    ReviewRequest,
    ScopeKind,
    ScopeRequest,
)

# The command argument that carries each kind's ScopeRequest.arg.
_ARG_KEYS = {
    ScopeKind.BRANCH: "base",
    ScopeKind.COMMIT: "ref",
    ScopeKind.SINCE: "ref",
    ScopeKind.RANGE: "range",
    ScopeKind.PR: "pr",
}
ASK = "ask"


@dataclass(frozen=True)
class EditorRequest:
    """A command from the editor: what to run, and in which workspace folder (a folder URI, or
    any URI inside it; None: the first folder)."""

    request: EngineRequest
    folder: str | None = None

    def describe(self) -> str:
        return self.request.describe()


def only_arg(args: tuple[Any, ...]) -> Any:
    """A command's one argument (None: none sent); more than one is the client's mistake (an
    old keymap, the wrong command), never silently ignored."""
    if len(args) > 1:
        raise UsageError(f"expected one argument, got {len(args)}")
    return args[0] if args else None


def _object(data: Any, command: str, example: str) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{command} expects one object argument, e.g. {example}")
    return data


def _text(data: dict[str, Any], key: str) -> str | None:
    """`data[key]` as text; a string, or (a PR's number) a whole number: anything else is the
    client's mistake, never its `str()` taken for a scope or a ref."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise UsageError(f"{key} must be a string, not {type(value).__name__}")
    value = str(value).strip()
    return value or None


def _folder(data: dict[str, Any]) -> str | None:
    return _text(data, "folder") or _text(data, "uri")


def review_command(data: Any) -> EditorRequest:
    """`redline.review {scope, base?, ref?, range?, pr?, folder?}`; a bare string is the scope.
    Raises UsageError naming what is wrong."""
    if isinstance(data, str):
        data = {"scope": data}
    args = _object(data, "redline.review", "{scope: 'branch'}")
    scope = _text(args, "scope") or str(ScopeKind.UNCOMMITTED)
    if scope.lower() == ASK:  # the form before redline.ask existed; editors still send it
        return ask_command(args)
    request = ReviewRequest(_scope(args, scope)).check()
    return EditorRequest(request, _folder(args))


def _scope(args: dict[str, Any], scope: str) -> ScopeRequest:
    kind = ScopeKind.parse(scope)
    key = _ARG_KEYS.get(kind)
    return ScopeRequest(kind, _text(args, key) if key else None)


def debate_command(data: Any) -> EditorRequest:
    """`redline.debate {scope, base?, ref?, range?, pr?, rounds?, folder?}`: the scope as in
    `redline.review`; `rounds` a whole number (None: the user's `debate.rounds`)."""
    if isinstance(data, str):
        data = {"scope": data}
    args = _object(data, "redline.debate", "{scope: 'branch', rounds: 3}")
    scope = _text(args, "scope") or str(ScopeKind.UNCOMMITTED)
    rounds = args.get("rounds")
    # JSON has one number type and bool is an int in Python: 2.0 is two rounds, true is not.
    # A keymap may pass it as a string.
    if isinstance(rounds, float) and rounds.is_integer():
        rounds = int(rounds)
    elif isinstance(rounds, str) and rounds.strip().isdigit():
        rounds = int(rounds.strip())
    if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, int)):
        raise UsageError(f"rounds must be a whole number from 1 to {MAX_ROUNDS}")
    request = DebateRequest(_scope(args, scope), rounds).check()
    return EditorRequest(request, _folder(args))


def ask_command(data: Any) -> EditorRequest:
    """`redline.ask {request, folder?}`; a bare string is the request."""
    if isinstance(data, str):
        data = {"request": data}
    args = _object(data, "redline.ask", "{request: 'review PR 12'}")
    request = AskRequest(_text(args, "request") or "").check()
    return EditorRequest(request, _folder(args))


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
    request: EngineRequest
    progress: WorkerProgress
    token: str  # the work-done progress token
    cancel_token: CancelToken = field(default_factory=CancelToken)
    task: asyncio.Task[None] | None = None
    started: float = field(default_factory=time.monotonic)
    progress_begun: bool = False
    # A debate's steering (interject, stop) and where its events go: set for debates only.
    control: DebateControl | None = None
    on_debate_event: Callable[[DebateEvent], None] | None = None
    # The publishing of its results under way (landing.py): each landing waits for the last.
    landing: asyncio.Future[None] | None = None

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
