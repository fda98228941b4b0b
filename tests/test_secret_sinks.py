"""Every sink passes the redactor at one structural point, whatever writes to it.

- Progress: a `ProgressEvent` masks its own text when it is made, so no sink — the CLI's
  stderr lines and live line, the language server's work-done progress and reviewState — can
  show an event's secret, whatever stage, code path or future field produced it. Checked with
  generated events carrying generated secrets, through every sink.
- stderr: the CLI writes through a redacting stream for the whole command, so a message
  written straight to `sys.stderr` (not through logging or an event) is masked too.
"""

from __future__ import annotations

import dataclasses
import io
import string
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.progress import ProgressEvent, Stage, StderrProgress

from secret_corpus import fragments_in

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"


def _body(alphabet: str, n: int) -> st.SearchStrategy[str]:
    """`n` random characters; from letters and digits, with each class present (a random
    key's look: `ghp_aaaa…` is no key and no detector calls it one)."""
    body = st.text(alphabet, min_size=n, max_size=n)
    if alphabet != ALNUM:
        return body
    return body.filter(
        lambda v: (
            any(c.isupper() for c in v)
            and any(c.islower() for c in v)
            and any(c.isdigit() for c in v)
        )
    )


# Secrets as a model's tool call would carry them: key formats with a literal prefix.
SECRETS: st.SearchStrategy[str] = st.one_of(
    _body(ALNUM, 36).map(lambda b: "ghp_" + b),
    _body(ALNUM, 40).map(lambda b: "sk_live_" + b),
    _body(UPPER_DIGITS, 16).map(lambda b: "AKIA" + b),
    _body(ALNUM, 24).map(lambda b: "xoxb-123456789012-" + b),
    _body(HEX, 32).map(lambda b: "key-" + b),
    _body(HEX, 32).map(lambda b: "shpat_" + b),
)
# What stands around the secret in an event's text: a file name, a command, prose.
SHAPES: list[Callable[[str], str]] = [
    lambda s: f"agent: read_file notes/{s}.txt",
    lambda s: f"agent: git log -S {s} --oneline",
    lambda s: f"agent: search_callers {s}",
    lambda s: f"reviewing {s}: 3 of 7 done",
    lambda s: s,
]
EVENTS = st.builds(
    lambda stage, shape, secret, done, total: (
        ProgressEvent(stage, shape(secret), done, total, tokens=12, cost_usd=0.5),
        secret,
    ),
    st.sampled_from(list(Stage)),
    st.sampled_from(SHAPES),
    SECRETS,
    st.one_of(st.none(), st.integers(0, 9)),
    st.one_of(st.none(), st.integers(1, 9)),
)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(EVENTS)
def test_no_event_carries_a_secret_in_any_text_field(pair: tuple[ProgressEvent, str]) -> None:
    event, secret = pair
    # Every text field, including any added later, and a copy made with `replace`.
    texts = [f.name for f in dataclasses.fields(event) if isinstance(getattr(event, f.name), str)]
    assert texts == ["text"] or "text" in texts
    for name in texts:
        assert not fragments_in(secret, getattr(event, name)), (name, getattr(event, name))
    copy = dataclasses.replace(event, text=f"again {secret}")
    assert not fragments_in(secret, copy.text)
    assert "[REDACTED:" in event.text


def test_every_text_field_of_an_event_is_masked_when_made() -> None:
    """A str field added to ProgressEvent later is masked too (fields are not listed by name)."""
    secret = "ghp_" + "aB3" * 12
    values: dict[str, Any] = {}
    for f in dataclasses.fields(ProgressEvent):
        values[f.name] = Stage.ASKING if f.name == "stage" else None
        if f.type in ("str", str) or "str" in str(f.type).split(" | "):
            values[f.name] = f"x {secret} y"
    event = ProgressEvent(**values)
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if isinstance(value, str):
            assert secret not in value, f.name


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@FAST
@given(EVENTS, st.booleans())
def test_the_cli_progress_sink_prints_no_secret(pair: tuple[ProgressEvent, str], tty: bool) -> None:
    event, secret = pair
    stream = _Tty() if tty else io.StringIO()
    progress = StderrProgress(stream, color="never")
    with progress:
        progress.report(event)
        progress.report(ProgressEvent(Stage.DONE, f"done with {secret}"))
    assert not fragments_in(secret, stream.getvalue()), stream.getvalue()


@FAST
@given(EVENTS)
def test_the_language_servers_progress_and_review_state_carry_no_secret(
    pair: tuple[ProgressEvent, str],
) -> None:
    from redline.lsp import jobs

    event, secret = pair
    sent: list[Any] = []
    ls = types.SimpleNamespace(
        registry=types.SimpleNamespace(is_current=lambda job: True),
        work_done_progress=types.SimpleNamespace(report=lambda token, p: sent.append(p)),
        protocol=types.SimpleNamespace(notify=lambda method, payload: sent.append(payload)),
    )
    job = types.SimpleNamespace(
        progress_begun=True,
        token="t",
        task_id="abc",
        started=0.0,
        request=types.SimpleNamespace(kind="branch", describe=lambda: "branch main"),
    )
    jobs._on_progress(ls, types.SimpleNamespace(uri="file:///w"), job, event)  # type: ignore[arg-type]
    assert len(sent) == 2
    assert not fragments_in(secret, repr(sent)), sent


async def test_the_language_servers_progress_begin_and_end_carry_no_secret() -> None:
    """The work-done progress a review opens (its request) and closes (a failure's message)."""
    from redline.lsp import jobs

    secret = "ghp_" + "Xy7" * 12
    sent: list[Any] = []

    async def created(token: str) -> None:
        return None

    ls = types.SimpleNamespace(
        client_capabilities=types.SimpleNamespace(
            window=types.SimpleNamespace(work_done_progress=True)
        ),
        work_done_progress=types.SimpleNamespace(
            create_async=created,
            begin=lambda token, p: sent.append(p),
            end=lambda token, p: sent.append(p),
            tokens={},
        ),
        progress_create_unanswered=False,
    )
    job = types.SimpleNamespace(
        token="t",
        cancelled=False,
        control=None,
        progress_begun=False,
        request=types.SimpleNamespace(describe=lambda: f"ask: read notes/{secret}.txt"),
    )
    await jobs._begin_progress(ls, job)  # type: ignore[arg-type]
    jobs._end_progress(ls, job, f"failed: git: no such path notes/{secret}.txt")  # type: ignore[arg-type]
    assert len(sent) == 2
    assert secret not in repr(sent) and repr(sent).count("[REDACTED:github-token:") == 2


# -- stderr ------------------------------------------------------------------------------------


def test_whatever_the_cli_writes_to_stderr_is_masked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message written straight to sys.stderr during a command (not through logging or a
    progress event) passes the redactor too."""
    from redline.cli import main as cli

    secret = "sk_live_" + "Zq9" * 14

    def command(args: Any) -> int:
        sys.stderr.write(f"redline: note: using {secret}\n")
        print(f"the key {secret}", file=sys.stderr)
        return 0

    monkeypatch.setattr(cli, "_cmd_review", command)
    assert cli.main(["review"]) == 0
    err = capsys.readouterr().err
    assert secret not in err and err.count("[REDACTED:stripe-key:") == 2, err
    assert sys.stderr is not None and not hasattr(sys.stderr, "redacting")  # restored after


def test_the_redacting_stream_keeps_what_a_terminal_needs() -> None:
    from redline.redaction.stream import RedactingStream

    tty = _Tty()
    stream = RedactingStream(tty)
    assert stream.isatty() and stream.encoding == tty.encoding
    key = "ghp_" + "Q1w" * 12
    assert stream.write(f"a {key}\n") == len(f"a {key}\n")  # the caller's length, as TextIO
    stream.write("plain text\n")
    stream.flush()
    assert key not in tty.getvalue() and "plain text\n" in tty.getvalue()
