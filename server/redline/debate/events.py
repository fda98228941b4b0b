"""What a running debate tells its caller, and how the caller steers it.

The engine → caller contract of the debate mode, the same for the command line and the
language server:

- `DebateEvent`s, in order, to an `on_event` callback (called on the engine's event loop, in
  the engine's thread: a caller in another thread hops over itself). `payload()` is the JSON
  body the language server sends as `redline/debate` (with `folder` and `taskId` added):

      started        {debaters: [{name, label, model}], rounds, scopeLabel}
      turnStarted    {round, speaker, label, model}
      delta          {round, speaker, text}           text as it streams (tool steps included)
      turnFinished   {round, speaker, label, kind, text, note?, tokens, latencyMs, toolCalls}
                     kind: turn | pass | skipped | stopped (cut short by the user)
      interjection   {round, text}                    the user's words, added to the transcript
      note           {text}                           a debater skipped or out, turns compacted
      stopped        {reason, text}                   reason: rounds | passed | budget | user |
                                                      debaters (fewer than two left)
      summaries      {positions: [{label, text}]}     anonymous, shuffled
      summary        {markdown, failed}               the neutral summary (or the plain listing)
      final          {findings, counts, tokens, costUsd}

- a `DebateControl` the caller owns, safe to call from any thread: `interject(text)` adds the
  user's words before the next turn, `stop()` ends the debate (a turn in flight is cut short,
  what it said so far is kept) and goes on to the summaries. The interactive command line also
  sets `before_turn`, awaited before every turn, which answers continue, interject or stop.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventKind(StrEnum):
    STARTED = "started"
    TURN_STARTED = "turnStarted"
    DELTA = "delta"
    TURN_FINISHED = "turnFinished"
    INTERJECTION = "interjection"
    NOTE = "note"
    STOPPED = "stopped"
    SUMMARIES = "summaries"
    SUMMARY = "summary"
    FINAL = "final"


@dataclass(frozen=True)
class DebateEvent:
    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)  # the camelCase fields listed above

    def payload(self) -> dict[str, Any]:
        return {"event": self.kind.value, **self.data}


OnEvent = Callable[[DebateEvent], None]


@dataclass(frozen=True)
class TurnSlot:
    """The turn about to be taken, as `before_turn` sees it."""

    round: int
    speaker: str
    label: str


@dataclass(frozen=True)
class Decision:
    """What `before_turn` answers: go on, add the user's words first, or end the debate."""

    action: str  # continue | interject | stop
    text: str = ""

    @classmethod
    def go_on(cls) -> Decision:
        return cls("continue")

    @classmethod
    def interject(cls, text: str) -> Decision:
        return cls("interject", text)

    @classmethod
    def stop(cls) -> Decision:
        return cls("stop")


BeforeTurn = Callable[[TurnSlot], Awaitable[Decision]]

MAX_INTERJECTION_CHARS = 4_000


class DebateControl:
    """Steering from outside the engine; every method is thread-safe.

    The engine reads it between turns (`take_interjections`, `stop_requested`) and waits on
    `wait_stop` while a turn runs, so a stop cuts the turn short at once."""

    def __init__(self, before_turn: BeforeTurn | None = None) -> None:
        self.before_turn = before_turn
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._stop_reason: str | None = None
        self._listeners: list[Callable[[], None]] = []

    def interject(self, text: str) -> bool:
        """Queue the user's words for the next turn; False (nothing queued) when empty or the
        debate is already stopping."""
        text = text.strip()[:MAX_INTERJECTION_CHARS]
        with self._lock:
            if not text or self._stop_reason is not None:
                return False
            self._pending.append(text)
            return True

    def stop(self, reason: str = "user") -> None:
        with self._lock:
            if self._stop_reason is not None:
                return
            self._stop_reason = reason
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    @property
    def stop_requested(self) -> str | None:
        """The reason the debate was asked to stop, or None."""
        with self._lock:
            return self._stop_reason

    def take_interjections(self) -> list[str]:
        with self._lock:
            taken, self._pending = self._pending, []
            return taken

    def on_stop(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` (from whichever thread stops) when a stop is requested; returns a
        function that removes it. Called at once if already stopped."""
        with self._lock:
            stopped = self._stop_reason is not None
            if not stopped:
                self._listeners.append(listener)
        if stopped:
            listener()

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove
