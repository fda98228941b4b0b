"""`redline debate --interactive`: before each turn the user continues, interjects or ends the
debate, typed on the terminal.

`TerminalPrompter` is the `DebateControl.before_turn` hook. Lines are read by one daemon
thread (a blocking `readline` must never hold up the event loop, and an abort must never wait
for it: asyncio's default executor would be joined at exit, a daemon thread is not) and handed
to the loop. A stop requested meanwhile (Ctrl+C) answers the waiting prompt at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TextIO

from redline.debate.events import DebateControl, Decision, TurnSlot
from redline.errors import UsageError

PROMPT = "Enter to continue, type to interject, q to end the debate"
QUIT_WORDS = frozenset({"q", "quit", "exit"})
NOT_A_TERMINAL = (
    "--interactive needs a terminal on stdin (it asks before every turn); "
    "run without --interactive to let the debate run on its own"
)


def require_terminal(stream: TextIO) -> None:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced stdin
        tty = False
    if not tty:
        raise UsageError(NOT_A_TERMINAL)


def decide(line: str | None) -> Decision:
    """What a typed line means: nothing → continue, q → stop, anything else → interject.
    End of input (Ctrl+D) continues: the rest of the debate runs on its own."""
    if line is None:
        return Decision.go_on()
    text = line.strip()
    if not text:
        return Decision.go_on()
    if text.lower() in QUIT_WORDS:
        return Decision.stop()
    return Decision.interject(text)


class TerminalPrompter:
    def __init__(self, control: DebateControl, stdin: TextIO, out: TextIO) -> None:
        self.control = control
        self.stdin = stdin
        self.out = out
        self._lines: asyncio.Queue[str | None] | None = None
        self._eof = False

    def _start_reader(self, loop: asyncio.AbstractEventLoop) -> asyncio.Queue[str | None]:
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def read() -> None:
            while True:
                try:
                    line: str | None = self.stdin.readline() or None
                except (OSError, ValueError):
                    line = None
                try:
                    loop.call_soon_threadsafe(queue.put_nowait, line)
                except RuntimeError:  # the loop is closed: the debate is over
                    return
                if line is None:
                    return

        threading.Thread(target=read, name="redline-debate-stdin", daemon=True).start()
        return queue

    async def __call__(self, slot: TurnSlot) -> Decision:
        if self._eof or self.control.stop_requested is not None:
            return Decision.go_on()
        loop = asyncio.get_running_loop()
        if self._lines is None:
            self._lines = self._start_reader(loop)
        self.out.write(f"\n[round {slot.round}, next: {slot.label}] {PROMPT}: ")
        self.out.flush()
        stopped = loop.create_future()

        def on_stop() -> None:  # any thread
            def settle() -> None:
                if not stopped.done():
                    stopped.set_result(None)

            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle)

        remove = self.control.on_stop(on_stop)
        line_task = asyncio.ensure_future(self._lines.get())
        try:
            await asyncio.wait({line_task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            remove()
        if not line_task.done():
            line_task.cancel()
            self.out.write("\n")
            return Decision.stop()
        line = line_task.result()
        if line is None:
            self._eof = True
            self.out.write("\n")
        return decide(line)
