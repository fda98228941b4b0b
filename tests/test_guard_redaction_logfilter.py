"""Log records (redline.redaction.logfilter), rule by rule: a record is redacted in place once
(message, arguments, traceback, stack) and never dropped; a broken format string is left to
the handler; the CLI's stderr handler writes `redline: <level>: ` lines to whatever stderr is
now, redacted, and is installed once.

Each test states one rule a mutant of logfilter.py broke. Run by `make mutation` for
logfilter.py (scripts/mutation.toml).
"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator

import pytest

import redline.redaction.logfilter as logfilter
from guard_redaction import GHP
from redline.redaction.logfilter import (
    RedactingFilter,
    configure_cli_logging,
    protect,
    redact_record,
)

P = "[REDACTED:github-token:"


def record(msg: object, *args: object, exc_info: object = None) -> logging.LogRecord:
    return logging.LogRecord(
        "redline.test",
        logging.WARNING,
        __file__,
        1,
        msg,
        args or None,
        exc_info,  # type: ignore[arg-type]
    )


def test_a_message_argument_holding_a_secret_is_masked_and_formatted_once() -> None:
    rec = record("token %s for %d", GHP, 3)
    redact_record(rec)
    assert rec.args is None
    assert rec.getMessage().startswith(f"token {P}") and rec.getMessage().endswith("] for 3")


def test_a_message_holding_a_secret_is_masked() -> None:
    rec = record(f"inline {GHP}")
    redact_record(rec)
    assert rec.getMessage().startswith(f"inline {P}") and GHP not in rec.getMessage()


def test_a_clean_record_with_arguments_is_formatted_and_a_clean_one_without_is_kept() -> None:
    rec = record("n=%d", 5)
    redact_record(rec)
    assert (rec.msg, rec.args) == ("n=5", None)
    plain = record("nothing here")
    redact_record(plain)
    assert (plain.msg, plain.args) == ("nothing here", None)


def test_a_record_with_a_broken_format_string_is_left_to_the_handler() -> None:
    rec = record("%d items", "many")
    redact_record(rec)
    assert (rec.msg, rec.args) == ("%d items", ("many",))
    assert not getattr(rec, "redline_redacted", False)


def test_the_traceback_is_formatted_and_masked() -> None:
    try:
        raise ValueError(f"bad key {GHP}")
    except ValueError:
        rec = record("failed", exc_info=sys.exc_info())
    redact_record(rec)
    assert rec.exc_text is not None
    assert "ValueError: bad key " + P in rec.exc_text and GHP not in rec.exc_text


def test_a_traceback_already_formatted_is_masked() -> None:
    rec = record("failed")
    rec.exc_text = f"Traceback ...\nValueError: {GHP}"
    redact_record(rec)
    assert rec.exc_text.startswith("Traceback ...\nValueError: " + P)


def test_a_record_without_a_traceback_gets_none() -> None:
    rec = record("fine")
    redact_record(rec)
    assert rec.exc_text is None and rec.stack_info is None


def test_the_stack_is_masked() -> None:
    rec = record("here")
    rec.stack_info = f"Stack (most recent call last):\n  token = {GHP!r}"
    redact_record(rec)
    assert GHP not in rec.stack_info and P in rec.stack_info


def test_a_record_is_scanned_once_however_many_filters_it_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    real = logfilter.redact

    def counting(text: str) -> str:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(logfilter, "redact", counting)
    rec = record(f"token {GHP}")
    redact_record(rec)
    redact_record(rec)
    assert RedactingFilter().filter(rec) is True
    assert seen == [f"token {GHP}"]
    assert rec.getMessage().startswith(f"token {P}")


def test_the_filter_never_drops_a_record() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    protect(handler)
    logger = logging.getLogger("redline.test.guard.drop")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("plain")
        logger.warning("key %s", GHP)
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "plain" and lines[1].startswith(f"key {P}")


def test_protect_adds_one_filter_to_a_handler_or_a_logger() -> None:
    handler = logging.StreamHandler(io.StringIO())
    protect(handler)
    protect(handler)
    assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
    logger = logging.getLogger("redline.test.guard.protect")
    try:
        protect(logger)
        protect(logger)
        assert sum(isinstance(f, RedactingFilter) for f in logger.filters) == 1
    finally:
        for f in list(logger.filters):
            logger.removeFilter(f)


# -- the CLI's stderr handler --------------------------------------------------------------------


@pytest.fixture
def root() -> Iterator[logging.Logger]:
    """The root logger, restored afterwards (handlers and level)."""
    logger = logging.getLogger()
    handlers, level = list(logger.handlers), logger.level
    for h in handlers:
        if isinstance(h, logfilter._StderrHandler):
            logger.removeHandler(h)
    try:
        yield logger
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(level)


def _stderr_handlers(logger: logging.Logger) -> list[logging.Handler]:
    return [h for h in logger.handlers if isinstance(h, logfilter._StderrHandler)]


def test_the_cli_handler_is_installed_once_and_writes_redacted_lines(
    root: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_cli_logging()
    configure_cli_logging()
    assert len(_stderr_handlers(root)) == 1
    logging.getLogger("redline.test.guard.cli").error("token %s", GHP)
    err = capsys.readouterr().err
    assert err.startswith(f"redline: error: token {P}") and err.endswith("]\n")


def test_the_cli_handler_writes_to_stderr_as_it_is_when_a_record_arrives(
    root: logging.Logger, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure_cli_logging()
    handler = _stderr_handlers(root)[0]
    assert isinstance(handler, logfilter._StderrHandler)
    handler.stream = io.StringIO()  # ignored: the handler follows sys.stderr
    later = io.StringIO()
    monkeypatch.setattr(sys, "stderr", later)
    logging.getLogger("redline.test.guard.cli").warning("now")
    assert later.getvalue() == "redline: warning: now\n"


def test_the_cli_handler_shows_its_level_and_above(
    root: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    root.setLevel(logging.DEBUG)
    configure_cli_logging(logging.ERROR)
    log = logging.getLogger("redline.test.guard.cli")
    log.warning("hidden")
    log.error("shown")
    assert capsys.readouterr().err == "redline: error: shown\n"
    assert root.level == logging.DEBUG  # a more verbose root level is kept


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (logging.ERROR, logging.WARNING),
        (logging.NOTSET, logging.WARNING),
        (logging.INFO, logging.INFO),
    ],
)
def test_the_root_level_is_lowered_to_the_cli_level_never_raised(
    root: logging.Logger, before: int, after: int
) -> None:
    root.setLevel(before)
    configure_cli_logging(logging.WARNING)
    assert root.level == after
