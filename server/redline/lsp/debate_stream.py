"""A running debate's events → `redline/debate` notifications.

The engine calls `on_event` in the worker thread; every event hops to the server loop in the
order it was emitted (`call_soon_threadsafe` is FIFO), and everything after that happens on
the loop alone, so no lock is needed to keep the order. Deltas arrive a few characters at a
time: they are held for up to `DELTA_INTERVAL` and sent as one notification per speaker, and
any other event first sends the deltas held before it, so a client never sees a turn's text
after its `turnFinished`.

Payload: `{event, ..., folder, taskId}` as listed in `redline.debate.events`, redacted like
every other notification (a debater may quote a secret from the diff).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from redline.debate.events import DebateEvent, EventKind
from redline.redaction import redact_data

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer
    from redline.lsp.reviews import ReviewJob

DEBATE = "redline/debate"
DELTA_INTERVAL = 0.05  # seconds: at most one delta notification per speaker this often


class DebateStream:
    """Forwards one job's debate events to its client; `on_event` is the engine's callback."""

    def __init__(
        self, ls: RedlineServer, folder_uri: str, job: ReviewJob, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._ls = ls
        self._folder = folder_uri
        self._job = job
        self._loop = loop
        self._held: list[dict[str, Any]] = []  # delta payloads not sent yet, in order
        self._timer: asyncio.TimerHandle | None = None

    def on_event(self, event: DebateEvent) -> None:
        """Called by the engine, in the worker thread."""
        with contextlib.suppress(RuntimeError):  # the loop is closing (server shutdown)
            self._loop.call_soon_threadsafe(self._receive, event)

    # -- on the server loop ------------------------------------------------------------------

    def _receive(self, event: DebateEvent) -> None:
        if self._job.cancelled:
            # Aborted (cancel, superseded, shutdown): the client is told so by reviewState;
            # what the engine says while it winds down is not part of the debate.
            self._held.clear()
            return
        if event.kind is EventKind.DELTA:
            self._hold(event.payload())
            return
        self.flush()
        self._send(event.payload())

    def _hold(self, payload: dict[str, Any]) -> None:
        last = self._held[-1] if self._held else None
        if last is not None and (last.get("round"), last.get("speaker")) == (
            payload.get("round"),
            payload.get("speaker"),
        ):
            last["text"] = str(last.get("text", "")) + str(payload.get("text", ""))
        else:
            self._held.append(dict(payload))
        if self._timer is None:
            self._timer = self._loop.call_later(DELTA_INTERVAL, self.flush)

    def flush(self) -> None:
        """Send the held deltas now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        held, self._held = self._held, []
        if self._job.cancelled:
            return
        for payload in held:
            self._send(payload)

    def _send(self, payload: dict[str, Any]) -> None:
        body = {**payload, "folder": self._folder, "taskId": self._job.task_id}
        self._ls.protocol.notify(DEBATE, redact_data(body))
