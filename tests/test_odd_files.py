"""Files that are not what they seem (issue 24): a symbolic link named `*.py`, and a file the
reviewer cannot read.

A link's content in git is its target path (mode 120000). It was linted as Python: the text
`other.py` is an undefined name, `/etc/hosts` a High "Syntax error" that failed `--fail-on
high` and the pre-commit hook. A link is reviewed as a link — listed with its target change,
and a note when it leaves the repository — never as code: no analyzer, no model, no editor.

One unreadable file (permission denied) made `git diff` fail and with it the whole review
(exit 2, "git diff failed"). The rest is reviewed and that file is listed as skipped. Tests run
as root, where mode 000 stops no read: the CLI runs without CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH (setpriv), so the kernel refuses the read the way it does for a user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from model_env import isolate_model_env

from gitrepo import GitRepo
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

REDLINE = str(Path(sys.executable).with_name("redline"))
KEEP = ("REDLINE_CACHE_DIR", "REDLINE_CONFIG", "REDLINE_API_KEY")
LINK_MARK = "symbolic link"


def redline(
    *argv: str, cwd: Path, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_") or k in KEEP}
    return subprocess.run(
        [*prefix, REDLINE, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert "Traceback" not in done.stderr, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def skipped(report: dict[str, Any]) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in report["coverage"]["skipped"]}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(monkeypatch, tmp_path)


@pytest.fixture
def linked(tmp_path: Path) -> GitRepo:
    """pkg/link.py -> real.py and pkg/out.py -> ../lib.py are committed; the change retargets
    them (to other.py, and to /etc/hosts outside the repository) and edits app.py."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/real.py", "def f():\n    return 1\n")
    repo.write("pkg/other.py", "def g():\n    return 2\n")
    repo.write("lib.py", "def h():\n    return 3\n")
    repo.write("app.py", "def main():\n    return 1\n")
    os.symlink("real.py", repo.root / "pkg" / "link.py")
    os.symlink("../lib.py", repo.root / "pkg" / "out.py")
    repo.commit("one")
    (repo.root / "pkg" / "link.py").unlink()
    os.symlink("other.py", repo.root / "pkg" / "link.py")
    (repo.root / "pkg" / "out.py").unlink()
    os.symlink("/etc/hosts", repo.root / "pkg" / "out.py")
    repo.write("app.py", "def main():\n    return 2\n")
    return repo


def test_control_git_stores_the_links_as_links(linked: GitRepo) -> None:
    modes = linked.git("ls-files", "-s", "pkg/link.py", "pkg/out.py")
    assert modes.count("120000") == 2


@pytest.mark.parametrize("scope", [(), ("--commit", "HEAD")])
def test_a_changed_link_is_not_linted_and_passes_the_gate(
    linked: GitRepo, scope: tuple[str, ...]
) -> None:
    if scope:
        linked.commit("two")
    done = redline("review", *scope, "--fail-on", "high", "--format", "json", cwd=linked.root)
    report = report_of(done)
    assert done.returncode == 0, done.stdout + done.stderr
    on_links = [f for f in report["findings"] if f["file"] in ("pkg/link.py", "pkg/out.py")]
    assert on_links == []
    reasons = skipped(report)
    assert (
        LINK_MARK in reasons["pkg/link.py"] and "'real.py' -> 'other.py'" in reasons["pkg/link.py"]
    )
    assert "outside the repository" in reasons["pkg/out.py"]
    assert "outside" not in reasons["pkg/link.py"]
    assert "pkg/link.py" not in report["coverage"]["reviewed_files"]
    assert "app.py" in report["coverage"]["reviewed_files"]


def test_the_terminal_report_shows_no_python_finding_on_a_link(linked: GitRepo) -> None:
    done = redline("review", "--fail-on", "high", "--format", "markdown", cwd=linked.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Syntax error" not in done.stdout and "Undefined name" not in done.stdout
    assert "points outside the repository" in done.stdout


def test_a_link_is_never_sent_to_a_model(linked: GitRepo) -> None:
    script = ReviewScript()
    with ScriptedLLM(handler=script) as llm:
        done = redline(
            "review", "--format", "json", "--model", "openai/scripted",
            "--api-base", llm.base_url, cwd=linked.root,
        )  # fmt: skip
        sent = json.dumps(llm.requests)
    report_of(done)
    assert "app.py" in sent  # the model did review the real change
    assert "pkg/link.py" not in sent and "pkg/out.py" not in sent and "/etc/hosts" not in sent


def test_a_new_link_to_a_python_file_is_a_link_too(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    os.symlink("a.py", repo.root / "b.py")
    repo.commit("two")
    done = redline(
        "review", "--commit", "HEAD", "--fail-on", "low", "--format", "json", cwd=repo.root
    )
    report = report_of(done)
    assert done.returncode == 0 and report["findings"] == []
    assert "new symbolic link to 'a.py'" in skipped(report)["b.py"]


# -- an unreadable file -------------------------------------------------------------------------

NO_DAC = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")


def _without_dac_works(path: Path) -> bool:
    if shutil.which("setpriv") is None:
        return False
    probe = subprocess.run([*NO_DAC, "cat", str(path)], capture_output=True, check=False)
    return probe.returncode != 0 and b"Permission denied" in probe.stderr


@pytest.fixture
def locked(tmp_path: Path) -> GitRepo:
    """secret.py (tracked) and fresh.py (untracked) cannot be read; app.py has a change."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("secret.py", "x = 1\n")
    repo.write("app.py", "def main():\n    return 1\n")
    repo.commit("one")
    repo.write("secret.py", "x = 2\n")
    repo.write("fresh.py", "y = 1\n")
    repo.write(
        "app.py", "import subprocess\n\n\ndef main(c):\n    return subprocess.call(c, shell=True)\n"
    )
    for name in ("secret.py", "fresh.py"):
        (repo.root / name).chmod(0)
    if os.geteuid() != 0:
        pytest.skip("needs root to drop capabilities with setpriv")
    if not _without_dac_works(repo.root / "secret.py"):
        pytest.skip("setpriv cannot make a read fail here")
    return repo


def test_control_git_itself_fails_on_the_unreadable_file(locked: GitRepo) -> None:
    done = subprocess.run(
        [*NO_DAC, "git", "diff", "HEAD"], cwd=locked.root, capture_output=True, text=True
    )
    assert done.returncode != 0 and "Permission denied" in done.stderr


def test_an_unreadable_file_is_skipped_and_the_rest_reviewed(locked: GitRepo) -> None:
    done = redline("review", "--format", "json", cwd=locked.root, prefix=NO_DAC)
    assert done.returncode == 0, done.stdout + done.stderr
    report = report_of(done)
    reasons = skipped(report)
    assert "cannot be read" in reasons["secret.py"] and "permission denied" in reasons["secret.py"]
    assert "cannot be read" in reasons["fresh.py"]
    assert "app.py" in report["coverage"]["reviewed_files"]
    assert any(f["file"] == "app.py" for f in report["findings"])  # shell=True was found
    # The failed first diff fed part of itself to the unit builder: nothing counted twice.
    assert report["stats"]["files"] == 3
    ids = [f["id"] for f in report["findings"]]
    assert len(ids) == len(set(ids))
    assert "git diff failed" not in done.stderr


def test_an_unreadable_file_does_not_block_the_gate_on_the_rest(locked: GitRepo) -> None:
    done = redline("review", "--fail-on", "high", cwd=locked.root, prefix=NO_DAC)
    assert done.returncode == 1, done.stdout + done.stderr  # app.py's shell=True, not exit 2
    assert "secret.py" in done.stdout and "cannot be read" in done.stdout


# -- the editor ---------------------------------------------------------------------------------


async def test_the_language_server_shows_nothing_on_a_link(linked: GitRepo, tmp_path: Path) -> None:
    from lsp_support import server_env, start_session, stop_session

    session = await start_session(linked.root, "vscode", server_env(tmp_path / "lsp-cache"))
    try:
        session.open("pkg/link.py", "other.py")  # what an editor holding the link's text sends
        task = await session.review(scope="uncommitted")
        end = await session.finished(task, timeout=60)
        assert end["state"] == "finished", end
        for rel in ("pkg/link.py", "pkg/out.py"):
            assert session.client.diagnostics.get(session.uri(rel), []) == []
            assert session.uri(rel) not in session.listed
    finally:
        await stop_session(session)
