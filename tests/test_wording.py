"""Counted words read right, and nothing is said twice (issue 24): "1 finding", "splitting
1 file", "3 debaters × 1 round", "No findings." once, through one helper (redline/plural.py)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from output_bed import redline
from redline.cli.debate_view import DebateView
from redline.debate.estimate import DebateEstimate, ModelCost
from redline.debate.events import DebateEvent, EventKind
from redline.model import Category, Finding, Review, Severity
from redline.plural import plural
from redline.report.markdown import render_markdown
from redline.report.terminal import report_renderable

from gitrepo import GitRepo


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from(["file", "finding", "round"]))
def test_plural_is_singular_only_for_one(n: int, word: str) -> None:
    text = plural(n, word)
    assert text.startswith(f"{n} ")
    assert text.endswith("s") is (n != 1)
    assert plural(n, "child", "children").endswith("children" if n != 1 else "child")


def _repo(root: Path, feature: str) -> GitRepo:
    repo = GitRepo(root)
    repo.write("app.py", "def ok():\n    return 1\n")
    repo.commit("base")
    repo.write("app.py", feature)
    return repo


def test_a_one_file_one_finding_review_says_so_in_the_singular(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", "import os\n\n\ndef ok():\n    return 1\n")
    run = redline(tmp_path, "review", "--repo", str(repo.root))
    assert run.returncode == 0, run.stderr
    assert "splitting 1 file into review units" in run.stderr
    assert "running static analyzers on 1 file\n" in run.stderr
    assert "review done: 1 finding\n" in run.stderr
    assert "1 finding:" in run.stdout
    assert "1 files" not in run.stderr + run.stdout and "1 findings" not in run.stderr


def test_a_clean_review_says_no_findings_once(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", "def ok():\n    return 2\n")
    run = redline(tmp_path, "review", "--repo", str(repo.root), "--quiet")
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("No findings") == 1, run.stdout
    review = Review(task_id="t", scope="uncommitted", scope_label="x", repo=".")
    review.stats.files = 1
    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(report_renderable(review))
    assert console.file.getvalue().count("No findings") == 1  # type: ignore[attr-defined]


def test_one_rejected_finding_is_one_finding() -> None:
    dropped = Finding(
        id="RL-000000000001", file="a.py", line=1, severity=Severity.LOW,
        category=Category.QUALITY, title="t", comment="c",
    )  # fmt: skip
    review = Review(task_id="t", scope="uncommitted", scope_label="x", repo=".", dropped=[dropped])
    review.coverage.models = ["openai/m"]
    assert "- Rejected by the verifier: 1 finding\n" in render_markdown(review)


def test_a_one_round_debate_says_round() -> None:
    shares = [ModelCost(f"D{i}", "openai/m", 1, 2, 10, None) for i in range(4)]
    estimate = DebateEstimate("x", rounds=1, turn_steps=2, change_tokens=1,
                              transcript_tokens=1, shares=shares)  # fmt: skip
    assert "3 debaters × 1 round = 3 turns" in estimate.as_markdown()
    out = io.StringIO()
    debaters = [{"label": "A", "model": "m"}]
    DebateView(out)(DebateEvent(EventKind.STARTED, {"debaters": debaters, "rounds": 1}))
    assert ": 1 debater, 1 round — A (m)" in out.getvalue()


def test_the_welcome_view_never_ends_a_link_with_two_full_stops() -> None:
    manifest = Path(__file__).resolve().parents[1] / "editor-client" / "package.json"
    welcome = json.loads(manifest.read_text(encoding="utf-8"))["contributes"]["viewsWelcome"]
    for view in welcome:
        shown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", view["contents"])  # a link shows its label
        assert "…." not in shown and ".." not in shown, shown


def test_bandit_left_out_by_policy_is_said_briefly(tmp_path: Path) -> None:
    # The common case: no added line holds what only bandit checks; ruff's S rules ran.
    repo = _repo(tmp_path / "repo", "import os\n\n\ndef ok():\n    return 1\n")
    run = redline(tmp_path, "review", "--repo", str(repo.root), "--quiet")
    [line] = [x for x in run.stdout.splitlines() if x.lstrip().startswith("- bandit")]
    assert line.endswith("skipped (not needed: ruff's S rules cover these files)"), line
    assert len(line) < 80
