"""The engine's run contract on its own: progress events and the cancel token."""

from __future__ import annotations

import asyncio
import io
import threading

import pytest

from redline.progress import (
    Cancelled,
    CancelToken,
    ProgressEvent,
    Stage,
    StderrProgress,
)


def test_a_token_raises_once_cancelled_and_keeps_the_first_reason() -> None:
    token = CancelToken()
    token.check()  # not cancelled: nothing happens
    token.cancel("superseded by review b")
    token.cancel("cancelled by the user")
    assert token.cancelled and token.reason == "superseded by review b"
    with pytest.raises(Cancelled, match="superseded"):
        token.check()
    assert issubclass(Cancelled, asyncio.CancelledError)  # task records say "cancelled"


def test_cancel_interrupts_an_attached_event_loop_in_another_thread() -> None:
    token = CancelToken()
    waiting = threading.Event()
    outcome: list[BaseException] = []

    async def model_stage() -> None:
        with token.attached(asyncio.get_running_loop()):
            waiting.set()
            await asyncio.sleep(60)  # a model call that would take long to answer

    def worker() -> None:
        try:
            asyncio.run(model_stage())
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    assert waiting.wait(10)
    token.cancel("cancelled by the user")
    thread.join(timeout=20)  # far less than the minute the "model call" would take
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], asyncio.CancelledError)


def test_a_loop_attached_after_the_cancel_is_interrupted_too() -> None:
    token = CancelToken()
    token.cancel("early")

    async def model_stage() -> None:
        with token.attached(asyncio.get_running_loop()):
            await asyncio.sleep(60)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(asyncio.wait_for(model_stage(), timeout=20))


def test_progress_events_know_their_fraction() -> None:
    assert ProgressEvent(Stage.REVIEWING, "x", 3, 4).fraction == 0.75
    assert ProgressEvent(Stage.REVIEWING, "x", 5, 4).fraction == 1.0
    assert ProgressEvent(Stage.COLLECTING, "x").fraction is None
    assert ProgressEvent(Stage.REVIEWING, "x", 0, 0).fraction is None


def test_stderr_progress_prints_the_text_one_line_per_event_off_a_terminal() -> None:
    stream = io.StringIO()
    progress = StderrProgress(stream)
    progress.report(ProgressEvent(Stage.COLLECTING, "collecting the diff (branch)"))
    progress.report(ProgressEvent(Stage.DONE, "review done: 2 findings"))
    assert stream.getvalue() == (
        "redline: collecting the diff (branch)\nredline: review done: 2 findings\n"
    )
    quiet = io.StringIO()
    StderrProgress(quiet, quiet=True).report(ProgressEvent(Stage.DONE, "x"))
    assert quiet.getvalue() == ""
