"""A review without a model lists as reviewed only the files an analyzer read: a Markdown file
(no analyzer reads it) is listed as not reviewed, with the reason, in every format that lists
files — end to end through the installed `redline`."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pty_run import plain, run_redline
from redline.model import AnalyzerRun, Review
from redline.publish.bodies import summary_body
from redline.review.unanalyzed import _KINDS as KINDS
from redline.review.unanalyzed import kind_of, unanalyzed

from gitrepo import GitRepo

REASON = "not reviewed: no analyzer for Markdown and no model ran"


def _repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("README.md", "# Notes\n\nSee `app.py`.\n")
    repo.write("app.py", "import os\nx = 1\n")
    repo.commit("change")
    return repo


def _review(home: Path, root: Path, *extra: str, tty: bool = False) -> tuple[int, str]:
    args = ["review", "--branch", "main", "--repo", str(root), "--quiet", *extra]
    run = run_redline(args, home, stdout_tty=tty, stderr_tty=False, env={"COLUMNS": "300"})
    return run.code, run.stdout


def test_an_offline_review_lists_a_markdown_file_as_not_reviewed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _repo(root)
    home = tmp_path / "home"

    code, markdown = _review(home, root)
    assert code == 0
    assert "- Reviewed: 1 file: `app.py`" in markdown
    assert f"  - `README.md`: {REASON}" in markdown

    code, screen = _review(home, root, "--color", "never", tty=True)
    words = " ".join(plain(screen).split())
    assert "Reviewed: 1 file: app.py" in words
    assert f"README.md: {REASON}" in words

    data = json.loads(_review(home, root, "--format", "json")[1])
    assert data["coverage"]["reviewed_files"] == ["app.py"]
    assert {"path": "README.md", "reason": REASON} in data["coverage"]["skipped"]

    sarif = json.loads(_review(home, root, "--format", "sarif")[1])
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any(n["message"]["text"] == f"Not reviewed: README.md ({REASON})" for n in notes)

    body = summary_body(Review.model_validate(data), "review")
    assert "- Reviewed: 1 file: `app.py`" in body
    assert f"  - `README.md`: {REASON}" in body


def test_with_a_model_that_cannot_be_used_the_markdown_file_is_not_reviewed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    _repo(root)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out = _review(
        tmp_path / "home",
        root,
        "--model", "openai/m", "--api-base", f"http://127.0.0.1:{port}/v1",
    )  # fmt: skip
    assert code == 3  # the model could not be used
    assert "- Reviewed: 1 file: `app.py`" in out
    assert f"  - `README.md`: {REASON}" in out


def test_a_file_whose_analyzer_did_not_run_names_the_analyzer() -> None:
    runs = [AnalyzerRun(name="ruff", status="missing"), AnalyzerRun(name="bandit", status="ok")]
    left = unanalyzed(
        ["a.py", "b.py", "notes.txt"], {"ruff": ["a.py", "b.py"], "bandit": ["b.py"]}, runs
    )
    assert [(s.path, s.reason) for s in left] == [
        ("a.py", "not reviewed: no analyzer ran on it (ruff: missing) and no model ran"),
        ("notes.txt", "not reviewed: no analyzer for plain text and no model ran"),
    ]


_PATH = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=30)
_STATUS = st.sampled_from(["ok", "partial", "missing", "failed", "skipped"])


@given(
    paths=st.lists(_PATH, max_size=12),
    jobs=st.dictionaries(
        st.sampled_from(["ruff", "bandit", "custom"]),
        st.tuples(_STATUS, st.lists(_PATH, max_size=12)),
    ),
)
def test_every_file_is_read_by_an_analyzer_or_listed_once_with_a_reason(
    paths: list[str], jobs: dict[str, tuple[str, list[str]]]
) -> None:
    runs = [AnalyzerRun(name=name, status=status) for name, (status, _) in jobs.items()]
    handed = {name: files for name, (_, files) in jobs.items()}
    read = {
        p for name, (status, files) in jobs.items() if status in ("ok", "partial") for p in files
    }
    left = unanalyzed(paths, handed, runs)
    assert sorted(s.path for s in left) == sorted(set(paths) - read)
    for skipped in left:
        assert skipped.reason.startswith("not reviewed: no analyzer ")
        assert skipped.reason.endswith(" and no model ran")


@given(_PATH)
def test_every_path_has_a_kind(path: str) -> None:
    kind = kind_of(path)
    named = kind in KINDS.values() or kind.startswith("files like ") or kind.endswith(" files")
    assert kind and named
