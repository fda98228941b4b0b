"""Progress reporting, decoupled from where it is shown (terminal now, LSP work-done later)."""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO


class Progress(Protocol):
    def stage(self, message: str) -> None: ...

    def done(self, message: str) -> None: ...


class NullProgress:
    def stage(self, message: str) -> None:
        pass

    def done(self, message: str) -> None:
        pass


class StderrProgress:
    """Stage lines on stderr (never stdout: stdout carries the report).

    On a terminal the current stage is redrawn in place with its elapsed time; otherwise (CI
    logs) each stage is one plain line.
    """

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self._open_line = False

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self.started:5.1f}s"

    def stage(self, message: str) -> None:
        if self.quiet:
            return
        if self.tty:
            self.stream.write(f"\r\x1b[2K[{self._elapsed()}] {message}")
            self._open_line = True
        else:
            self.stream.write(f"redline: {message}\n")
        self.stream.flush()

    def done(self, message: str) -> None:
        if self.quiet:
            return
        if self.tty:
            self.stream.write(f"\r\x1b[2K[{self._elapsed()}] {message}\n")
            self._open_line = False
        else:
            self.stream.write(f"redline: {message}\n")
        self.stream.flush()
