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
from redline.model import AnchorState, Category, Finding, FixState, Review, Severity
from redline.report.terminal import SEVERITY_STYLES, console_for, print_terminal, terminal_safe

from gitrepo import GitRepo

# Letters of several scripts (Hebrew and Arabic right to left), digits, punctuation, spaces,
# and the controls a hostile title might carry (they are dropped, never shown).
_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")),
        st.sampled_from("אבגדהשלום مرحبا éü中文\x1b\x07\x9b"),
    ),
    max_size=60,
)
_PATH = st.text(alphabet=st.sampled_from("abcé_/-.中ש"), min_size=1, max_size=30).map(
    lambda s: s.strip("/") or "f"
)


@st.composite
def findings(draw: st.DrawFn) -> Finding:
    anchor = draw(st.sampled_from(AnchorState))
    line = None if anchor is AnchorState.UNANCHORED else draw(st.integers(1, 100_000))
    return Finding(
        id=draw(st.text(alphabet="abcdef0123456789", min_size=1, max_size=8)),
        file=draw(_PATH),
        line=line,
        severity=draw(st.sampled_from(Severity)),
        category=draw(st.sampled_from(Category)),
        title=draw(_TEXT),
        comment=draw(_TEXT),
        existing_code=draw(st.one_of(st.just(""), _TEXT)),
        improved_code=draw(st.one_of(st.none(), st.just(""), _TEXT)),
        confidence=draw(st.floats(0, 1)),
        sources=draw(st.lists(st.sampled_from(["ruff:E1", "bandit:B602", "model:m"]), max_size=2)),
        anchor=anchor,
        fix=draw(st.sampled_from(FixState)),
    )


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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    found=st.lists(findings(), max_size=12),
    width=st.integers(40, 200),
    color=st.sampled_from(["always", "never"]),
)
def test_any_review_draws_every_finding(found: list[Finding], width: int, color: str) -> None:
    review = Review(
        task_id="t", scope="branch", scope_label="branch main", repo="/r", findings=found
    )
    screen = _squeeze(_draw(review, width, color))
    for finding in found:
        assert _squeeze(terminal_safe(finding.title)) in screen
    for severity in {f.severity for f in found}:
        group = sum(f.severity is severity for f in found)
        assert f"{severity.value.upper()}({group})" in screen
    if not found:
        assert "Nofindings." in screen


def test_thousands_of_findings_draw(tmp_path: Path) -> None:
    found = [
        Finding(
            id=f"f{i}",
            file=f"pkg/m{i % 40}.py",
            line=i + 1,
            severity=list(Severity)[i % len(Severity)],
            category=Category.QUALITY,
            title=f"finding number {i}",
            comment="why",
        )
        for i in range(3000)
    ]
    review = Review(
        task_id="t", scope="branch", scope_label="b", repo=str(tmp_path), findings=found
    )
    screen = _draw(review, 120, "never")
    assert all(f"finding number {i}" in screen for i in (0, 1234, 2999))
    assert "3000 findings: 600 Critical, 600 High, 600 Medium, 600 Low, 600 Info." in screen


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
