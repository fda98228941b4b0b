"""The terminal report over generated reviews: every severity, category, anchor and fix state,
Unicode and right-to-left text, empty and many findings, at widths 40–200 with colour on and
off. It must never raise, and every finding must be on the screen.

An Info finding once crashed `redline review` in a terminal (`KeyError: <Severity.INFO>`)
while 1,548 example tests passed: none of them drew an Info finding. The pty test at the end
runs the installed CLI on a change that holds one."""

from __future__ import annotations

import io
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pty_run import plain, run_redline
from redline.model import Review, Severity
from redline.report.terminal import SEVERITY_STYLES, console_for, print_terminal, terminal_safe
from review_strategies import many_findings, marker, reviews

from gitrepo import GitRepo


def _squeeze(text: str) -> str:
    """Text with every blank removed: wrapping at any width only adds blanks and line breaks."""
    return re.sub(r"\s+", "", text)


def _draw(review: Review, width: int, color: str) -> str:
    out = io.StringIO()
    console = console_for(out, color, force_terminal=True)
    console.width = width
    print_terminal(review, console)
    return plain(out.getvalue())


def test_every_severity_has_a_style() -> None:
    assert set(SEVERITY_STYLES) == set(Severity)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    review=reviews(),
    width=st.integers(40, 200),
    color=st.sampled_from(["always", "never"]),
)
def test_any_review_draws_every_finding(review: Review, width: int, color: str) -> None:
    found = review.findings
    screen = _squeeze(_draw(review, width, color))
    for i, finding in enumerate(found):
        assert marker(i) in screen
        assert _squeeze(terminal_safe(finding.file)) in screen
    for severity in {f.severity for f in found}:
        group = sum(f.severity is severity for f in found)
        assert f"{severity.value.upper()}({group})" in screen
    if not found:
        assert "Nofindings" in screen


def test_thousands_of_findings_draw() -> None:
    """1,000 findings with code and fixes: every one drawn (and in seconds — the lexer guess per
    code block once took 30 s for 2,000, report/terminal.py `_lexer`)."""
    review = many_findings(1000)
    screen = _squeeze(_draw(review, 120, "never"))
    assert all(marker(i) in screen for i in range(1000))


def test_an_info_finding_in_a_real_terminal(tmp_path: Path) -> None:
    """The installed CLI on a pty, on a change whose only finding is Info (ruff UP031 on a
    `%`-format): the report is drawn, the exit code is 0 — not a traceback and exit 1."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "def f(x):\n    return x\n")
    repo.commit("start")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", 'def f(x):\n    return "value: %s" % x\n')
    repo.commit("format")
    for color in ("auto", "never"):
        run = run_redline(
            ["review", "--branch", "main", "--repo", str(repo.root), "--color", color],
            tmp_path / f"home-{color}",
            stdout_tty=True,
            stderr_tty=True,
        )
        shown = plain(run.stdout)
        assert run.code == 0, (run.stdout, run.stderr)
        assert "Traceback" not in run.stdout + run.stderr
        assert "INFO (1)" in shown and "app.py:2" in shown
