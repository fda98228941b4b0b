"""Ctrl+C while a model review waits on the model (issue 24): the installed CLI stops at once
and quietly — exit 130, one line, no `RuntimeWarning: coroutine ... was never awaited`, no
traceback — instead of printing a warning and taking 3–10 s. The scripted model stalls the
model's calls; the test sends SIGINT while the first call is being set up (litellm's
synchronous part runs in an executor thread, which `asyncio.run` joined on the way out) and
once a request has arrived.

The CLI is started as a shell starts a foreground command: with SIGINT at its default. A
process that inherits SIGINT *ignored* — a background job (`cmd &`) of a non-interactive shell,
which is how a loaded CI box ran pytest when these tests "failed under load" — keeps ignoring it,
as Python and every Unix program do (asyncio.Runner then installs no handler): the CLI ran on
until the model's 20 s timeout. That is the POSIX contract, not a swallowed Ctrl+C, so the tests
pin the disposition instead of inheriting whatever the runner of the suite had."""

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
# Resets SIGINT to its default (exec keeps a default disposition, and an ignored one), then
# becomes the CLI: same pid, so the test's SIGINT reaches the CLI itself.
FOREGROUND = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def _start(tmp_path: Path, repo: Path, base_url: str) -> subprocess.Popen[bytes]:
    """A model review of `repo` by the installed CLI, as a foreground command (see above)."""
    return subprocess.Popen(
        [sys.executable, "-c", FOREGROUND, str(REDLINE), "review", "--branch", "main",
         "--repo", str(repo), "--model", "openai/scripted", "--api-base", base_url],
        env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


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
        proc = _start(tmp_path, repo, llm.base_url)
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


# Seconds after the CLI's first line: the git stages, the analyzers, planning (litellm still
# importing in the background), the first request's set-up, the wait on the model.
SWEEP_DELAYS = (0.0, 0.3, 0.7, 1.2, 2.0, 3.0)


def test_ctrl_c_at_any_point_of_a_model_review_ends_it(tmp_path: Path) -> None:
    """Whatever the run is doing when SIGINT arrives, it ends with exit 130 and the one line
    "redline: interrupted", within a bound — never carries on to the model's timeout."""
    repo = demo.build_demo_repo(tmp_path / "demo")
    outcomes = []
    with ScriptedLLM(handler=StalledModel()) as llm:
        for n, delay in enumerate(SWEEP_DELAYS):
            run_dir = tmp_path / f"run{n}"
            run_dir.mkdir()
            proc = _start(run_dir, repo, llm.base_url)
            assert proc.stderr is not None
            try:
                first = proc.stderr.readline()  # the modules are loaded, the review begins
                time.sleep(delay)
                sent = time.monotonic()
                os.kill(proc.pid, signal.SIGINT)
                rest = proc.stderr.read()  # until the process closes it: it ended
                proc.wait(timeout=30)
                took = time.monotonic() - sent
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            stderr = (first + rest).decode(errors="replace")
            outcomes.append((delay, proc.returncode, round(took, 2), stderr))
    for delay, code, took, stderr in outcomes:
        assert code == 130, (delay, stderr)
        assert "Traceback" not in stderr and "RuntimeWarning" not in stderr, (delay, stderr)
        assert stderr.strip().splitlines()[-1] == "redline: interrupted", (delay, stderr)
        assert took < 2.0, (delay, took, stderr)
