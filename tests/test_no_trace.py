"""Tests leave no trace: the session runs in a private home (tests/private_env.py), a review
through the real CLI with none of the REDLINE_* settings still lands there, and a run that
writes into the user's Redline directories fails and names the file."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import private_env
from gitrepo import GitRepo

TESTS = Path(__file__).parent
REDLINE = Path(sys.executable).with_name("redline")


def test_the_session_runs_in_a_private_home(request: pytest.FixtureRequest) -> None:
    env = request.config.stash[private_env.STASH_KEY]
    home = Path(os.environ["HOME"])
    assert home.is_relative_to(env.root)
    assert env.saved["HOME"] != str(home)
    for var in private_env.XDG_DIRS:
        assert Path(os.environ[var]).is_relative_to(home), var
    # Redline's own defaults, with no REDLINE_* override, resolve inside the private home.
    import platformdirs

    assert platformdirs.user_cache_path("redline").is_relative_to(home)
    assert platformdirs.user_config_path("redline").is_relative_to(home)
    # The user's directories being watched are not the private ones.
    assert not any(path.is_relative_to(env.root) for path in env.watched)


def test_a_cli_review_without_any_redline_setting_writes_into_the_private_home(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("a.py", "import os\nx = 1\n")
    # As a fixture that builds the environment by dropping every REDLINE_* variable does.
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    out = subprocess.run(
        [str(REDLINE), "review"], cwd=repo.root, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    records = list((Path(os.environ["XDG_CACHE_HOME"]) / "redline").rglob("*.task/task.json"))
    assert records, "the review's task record is not in the private cache"
    history = subprocess.run(
        [str(REDLINE), "history"], cwd=repo.root, env=env, capture_output=True, text=True
    )
    assert records[-1].parent.name.removesuffix(".task") in history.stdout


INNER_TEST = """
import os, pathlib, subprocess, sys

def test_inner(tmp_path):
    import json

    if os.environ.get("INNER_WRITE"):
        # A test that writes into the user's cache: the run must fail and name the file.
        leak = pathlib.Path(os.environ["INNER_USER_HOME"], ".cache/redline/leak_content.json")
        leak.parent.mkdir(parents=True)
        leak.write_text(json.dumps({"repo": str(tmp_path)}))
    if os.environ.get("INNER_OTHER_WRITER"):
        other = pathlib.Path(os.environ["INNER_USER_HOME"], ".cache/redline/editor_content.json")
        other.parent.mkdir(parents=True)
        other.write_text(json.dumps({"repo": "/home/someone/project"}))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.py").write_text("import os\\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    done = subprocess.run([os.environ["INNER_REDLINE"], "review", "--repo", str(tmp_path)], env=env)
    assert done.returncode == 0
"""


def run_inner(
    tmp_path: Path, *, write: bool, other_writer: bool = False
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """A pytest session with only the private_env plugin, whose user is a fresh home."""
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER_TEST), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDLINE_", "XDG_"))}
    env |= {
        "HOME": str(user_home),
        "PYTHONPATH": str(TESTS),
        "INNER_USER_HOME": str(user_home),
        "INNER_REDLINE": str(REDLINE),
    }
    if write:
        env["INNER_WRITE"] = "1"
    if other_writer:
        env["INNER_OTHER_WRITER"] = "1"
    pytest_args = ["-q", "-p", "private_env", "-p", "no:cacheprovider", "-c", os.devnull]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args, "--rootdir", str(tmp_path), "test_inner.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return out, user_home


def test_a_run_that_only_reviews_leaves_the_user_home_empty(tmp_path: Path) -> None:
    out, user_home = run_inner(tmp_path, write=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert list(user_home.rglob("*")) == []


def test_a_run_that_writes_into_the_user_cache_fails_and_names_the_file(tmp_path: Path) -> None:
    out, user_home = run_inner(tmp_path, write=True)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 passed" in out.stdout
    leak = user_home / ".cache" / "redline" / "leak_content.json"
    assert f"added {leak}" in out.stdout


def test_a_change_that_names_no_test_directory_is_listed_but_not_a_failure(
    tmp_path: Path,
) -> None:
    """Another program's Redline (an editor) writing its own records during the run."""
    out, _home = run_inner(tmp_path, write=False, other_writer=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "changed during the run, not by a test" in out.stdout
