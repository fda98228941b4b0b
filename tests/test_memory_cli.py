"""`redline memory build|status|search|forget` and the review's coverage line, end to end:
the installed `redline` as a subprocess on a real git repository, with the real embedding
model."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from redline.model import Review
from redline.report.terminal import print_terminal

from gitrepo import GitRepo

REDLINE = Path(sys.executable).with_name("redline")

NET = '''\
import time


def send_with_retry(request, attempts=3):
    """Send a request, retrying with exponential backoff when the server is busy."""
    for attempt in range(attempts):
        try:
            return request.send()
        except TimeoutError:
            time.sleep(2**attempt)
    raise TimeoutError("gave up")
'''

API = '''\
from pkg.net import send_with_retry


def fetch_user(user_id):
    """Load one user record."""
    return send_with_retry({"user": user_id})


def parse_config(text):
    """Read the INI configuration text into a dictionary of sections."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
'''


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    clean["REDLINE_CACHE_DIR"] = os.environ["REDLINE_CACHE_DIR"]
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text("")
    clean["REDLINE_CONFIG"] = str(user)
    return clean


def redline(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REDLINE), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.fixture
def project(repo: GitRepo) -> GitRepo:
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/net.py", NET)
    repo.write("pkg/api.py", API)
    repo.commit("start")
    return repo


def test_build_status_search_forget(project: GitRepo, env: dict[str, str]) -> None:
    root = project.root
    absent = redline(env, root, "memory", "search", "backoff")
    assert absent.returncode == 2 and absent.stdout == ""
    assert absent.stderr == "redline: memory: not built — run `redline memory build`\n"
    status = redline(env, root, "memory", "status")
    assert status.returncode == 0 and status.stdout.startswith("memory: not built"), status

    built = redline(env, root, "memory", "build")
    assert built.returncode == 0, built.stderr
    summary = built.stderr.strip().splitlines()[-1]
    assert summary.startswith("memory: 3 symbols in 3 files (3 parsed, 0 unchanged, 0 removed")

    by_doc = redline(env, root, "memory", "search", "retry with exponential backoff")
    assert by_doc.returncode == 0, by_doc.stderr
    first = by_doc.stdout.splitlines()[0]
    assert first.startswith("pkg/net.py:4 send_with_retry "), by_doc.stdout
    # By a call's name: the function that calls it is found with it.
    by_call = redline(env, root, "memory", "search", "send_with_retry", "--format", "json")
    rows = json.loads(by_call.stdout)
    names = [r["qualname"] for r in rows]
    assert names[0] == "send_with_retry" and "fetch_user" in names, rows
    assert {"path", "line", "qualname", "score", "why"} <= set(rows[0])
    limited = json.loads(redline(env, root, "memory", "search", "user", "--format", "json",
                                 "--limit", "1").stdout)  # fmt: skip
    assert len(limited) == 1

    shown = redline(env, root, "memory", "status")
    lines = shown.stdout.splitlines()
    assert lines[0] == "memory: 3 symbols, built just now", lines
    assert "files:   3" in lines and "model:   all-MiniLM-L6-v2" in lines
    assert any(line.startswith("store:   SQLite ") for line in lines)
    assert lines[-1] == "limits reached: none"
    as_json = json.loads(redline(env, root, "memory", "status", "--format", "json").stdout)
    assert as_json["symbols"] == 3 and as_json["head"] == project.head()

    again = redline(env, root, "memory", "build", "pkg/api.py")
    assert "(0 parsed, 1 unchanged, 0 removed" in again.stderr
    # A path from a directory inside the repository, as git takes it; from elsewhere with
    # --repo (the language server), from the repository's top.
    (root / "pkg" / "api.py").write_text(API + "\n\ndef later():\n    pass\n")
    inside = redline(env, root / "pkg", "memory", "build", "api.py")
    assert "(1 parsed, 0 unchanged, 0 removed" in inside.stderr, inside.stderr
    outside = redline(env, root.parent, "memory", "build", "--repo", str(root), "pkg/api.py")
    assert "(0 parsed, 1 unchanged, 0 removed" in outside.stderr, outside.stderr

    forgot = redline(env, root, "memory", "forget")
    assert forgot.returncode == 0
    assert forgot.stdout.startswith("memory: forgot 4 symbols in 3 files")
    assert redline(env, root, "memory", "search", "backoff").returncode == 2
    assert redline(env, root, "memory", "forget").stdout.startswith("memory: nothing to forget")


def test_bad_input_is_one_line_and_exit_2(
    project: GitRepo, env: dict[str, str], tmp_path: Path
) -> None:
    for args in (
        ("memory", "search", "x", "--limit", "0"),
        ("memory", "search", "   "),
        ("memory", "build", str(tmp_path)),  # outside the repository
        ("memory", "status", "--repo", str(tmp_path / "nowhere")),
        ("memory", "nonsense"),
    ):
        result = redline(env, project.root, *args)
        assert result.returncode == 2, (args, result)
        # argparse's usage may come first; the error is one line, the last.
        assert result.stderr.strip().splitlines()[-1].startswith("redline: "), result.stderr
        assert "Traceback" not in result.stderr


def test_the_review_coverage_says_memory_state(project: GitRepo, env: dict[str, str]) -> None:
    root = project.root
    project.write("pkg/net.py", NET.replace("gave up", "gave up at last"))
    before = redline(env, root, "review", "--format", "json", "--quiet")
    assert before.returncode == 0, before.stderr
    assert json.loads(before.stdout)["coverage"]["memory"] == "not built"
    markdown = redline(env, root, "review", "--quiet")
    assert "- Memory: not built" in markdown.stdout

    assert redline(env, root, "memory", "build").returncode == 0
    after = json.loads(redline(env, root, "review", "--format", "json", "--quiet").stdout)
    assert after["coverage"]["memory"] == "3 symbols, built just now"
    review = Review.model_validate(after)
    console = Console(record=True, width=120, file=io.StringIO())
    print_terminal(review, console)
    assert "Memory: 3 symbols, built just now" in console.export_text()
