"""The CLI's stderr, redacted as a whole: every write passes the redactor.

Progress lines, warnings, error messages, argparse's complaints, rich's live line and a
library's stray `print(..., file=sys.stderr)` all end up in `sys.stderr`; while a command runs
it is a `RedactingStream` around the real one (`redacting_stderr`), so no writer can forget the
redactor. Each write is redacted on its own: Redline's writers (and logging, and rich) write a
line or a frame in one call, so a secret is never split across two.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO, cast

from redline.redaction import redact


class RedactingStream:
    """A text stream that writes `redact(text)` to `target`; everything else is the target's
    (isatty, fileno, encoding: a terminal stays a terminal)."""

    redacting = True

    def __init__(self, target: TextIO) -> None:
        self.target = target

    def write(self, text: str) -> int:
        if text:
            self.target.write(redact(text))
        return len(text)  # what the caller wrote, as TextIO.write reports it

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


@contextlib.contextmanager
def redacting_stderr() -> Iterator[None]:
    """While inside, `sys.stderr` redacts what is written to it; restored afterwards (unless
    something else replaced it meanwhile)."""
    original = sys.stderr
    if original is None or getattr(original, "redacting", False):
        yield
        return
    stream = cast(TextIO, RedactingStream(original))
    sys.stderr = stream
    try:
        yield
    finally:
        if sys.stderr is stream:
            sys.stderr = original
