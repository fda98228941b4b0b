"""Whatever goes wrong after a cached model review, the user sees one line and exit 2.

The issue's path, end to end: the installed CLI on a pseudo-terminal, a model review of the demo
repository against the scripted server on 127.0.0.1, run twice so that the second run is all
cache hits (no request reaches the server). Such a run finishes while litellm is still being
imported in the background, so `cli.main` leaves through `os._exit` — and once that swallowed
the renderer's exception: nothing on stderr, exit 2. Here the third run's renderer raises
(injected by a `sitecustomize` on PYTHONPATH, so the installed entry point is what runs) and
the test checks that the exit really took that path.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from model_env import FAST_RETRIES, TEST_API_KEY
from pty_run import Run, plain, run_redline, screen
from redline.redaction.logfilter import configure_cli_logging

from demo_findings import BARE_EXCEPT, SHELL
from gitrepo import GitRepo
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

# A GitHub token's shape: the redactor replaces it wherever it is said.
FAKE_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

# Loaded by the interpreter at start-up when its directory is on PYTHONPATH. It replaces the
# renderers with one that raises what REDLINE_TEST_RAISE names, and notes whether litellm was
# still importing at that moment (the exit through os._exit).
_SITECUSTOMIZE = """
import os

_KIND = os.environ.get("REDLINE_TEST_RAISE")


class _Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("this exception cannot say what it is")


def _boom(*args, **kwargs):
    import redline.agent.litellm_loader as loader

    with open(os.environ["REDLINE_TEST_NOTE"], "w") as note:
        note.write(str(loader.import_in_progress()))
    if _KIND == "unprintable":
        raise _Unprintable()
    raise KeyError("<Severity.INFO: 'Info'>")


if _KIND == "preload":
    import redline.redaction.redactor as redactor

    def _fails(self, **kwargs):
        raise RuntimeError("the warm-up failed")

    redactor.Redactor.load_plugins = _fails  # the main thread's own load still works
elif _KIND == "broken-install":
    import sys

    sys.modules["redline.cli.common"] = None  # its import fails, as a half-upgraded one would
elif _KIND:
    import redline.report
    import redline.report.terminal

    redline.report.terminal.print_terminal = _boom
    redline.report.render = _boom
"""


@dataclass
class Bed:
    repo: Path
    home: Path
    inject: Path
    llm: ScriptedLLM

    def review(self, *extra: str, env: dict[str, str] | None = None) -> Run:
        args = ["review", "--branch", "main", "--repo", str(self.repo), "--model",
                "openai/scripted", "--api-base", self.llm.base_url, *extra]  # fmt: skip
        return run_redline(
            args,
            self.home,
            stdout_tty=True,
            stderr_tty=True,
            env={"REDLINE_API_KEY": TEST_API_KEY, **(env or {})},
        )


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    """The demo repository reviewed twice: the second run is all cache hits."""
    root = tmp_path_factory.mktemp("last-line")
    repo = demo.build_demo_repo(root / "demo")
    home = root / "home"
    home.mkdir()
    (home / "user-config.toml").write_text(FAST_RETRIES, encoding="utf-8")
    inject = root / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    script = ReviewScript(findings={"app/reports.py": [SHELL, BARE_EXCEPT]})
    with ScriptedLLM(handler=script) as llm:
        bed = Bed(repo, home, inject, llm)
        first = bed.review()
        assert first.code == 0, plain(first.stderr)
        asked = len(llm.requests)
        assert asked > 0
        second = bed.review()
        assert second.code == 0, plain(second.stderr)
        assert len(llm.requests) == asked, "the second review must be all cache hits"
        assert SHELL["title"] in plain(second.stdout)
        yield bed


@pytest.mark.parametrize(
    ("kind", "fmt", "shown"),
    [
        ("keyerror", [], "KeyError: \"<Severity.INFO: 'Info'>\""),
        ("keyerror", ["--format", "json"], "KeyError: \"<Severity.INFO: 'Info'>\""),
        # Its message cannot even be formatted: the line still names it.
        ("unprintable", [], "_Unprintable: (no message)"),
    ],
)
def test_a_crash_after_a_cached_review_says_one_line(
    bed: Bed, kind: str, fmt: list[str], shown: str, tmp_path: Path
) -> None:
    note = tmp_path / "note"
    asked = len(bed.llm.requests)
    run = bed.review(
        *fmt,
        env={
            "PYTHONPATH": str(bed.inject),
            "REDLINE_TEST_RAISE": kind,
            "REDLINE_TEST_NOTE": str(note),
        },
    )
    assert len(bed.llm.requests) == asked  # all cache hits again
    # The path of the issue: litellm was still importing when the renderer raised.
    assert note.read_text() == "True"
    everything = plain(run.stdout + run.stderr)
    assert "Traceback" not in everything
    assert run.code == 2, everything
    lines = [line for line in screen(run.stderr) if line.strip()]
    errors = [line for line in lines if line.startswith("redline:")]
    assert errors == [f"redline: internal error: {shown} (a bug in Redline: please report it)"]
    assert lines[-1] == errors[0]  # after the progress, the last thing on the screen


def test_a_broken_installation_says_one_line(tmp_path: Path) -> None:
    """The console script cannot even import the CLI: one line and exit 2, no traceback."""
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    run = run_redline(
        ["history"],
        tmp_path / "home",
        stdout_tty=True,
        stderr_tty=True,
        env={"PYTHONPATH": str(inject), "REDLINE_TEST_RAISE": "broken-install"},
    )
    lines = [line for line in screen(run.stderr) if line.strip()]
    assert run.code == 2, run.stderr
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("redline: cannot start: ModuleNotFoundError: ")
    assert "redline.cli.common" in lines[0]


def test_a_failed_warm_up_in_a_thread_prints_no_traceback(tmp_path: Path) -> None:
    """Preloading the redaction plugins runs in a thread while git works; when it fails, the
    first redaction loads them again (and would say why): the thread prints nothing."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("start")
    repo.write("app.py", "x = 2\n")
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    run = run_redline(
        ["review", "--repo", str(repo.root), "--format", "json"],
        tmp_path / "home",
        stdout_tty=False,
        stderr_tty=False,
        env={"PYTHONPATH": str(inject), "REDLINE_TEST_RAISE": "preload"},
    )
    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr and "warm-up" not in run.stderr
    assert json.loads(run.stdout)["stats"]["files"] == 1


def test_a_logged_exception_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A warning logged with its exception (review/ask_trail.py does; so does asyncio for a
    task whose exception nobody read) names it on the warning's line: no traceback."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        configure_cli_logging()
        try:
            raise OSError(f"disk full {FAKE_TOKEN}\nsecond line")
        except OSError:
            logging.getLogger("redline.test").warning("could not record", exc_info=True)
    finally:
        root.handlers[:], root.level = handlers, level
    err = capsys.readouterr().err
    assert err.startswith("redline: warning: could not record (OSError: disk full ")
    assert err.count("\n") == 1 and "Traceback" not in err and FAKE_TOKEN not in err
