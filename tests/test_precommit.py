"""The pre-commit hook (`.pre-commit-hooks.yaml`) as pre-commit itself runs it: the dev group's
pre-commit installs this project into its own environment (pip, from PyPI for the dependencies:
about 25 s per environment here) and runs the hook in a temporary repository.

Both tests export a model (REDLINE_MODEL, at an address where nothing listens): the hook must
review offline anyway, so a hook that let the environment's model through would exit 3 with
"the model could not be used", not block on the analyzers' finding.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitrepo import GitRepo
from readme_snippets import snippet

PROJECT = Path(__file__).resolve().parent.parent
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
# Installing the hook's environment is most of a test's time; a stuck pip must not hang the run.
TIMEOUT = 600
# Both tests on one pytest-xdist worker (`--dist loadgroup`), so they share the module's pip
# cache rather than each filling one.
pytestmark = pytest.mark.xdist_group("pre-commit")

# The demo's shell injection (scripts/demo.py, app/reports.py): input formatted into a shell line.
INJECTION = '''"""Export reports."""
import subprocess


def export(name: str, target_dir: str) -> int:
    command = f"zip -r {target_dir}/{name}.zip reports/{name}"
    return subprocess.call(command, shell=True)
'''
INJECTION_LINE = 7
# The same export without a shell: nothing at or above high.
CLEAN = '''"""Export reports."""
import subprocess


def export(name: str, target_dir: str) -> int:
    return subprocess.call(["zip", "-r", f"{target_dir}/{name}.zip", f"reports/{name}"])
'''
FINDING = "Shell command built from non-constant input"


@pytest.fixture(scope="module")
def hook_source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This working tree as pre-commit fetches a hook repository: committed, in a repository of
    its own (try-repo and `rev:` take a commit, and what is under test may not be committed).
    Tracked files and new ones not ignored, as `git status` sees the tree."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    repo = GitRepo(tmp_path_factory.mktemp("redline-source"))
    for rel in filter(None, listed.split("\0")):
        source = PROJECT / rel
        if source.is_file():  # (a tracked file deleted in the working tree is not copied)
            repo.write(rel, source.read_bytes())
    return repo.root, repo.commit("this working tree")


@pytest.fixture(scope="module")
def pip_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pip cache for the module's tests: the hook's environment is built from the same
    wheels in each (built and downloaded once), still never in the user's cache."""
    return tmp_path_factory.mktemp("pip-cache")


def _env(tmp: Path, pip_cache: Path) -> dict[str, str]:
    """pre-commit's store and temporary files (try-repo's clone and environment) in the test's
    directory, pip's cache in the module's; a fixed git identity; and a model the hook must not
    use."""
    (tmp / "tmp").mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update(
        PRE_COMMIT_HOME=str(tmp / "pre-commit-home"),
        TMPDIR=str(tmp / "tmp"),
        PIP_CACHE_DIR=str(pip_cache),
        PRE_COMMIT_COLOR="never",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_AUTHOR_NAME="Test Author",
        GIT_AUTHOR_EMAIL="author@example.invalid",
        GIT_COMMITTER_NAME="Test Author",
        GIT_COMMITTER_EMAIL="author@example.invalid",
        REDLINE_MODEL="openai/must-not-be-called",
        REDLINE_API_BASE="http://127.0.0.1:9/v1",
    )
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def _assert_blocked(out: subprocess.CompletedProcess[str]) -> None:
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert f"app/reports.py:{INJECTION_LINE}" in text, text
    assert FINDING in text, text
    assert "Offline review" in text, text  # the exported model was not used
    assert "fail-on threshold high" in text, text


def test_try_repo_blocks_a_staged_shell_injection(
    hook_source: tuple[Path, str], pip_cache: Path, tmp_path: Path
) -> None:
    source, rev = hook_source
    app = GitRepo(tmp_path / "app")
    app.write("README.md", "# App\n")
    app.commit("base")
    app.write("app/reports.py", INJECTION)
    app.git("add", "app/reports.py")

    out = _run(
        [str(PRE_COMMIT), "try-repo", str(source), "redline", "--ref", rev],
        app.root,
        _env(tmp_path, pip_cache),
    )

    _assert_blocked(out)
    assert re.search(r"redline \(offline review of the staged change\)\.+Failed", out.stdout)


def test_installed_hook_lets_a_clean_commit_through_and_blocks_the_injection(
    hook_source: tuple[Path, str], pip_cache: Path, tmp_path: Path
) -> None:
    """The README's configuration, installed as a user does (`pre-commit install`), then `git
    commit`: one environment built, used by both commits."""
    source, rev = hook_source
    config = snippet("The hook in .pre-commit-config.yaml", "yaml")
    config = re.sub(r"(?m)^(\s*- repo:) .*$", rf"\1 {source}", config, count=1)
    config = re.sub(r"(?m)^(\s*rev:) .*$", rf"\1 {rev}", config, count=1)
    env = _env(tmp_path, pip_cache)
    app = GitRepo(tmp_path / "app")
    app.write(".pre-commit-config.yaml", config)
    app.commit("pre-commit configuration")
    installed = _run([str(PRE_COMMIT), "install"], app.root, env)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    app.write("app/reports.py", CLEAN)
    app.git("add", "app/reports.py")
    before = app.head()
    clean = _run(["git", "commit", "-m", "export without a shell"], app.root, env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # (git runs the hook with its output on stderr.)
    passed = r"redline \(offline review of the staged change\)\.+Passed"
    assert re.search(passed, clean.stdout + clean.stderr), clean.stdout + clean.stderr
    assert app.head() != before

    # The injection staged, a fix only in the working tree: the staged change is what is
    # committed, so it is what is reviewed (pre-commit stashes the fix, then puts it back).
    app.write("app/reports.py", INJECTION)
    app.git("add", "app/reports.py")
    app.write("app/reports.py", CLEAN.replace("Export", "Export the"))
    before = app.head()
    blocked = _run(["git", "commit", "-m", "export through a shell"], app.root, env)

    _assert_blocked(blocked)
    assert app.head() == before
    assert app.git("show", ":app/reports.py") == INJECTION
    assert (app.root / "app/reports.py").read_text() == CLEAN.replace("Export", "Export the")
