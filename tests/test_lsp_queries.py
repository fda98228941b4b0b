"""The requests an editor's views ask the server (lsp/queries.py), through a real server process
and a real git repository: the report view's Markdown, the branch and commit pickers, the user
configuration file."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from gitrepo import GitRepo
from lsp_support import Session, plain, server_env, start_session, stop_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    return demo.build_demo_repo(tmp_path / "demo")


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
async def vscode(demo_repo: Path, cache: Path) -> AsyncIterator[Session]:
    s = await start_session(demo_repo, "vscode", server_env(cache))
    yield s
    await stop_session(s)


async def ask(s: Session, method: str, params: dict[str, Any] | None = None) -> Any:
    return plain(await s.client.protocol.send_request_async(method, params or {}))


async def test_report_is_the_last_review_without_what_was_dismissed_since(vscode: Session) -> None:
    s = vscode
    before = await ask(s, "redline/report")
    assert before == {"taskId": None, "scopeLabel": None, "markdown": None, "running": False}

    task_id = await s.review(scope="branch", base="main")
    assert (await s.finished(task_id))["state"] == "finished"
    report = await ask(s, "redline/report")
    assert report["taskId"] == task_id and report["running"] is False
    assert "feature/export" in report["scopeLabel"]
    markdown = report["markdown"]
    # The whole report: the findings at their lines, and the coverage with the skipped lockfile.
    assert "app/reports.py" in markdown and "poetry.lock" in markdown
    shell = next(f for f in s.rows() if f["file"] == "app/reports.py" and f["line"] == 21)
    assert shell["title"] in markdown

    await s.command("redline.dismiss", {"id": shell["id"], "reason": "reviewed by hand"})
    after = (await ask(s, "redline/report"))["markdown"]
    assert shell["title"] not in after
    assert "Unused import" in after

    # The user deletes `import os` in the editor: the sidebar withdraws that finding, and the
    # report says the same, with a note (not a silent drop).
    s.open("app/reports.py")
    start, end = types.Position(line=3, character=0), types.Position(line=4, character=0)
    s.edit("app/reports.py", 2, types.Range(start=start, end=end), "")
    await s.until(lambda: 3 not in s.lines_of("app/reports.py"), what="withdrawn")
    edited = (await ask(s, "redline/report"))["markdown"]
    assert "Unused import" not in edited
    assert "1 finding of this review is not shown" in edited
    # The findings left are where the editor shows them now: one line up.
    assert "`app/reports.py:30`" in edited and "`app/reports.py:31`" not in edited


async def test_refs_list_branches_and_recent_commits_for_the_pickers(
    vscode: Session, demo_repo: Path
) -> None:
    repo = GitRepo(demo_repo)  # `git init` again is harmless: the demo's history stays
    main = repo.git("rev-parse", "main").strip()
    repo.git("update-ref", "refs/remotes/origin/main", main)
    repo.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    # A subject written by the author of the change: bidi controls never reach a label.
    repo.git("commit", "-q", "--allow-empty", "-m", "Fix \u202eevil\u202c title")

    refs = await ask(vscode, "redline/refs")
    assert refs["current"] == "feature/export"
    assert refs["defaultBase"] == "origin/main"
    # Local branches first, most recently committed first: GitRepo dates its commit
    # 2026-01-01, before the demo's commits (made now), so main is the newer one here.
    assert refs["branches"] == [
        {"name": "main", "remote": False, "current": False},
        {"name": "feature/export", "remote": False, "current": True},
        {"name": "origin/main", "remote": True, "current": False},
    ]
    commits = refs["commits"]
    assert [c["subject"] for c in commits] == [
        "Fix evil title",
        "Export reports as zip archives",
        "Reporting service",
    ]
    assert commits[2]["sha"] == main and commits[2]["short"] == main[:7]
    assert [c["author"] for c in commits] == ["Test Author", "Demo Author", "Demo Author"]
    assert commits[0]["date"][:4].isdigit()

    limited = await ask(vscode, "redline/refs", {"limit": 1})
    assert [c["subject"] for c in limited["commits"]] == ["Fix evil title"]
    with pytest.raises(JsonRpcInvalidParams, match="limit must be a whole number from 1 to 500"):
        await ask(vscode, "redline/refs", {"limit": 0})
    with pytest.raises(JsonRpcInvalidParams, match="folder must be a folder URI"):
        await ask(vscode, "redline/report", {"folder": 3})


async def test_refs_of_a_repository_with_no_commits_and_of_no_repository(
    tmp_path: Path, cache: Path
) -> None:
    GitRepo(tmp_path / "empty", branch="trunk")
    s = await start_session(tmp_path / "empty", "vscode", server_env(cache))
    try:
        refs = await ask(s, "redline/refs")
        assert refs == {"current": "trunk", "defaultBase": None, "branches": [], "commits": []}
    finally:
        await stop_session(s)

    (tmp_path / "plain").mkdir()
    s = await start_session(tmp_path / "plain", "vscode", server_env(cache))
    try:
        with pytest.raises(JsonRpcException, match="is not a git repository") as info:
            await ask(s, "redline/refs")
        assert info.value.code == types.LSPErrorCodes.RequestFailed.value
    finally:
        await stop_session(s)


async def test_user_config_is_found_and_created_from_the_init_template(
    demo_repo: Path, cache: Path
) -> None:
    path = cache / "no-user-config.toml"
    vscode = await start_session(demo_repo, "vscode", server_env(cache, REDLINE_CONFIG=str(path)))
    try:
        await _user_config_round_trip(vscode, path)
    finally:
        await stop_session(vscode)


async def _user_config_round_trip(vscode: Session, path: Path) -> None:
    found = await ask(vscode, "redline/userConfig")
    assert found == {"path": str(path), "exists": False, "created": False}
    assert not path.exists()

    created = await ask(vscode, "redline/userConfig", {"create": True})
    assert created == {"path": str(path), "exists": True, "created": True}
    text = path.read_text(encoding="utf-8")
    tomllib.loads(text)  # the template is valid TOML
    assert "model" in text  # the user file is where the model is chosen

    path.write_text("# mine\n", encoding="utf-8")
    again = await ask(vscode, "redline/userConfig", {"create": True})
    assert again["created"] is False and path.read_text(encoding="utf-8") == "# mine\n"
    with pytest.raises(JsonRpcInvalidParams, match="create must be true or false"):
        await ask(vscode, "redline/userConfig", {"create": "yes"})
