"""A terminal worth reading: the real `redline` on the demo repository with stdout and stderr
on pseudo-terminals — the rich report, `--color` and NO_COLOR, the Markdown unchanged in a
pipe, the live progress line — and the pieces that keep model text from steering a terminal."""

from __future__ import annotations

import io
import os
import re
import sys
import time
from pathlib import Path

import pytest

from pty_run import colour_codes, plain, run_redline, screen
from redline.cli.debate_view import DebateView
from redline.debate.events import DebateEvent, EventKind
from redline.model import Category, Finding, Review, Severity
from redline.progress import ProgressEvent, Stage, StderrProgress
from redline.report.terminal import console_for, file_link, print_terminal

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

REVIEW = ["review", "--branch", "main"]
_HEADING = re.compile(r"^### `([^`]+)` — (.+)$", re.MULTILINE)
# An analyzer's wall time in the coverage ("ruff 0.17.6: ok, 3 files, 4 findings, 0.03 s"): the
# one part of the report that differs from run to run.
_SECONDS = re.compile(r"(finding|findings), \d+\.\d\d s$", re.MULTILINE)


def untimed(report: str) -> str:
    return _SECONDS.sub(r"\1, … s", report)


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.build_demo_repo(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture(scope="module")
def markdown(demo_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Today's report, piped with --format markdown: the reference for the other runs."""
    home = tmp_path_factory.mktemp("home")
    run = run_redline(
        [*REVIEW, "--repo", str(demo_repo), "--format", "markdown"],
        home,
        stdout_tty=False,
        stderr_tty=False,
    )
    assert run.code == 0 and run.stdout.startswith("# Redline review")
    return run.stdout


def _headings(markdown: str) -> list[tuple[str, str]]:
    found = _HEADING.findall(markdown)
    assert len(found) >= 3, markdown  # the demo's planted problems
    return found


def test_a_terminal_gets_the_report_in_colour_with_links_and_code(
    demo_repo: Path, markdown: str, tmp_path: Path
) -> None:
    run = run_redline(
        [*REVIEW, "--repo", str(demo_repo)], tmp_path, stdout_tty=True, stderr_tty=False
    )
    assert run.code == 0
    assert colour_codes(run.stdout), "no colour on a terminal"
    text = plain(run.stdout)
    assert not text.startswith("# "), "the Markdown, not the terminal report"
    for place, title in _headings(markdown):
        path, line = place.rsplit(":", 1)
        # file:line is an OSC 8 link to the file on this host, the line as the fragment.
        assert "\x1b]8;id=" in run.stdout
        assert re.search(rf"\x1b\]8;id=\d+;file://[^/]*{re.escape(str(demo_repo / path))}#{line}",
                         run.stdout), place  # fmt: skip
        assert f"{place} — {title}" in text
    # The flagged code (numbered from its line) and the suggested fix, highlighted.
    assert re.search(r"21\s+return subprocess\.call\(command, shell=True\)", text)
    assert "if seen is None:" in text
    assert "Suggested fix:" in text and "Coverage" in text


def test_no_color_keeps_the_terminal_report_without_colours(
    demo_repo: Path, markdown: str, tmp_path: Path
) -> None:
    run = run_redline(
        [*REVIEW, "--repo", str(demo_repo)],
        tmp_path,
        stdout_tty=True,
        stderr_tty=True,
        env={"NO_COLOR": "1"},
    )
    assert run.code == 0
    assert colour_codes(run.stdout) == [] and colour_codes(run.stderr) == []
    text = plain(run.stdout)
    for place, title in _headings(markdown):
        assert f"{place} — {title}" in text
    assert "\x1b]8;id=" in run.stdout  # links are not colours: still clickable


def test_color_never_writes_no_escape_codes_and_always_colours_a_pipe(
    demo_repo: Path, markdown: str, tmp_path: Path
) -> None:
    never = run_redline(
        [*REVIEW, "--repo", str(demo_repo), "--color", "never"],
        tmp_path,
        stdout_tty=True,
        stderr_tty=False,
    )
    assert never.code == 0 and "\x1b" not in never.stdout
    for place, title in _headings(markdown):
        assert f"{place} — {title}" in never.stdout.replace("\r\n", "\n")

    always = run_redline(
        [*REVIEW, "--repo", str(demo_repo), "--color", "always"],
        tmp_path,
        stdout_tty=False,
        stderr_tty=False,
        env={"NO_COLOR": "1"},  # the explicit flag wins over the environment
    )
    assert always.code == 0 and colour_codes(always.stdout)
    assert not always.stdout.startswith("# ")


def test_piped_report_is_the_markdown_byte_for_byte(
    demo_repo: Path, markdown: str, tmp_path: Path
) -> None:
    piped = run_redline(
        [*REVIEW, "--repo", str(demo_repo)], tmp_path, stdout_tty=False, stderr_tty=True
    )
    assert piped.code == 0 and untimed(piped.stdout) == untimed(markdown)
    # An explicit --format markdown is Markdown on a terminal too (the pty turns \n into \r\n).
    explicit = run_redline(
        [*REVIEW, "--repo", str(demo_repo), "--format", "markdown"],
        tmp_path,
        stdout_tty=True,
        stderr_tty=False,
    )
    assert untimed(explicit.stdout.replace("\r\n", "\n")) == untimed(markdown)
    out = tmp_path / "report.md"
    to_file = run_redline(
        [*REVIEW, "--repo", str(demo_repo), "--output", str(out)],
        tmp_path,
        stdout_tty=True,
        stderr_tty=True,
    )
    assert to_file.code == 0 and untimed(out.read_text(encoding="utf-8")) == untimed(markdown)
    assert untimed(markdown) != markdown  # the timings were there to leave out


def test_progress_is_a_live_line_on_a_terminal_and_plain_lines_in_a_pipe(
    demo_repo: Path, tmp_path: Path
) -> None:
    live = run_redline(
        [*REVIEW, "--repo", str(demo_repo)], tmp_path, stdout_tty=False, stderr_tty=True
    )
    assert live.code == 0
    assert "\r\x1b[2K" in live.stderr  # redrawn in place
    assert "redline: " not in live.stderr
    assert re.search(r"running static analyzers on \d+ files .*\d+\.\ds", plain(live.stderr))
    # What stays on the screen is the last event's line: the live line erased itself.
    shown = [line for line in screen(live.stderr) if line]
    assert len(shown) == 1 and re.fullmatch(r"review done: \d+ findings\s+\d+\.\ds", shown[0])
    assert live.stderr.count("review done") == 1

    piped = run_redline(
        [*REVIEW, "--repo", str(demo_repo)], tmp_path, stdout_tty=False, stderr_tty=False
    )
    lines = piped.stderr.splitlines()
    assert "\x1b" not in piped.stderr and len(lines) >= 3
    assert all(line.startswith("redline: ") for line in lines), lines
    assert lines[-1].startswith("redline: review done:")

    quiet = run_redline(
        [*REVIEW, "--repo", str(demo_repo), "--quiet"],
        tmp_path,
        stdout_tty=False,
        stderr_tty=True,
    )
    assert quiet.code == 0 and quiet.stderr == ""


def test_an_error_erases_the_live_line_before_the_process_ends(tmp_path: Path) -> None:
    run = run_redline(
        ["review", "--commit", "no-such-ref", "--repo", str(demo.build_demo_repo(tmp_path / "d"))],
        tmp_path,
        stdout_tty=False,
        stderr_tty=True,
    )
    assert run.code == 2
    # The error is printed above the line, and the line is gone when the process has ended.
    shown = [line for line in screen(run.stderr) if line]
    assert shown[0] == "redline: error: unknown revision 'no-such-ref'", run.stderr
    assert not any("collecting" in line for line in shown), run.stderr


# -- the pieces ------------------------------------------------------------------------------


def _hostile_review(repo: Path) -> Review:
    finding = Finding(
        id="f1",
        file="src/we ird\x1b.py",
        line=3,
        severity=Severity.HIGH,
        category=Category.SECURITY,
        title="Title \x1b]0;pwned\x07 [link=https://evil.example]click[/link] :smile:",
        comment="See [docs](https://evil.example/x) \x1b[2J now.",
        existing_code="x = 1\x1b[31m\n",
        improved_code="x = 2\n",
        sources=["model:m"],
    )
    return Review(
        task_id="t", scope="branch", scope_label="branch x", repo=str(repo), findings=[finding]
    )


def test_model_text_cannot_steer_the_terminal(tmp_path: Path) -> None:
    out = io.StringIO()
    print_terminal(_hostile_review(tmp_path), console_for(out, "always"))
    text = out.getvalue()
    assert "pwned" in text and "\x1b]0;" not in text and "\x07" not in text
    assert "\x1b[2J" not in text and "\x1b[31m" not in text
    assert "[link=https://evil.example]click[/link]" in text  # markup is shown, not obeyed
    assert ":smile:" in text
    assert "https://evil.example/x" in plain(text)  # a link shows where it goes
    link = file_link(tmp_path, "src/we ird\x1b.py", 3)
    assert link.endswith("/src/we%20ird%1B.py#3") and "\x1b" not in link


def test_the_debate_view_erases_the_live_line_before_it_writes() -> None:
    leader, follower = os.openpty()
    stream = os.fdopen(follower, "w", encoding="utf-8")
    progress = StderrProgress(stream)
    assert progress.tty
    progress.report(ProgressEvent(Stage.ANALYZING, "running static analyzers on 2 files"))
    time.sleep(0.4)  # a few refreshes of the live line
    view = DebateView(stream, before_write=progress.pause)
    started = {"debaters": [{"label": "A", "model": "m/a"}], "rounds": 1, "scopeLabel": "x"}
    view(DebateEvent(EventKind.STARTED, started))
    view(DebateEvent(EventKind.DELTA, {"text": "The key collides."}))
    time.sleep(0.4)  # the line would have been redrawn over the turn by now
    progress.close()
    stream.close()
    received = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        received += chunk
    os.close(leader)
    text = received.decode()
    before, _, after = text.partition("Debate over x")
    assert "running static analyzers" in before
    assert "running static analyzers" not in after and "The key collides." in after
