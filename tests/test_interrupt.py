"""Ctrl+C while a model review waits on the model (issue 24): the installed CLI stops at once
and quietly — exit 130, one line, no `RuntimeWarning: coroutine ... was never awaited`, no
traceback — instead of printing a warning and taking 3–10 s. The scripted model stalls the
model's calls; the test sends SIGINT while the first call is being set up (litellm's
synchronous part runs in an executor thread, which `asyncio.run` joined on the way out) and
once a request has arrived."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from output_bed import cli_env

from review_script import ReviewScript
from scripted_llm import Reply, ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

REDLINE = Path(sys.executable).with_name("redline")


class StalledModel:
    """The scripted reviewer, with every call held for a minute."""

    def __init__(self) -> None:
        self.script = ReviewScript(findings={})
        self.arrived = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = self.script(body)
        self.arrived.set()
        reply.delay = 60.0
        return reply


def _interrupt(tmp_path: Path, handler: StalledModel, when: str) -> tuple[int, str, float]:
    """Run a model review of the demo, send SIGINT at `when` ("planning": a second after the
    planning stage began, while the first model call is being set up; "request": once the
    stalled request reached the model), and return the exit code, stderr and how long the
    process took to end after the signal."""
    repo = demo.build_demo_repo(tmp_path / "demo")
    with ScriptedLLM(handler=handler) as llm:
        proc = subprocess.Popen(
            [str(REDLINE), "review", "--branch", "main", "--repo", str(repo),
             "--model", "openai/scripted", "--api-base", llm.base_url],
            env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert proc.stderr is not None
        lines: list[bytes] = []
        planning = threading.Event()

        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append(line)
                if b"planning" in line:
                    planning.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            if when == "planning":
                assert planning.wait(60), b"".join(lines)
                time.sleep(1.0)
            else:
                assert handler.arrived.wait(60), b"".join(lines)
                time.sleep(0.3)  # inside the wait on the model's answer
            sent = time.monotonic()
            os.kill(proc.pid, signal.SIGINT)
            proc.wait(timeout=30)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join(5)
    return proc.returncode, b"".join(lines).decode(errors="replace"), took


@pytest.mark.parametrize("when", ["planning", "request"])
def test_ctrl_c_while_the_model_works_stops_at_once_and_quietly(tmp_path: Path, when: str) -> None:
    code, stderr, took = _interrupt(tmp_path, StalledModel(), when)
    assert code == 130, stderr
    assert "RuntimeWarning" not in stderr and "never awaited" not in stderr, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.strip().splitlines()[-1] == "redline: interrupted", stderr
    # A generous bound, not a benchmark: it used to take 3-10 s.
    assert took < 2.0, (took, stderr)
