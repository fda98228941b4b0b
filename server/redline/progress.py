"""The engine → caller contract while a review runs: typed progress events and cancellation.

The engine reports what it is doing as `ProgressEvent`s (a stage, `done` of `total` where the
stage counts something, the text a person reads, and the tokens and cost spent so far) to a
`Progress` sink. Callers decide how to show them: the CLI draws the text on stderr, the
language server turns them into work-done progress and `redline/reviewState` notifications
(the editor's sidebar and status bar). A sink never raises and never decides anything.

Cancellation is separate: a `CancelToken` the caller owns and the engine checks explicitly
before each stage and each file (`check()` raises `Cancelled`). A token can also interrupt
the event loops the model stages run in, so a cancel stops a model call in flight instead of
waiting for its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from redline.cli.progress_line import LiveLine


class Stage(StrEnum):
    """Where a run is, in the order a review passes through them (ask: asking → verifying)."""

    COLLECTING = "collecting"  # the scope's diff
    SPLITTING = "splitting"  # the diff into review units, and the rules
    ANALYZING = "analyzing"  # the static analyzers
    PLANNING = "planning"  # the model's planner
    REVIEWING = "reviewing"  # per-file model reviewers; done/total count files
    ASKING = "asking"  # the `ask` agent and its tool calls; done counts tool calls
    DEBATING = "debating"  # the debaters' turns; done/total count turns
    VERIFYING = "verifying"
    SUMMARIZING = "summarizing"
    DONE = "done"  # the last event of a run, successful or not


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a run. Its text is redacted when the event is made (`__post_init__`): every
    sink — the CLI's stderr, the editor's work-done progress and reviewState — shows an event,
    none can show a secret in one (a tool argument an agent passed, a file named after a
    token), whichever stage or code path made it."""

    stage: Stage
    text: str  # for a person: "reviewing files: 3 of 7 done (attempt 1)"
    done: int | None = None
    total: int | None = None
    tokens: int | None = None  # spent so far by the model calls (None: no model in this run)
    cost_usd: float | None = None  # None when unknown (no model, or a model without a price)

    def __post_init__(self) -> None:
        from redline.redaction import redact  # cheap: detect-secrets loads on first need

        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, str) and not isinstance(value, Stage):
                object.__setattr__(self, f.name, redact(value))

    @property
    def fraction(self) -> float | None:
        if self.done is None or not self.total:
            return None
        return min(1.0, self.done / self.total)


class Progress(Protocol):
    def report(self, event: ProgressEvent) -> None: ...


class NullProgress:
    def report(self, event: ProgressEvent) -> None:
        pass


class Cancelled(asyncio.CancelledError):
    """Raised in the engine when its run was cancelled through its token. A CancelledError, so
    task records say "cancelled" and no `except Exception` inside the engine swallows it."""


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel("review cancelled")


class CancelToken:
    """Set once, from any thread; checked by the engine, in its own thread.

    Usable from one run's worker thread and the thread that cancels it: a `threading.Event`
    for the flag, and the event loops the run has `attached` are told to cancel their tasks
    (that interrupts an awaited model call at once)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._loops: set[asyncio.AbstractEventLoop] = set()
        self.reason: str | None = None

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled") -> None:
        with self._lock:
            if self.reason is None:
                self.reason = reason
            self._event.set()
            loops = list(self._loops)
        for loop in loops:
            _stop(loop)

    def check(self) -> None:
        """Raise `Cancelled` if the run was cancelled; the engine calls it at every stage and
        file."""
        if self._event.is_set():
            raise Cancelled(self.reason or "cancelled")

    @contextlib.contextmanager
    def attached(self, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
        """While inside, a cancel also cancels every task of `loop` (the run's own loop; never
        a loop shared with other work)."""
        with self._lock:
            self._loops.add(loop)
            already = self._event.is_set()
        if already:
            _stop(loop)
        try:
            yield
        finally:
            with self._lock:
                self._loops.discard(loop)


def _stop(loop: asyncio.AbstractEventLoop) -> None:
    if loop.is_closed():
        return
    with contextlib.suppress(RuntimeError):  # closed between the check and the call
        loop.call_soon_threadsafe(_cancel_all, loop)


class StderrProgress:
    """Stage lines on stderr (never stdout: stdout carries the report).

    On a terminal, a live line (`cli/progress_line.py`: the stage, a bar, the elapsed time, tokens
    and cost) redrawn in place, erased at the end, when `pause()`d, or by `close()`; otherwise
    (CI logs) each event is one plain `redline: …` line. `color` is the CLI's `--color`.
    Usable as a context manager, so an error or Ctrl+C never leaves the line drawn.
    """

    def __init__(
        self, stream: TextIO | None = None, *, quiet: bool = False, color: str = "auto"
    ) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self.color = color
        self._line: LiveLine | None = None

    def report(self, event: ProgressEvent) -> None:
        if self.quiet:
            return
        if not self.tty:
            self.stream.write(f"redline: {event.text}\n")
            self.stream.flush()
            return
        if self._line is None:
            # Imported here: rich costs start-up time, and only a terminal needs it.
            from redline.cli.progress_line import LiveLine

            self._line = LiveLine(self.stream, self.color, self.started)
            _DRAWING.add(self)
        if event.stage is Stage.DONE:
            self._line.finish(event)
        else:
            self._line.show(event)

    def pause(self) -> None:
        """Erase the live line before something else writes to the terminal; the next event
        draws it again."""
        if self._line is not None:
            self._line.pause()

    def close(self) -> None:
        self.pause()
        _DRAWING.discard(self)

    def __enter__(self) -> StderrProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# The sinks that have drawn a live line: one process has one stderr, and whatever way a command
# ends (an error, Ctrl+C), `close_live_lines` erases theirs before the process exits.
_DRAWING: set[StderrProgress] = set()


def close_live_lines() -> None:
    """Erase every live progress line still drawn (the CLI calls it as a command ends)."""
    for progress in list(_DRAWING):
        progress.close()
