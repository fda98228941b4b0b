"""Log records pass through the redactor before any handler writes them.

`RedactingFilter` rewrites a record in place — the formatted message, the exception text and
the stack — so every handler after it, and every formatter, sees the redacted record. It is
installed on Redline's own handlers (the CLI's stderr handler, the language server's log
handler) and on the loggers of libraries that have handlers of their own (litellm's).
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from redline.redaction import redact

_FORMATTER = logging.Formatter()


def redact_record(record: logging.LogRecord) -> None:
    """Redact `record`'s message, exception and stack text in place (once)."""
    if getattr(record, "redline_redacted", False):
        return
    try:
        message = record.getMessage()
    except Exception:  # a broken format string: the handler reports it as usual
        return
    redacted = redact(message)
    if redacted != message or record.args:
        record.msg, record.args = redacted, None
    if record.exc_info and not record.exc_text:
        record.exc_text = _FORMATTER.formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    record.redline_redacted = True


class RedactingFilter(logging.Filter):
    """Never drops a record; masks the secrets in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


def protect(target: logging.Handler | logging.Logger) -> None:
    """Add a RedactingFilter to a handler or logger (once)."""
    if not any(isinstance(f, RedactingFilter) for f in target.filters):
        target.addFilter(RedactingFilter())


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is when a record arrives (as logging.lastResort)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _: object) -> None:
        pass


class _CliFormatter(logging.Formatter):
    """The record's message, and the exception it carries named on the same line — never a
    traceback or a stack: on a user's terminal one reads as a crash (issue 24), whoever logged
    it (Redline's own `exc_info=True`, asyncio's "Task exception was never retrieved")."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            try:
                said = redact(str(exc)).strip().split("\n", 1)[0]
            except Exception:  # its __str__ raised: the type alone
                said = ""
            text += f" ({type(exc).__name__}{': ' + said if said else ''})"
        return f"redline: {record.levelname.lower()}: {text}"


def configure_cli_logging(level: int = logging.WARNING) -> None:
    """Warnings and errors on stderr, redacted (the CLI's only log output); idempotent."""
    root = logging.getLogger()
    if any(isinstance(h, _StderrHandler) for h in root.handlers):
        return
    handler = _StderrHandler()
    handler.setLevel(level)
    handler.setFormatter(_CliFormatter("%(message)s"))
    protect(handler)
    root.addHandler(handler)
    if root.level > level or root.level == logging.NOTSET:
        root.setLevel(level)
