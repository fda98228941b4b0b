"""The live progress line `StderrProgress` draws when stderr is a terminal (rich).

One transient line — a spinner, the stage's text, a bar when the stage counts something, the
elapsed time, and the tokens and cost spent so far when a model runs — redrawn several times a
second, so the elapsed time moves during a long model call. It is erased when the run ends (the
final line is then printed for good) and whenever something else must be written to stderr:
`pause()` erases it and the next event draws it again.

While it is drawn, what other code writes to `sys.stderr` (warnings, errors, the log) is
printed above it by rich's stderr redirection instead of being scribbled over it.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Protocol, TextIO

from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from redline.money import spent as money_spent
from redline.report.terminal import console_for, terminal_safe

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult


class ProgressEvent(Protocol):
    """What the line reads of `progress.ProgressEvent` (named here, not imported: progress.py
    imports this module)."""

    @property
    def text(self) -> str: ...
    @property
    def done(self) -> int | None: ...
    @property
    def total(self) -> int | None: ...
    @property
    def tokens(self) -> int | None: ...
    @property
    def cost_usd(self) -> float | None: ...
    @property
    def fraction(self) -> float | None: ...


_REFRESH_PER_SECOND = 8
_BAR_WIDTH = 20


def spent(event: ProgressEvent, elapsed: float) -> str:
    """ "12.3s · 4,210 tokens · $0.0012": the tokens and cost only when a model runs; the
    cost "unpriced" once tokens were spent on a model without a price (never `$0.0000`)."""
    parts = [f"{elapsed:.1f}s"]
    if event.tokens is not None:
        parts.append(f"{event.tokens:,} tokens")
        cost = money_spent(event.cost_usd, event.tokens)
        if cost is not None:
            parts.append(cost)
    return " · ".join(parts)


class _Line:
    """The renderable: read at every refresh, so the spinner and elapsed time move on their
    own between events."""

    def __init__(self, owner: LiveLine) -> None:
        self.owner = owner
        self.spinner = Spinner("dots", style="cyan")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        event = self.owner.event
        if event is None:
            return
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        columns: list[object] = [
            self.spinner,
            Text(terminal_safe(event.text), no_wrap=True, overflow="ellipsis"),
        ]
        if event.fraction is not None:
            grid.add_column(no_wrap=True, width=_BAR_WIDTH)
            columns.append(
                ProgressBar(total=float(event.total or 1), completed=float(event.done or 0))
            )
        grid.add_column(no_wrap=True)
        columns.append(Text(spent(event, self.owner.elapsed()), style="dim"))
        grid.add_row(*columns)  # type: ignore[arg-type]
        yield grid


class LiveLine:
    """The line on one terminal stream. Thread-safe: events may come from worker threads."""

    def __init__(self, stream: TextIO, color: str, started: float) -> None:
        self.stream = stream
        self.console = console_for(stream, color, force_terminal=True)
        self.started = started
        self.event: ProgressEvent | None = None
        self._live: Live | None = None
        self._lock = threading.RLock()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def show(self, event: ProgressEvent) -> None:
        with self._lock:
            self.event = event
            if self._live is None:
                self._live = Live(
                    _Line(self),
                    console=self.console,
                    transient=True,
                    refresh_per_second=_REFRESH_PER_SECOND,
                    redirect_stdout=False,
                    # Only the real stderr is redirected (a test's stream is not sys.stderr).
                    redirect_stderr=self.stream is sys.stderr,
                )
                self._live.start()
            else:
                self._live.refresh()

    def finish(self, event: ProgressEvent) -> None:
        """Erase the line and print the run's last event for good."""
        with self._lock:
            self.pause()
            line = Text(terminal_safe(event.text))
            line.append(f"  {spent(event, self.elapsed())}", style="dim")
            self.console.print(line)

    def pause(self) -> None:
        """Erase the line (if drawn); the next `show` draws it again."""
        with self._lock:
            live, self._live = self._live, None
            if live is not None:
                live.stop()
