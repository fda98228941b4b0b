"""Each run's findings are kept: a debate's action items (or an ask's findings) do not replace
the review's in diagnostics or in the sidebar; the editor shows them together or one kind at a
time (`redline.showRuns`), and a new run of one kind replaces only that kind's. A real server
process, a real git repository, the scripted debaters of test_lsp_debate.py over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from test_lsp_debate import APP, BASE, EVAL_LINE, DebateScript, debate_env

from gitrepo import GitRepo
from lsp_support import Session, plain, start_session, stop_session
from scripted_llm import ScriptedLLM

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")

# The change: the eval the debate is about, and an unused import only the review reports.
CHANGED = (
    "import json\nimport os\n\ndef load(path):\n    with open(path) as f:\n"
    "        return eval(f.read())\n"
)
ACTION_ITEM = "Do not eval file contents"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git = GitRepo(tmp_path / "repo")
    git.write(APP, BASE)
    git.commit("loader")
    git.write(APP, CHANGED)
    return git.root


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=DebateScript()) as server:
        yield server


@pytest.fixture
async def s(repo: Path, tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[Session]:
    session = await start_session(repo, "vscode", debate_env(tmp_path / "cache", llm))
    yield session
    await stop_session(session)


def titles(s: Session) -> dict[str, list[str]]:
    """The sidebar's rows: title → the runs that found it."""
    return {row["title"]: row.get("runs", []) for row in s.rows()}


def messages(s: Session) -> list[str]:
    return [d.message for d in s.client.diagnostics.get(s.uri(APP), []) if d.source == "redline"]


async def finish(s: Session, task_id: str) -> dict[str, Any]:
    end = await s.finished(task_id, timeout=60)
    assert end["state"] == "finished", end
    return end


async def test_a_debate_keeps_the_reviews_findings_and_each_kind_can_be_shown_alone(
    s: Session,
) -> None:
    s.open(APP)
    await finish(s, await s.review(scope="uncommitted"))
    await s.until(lambda: any("unused" in m.lower() for m in messages(s)), 10, "the review")
    review_titles = set(titles(s))
    review_messages = set(messages(s))
    assert review_titles and all(runs == ["review"] for runs in titles(s).values()), titles(s)

    debate = plain(await s.command("redline.debate", {"scope": "uncommitted"}))["taskId"]
    await finish(s, debate)
    await s.until(lambda: ACTION_ITEM in titles(s), 10, "the action item in the sidebar")
    # The review's findings are still there, in the sidebar and as diagnostics.
    assert review_titles <= set(titles(s)), titles(s)
    assert titles(s)[ACTION_ITEM] == ["debate"]
    assert review_messages <= set(messages(s)), messages(s)
    assert any(ACTION_ITEM in m for m in messages(s))
    last = s.findings[-1]
    assert [r["kind"] for r in last["runs"]] == ["review", "debate"]
    assert last["shownRuns"] is None

    # Only the debate's: the review's diagnostics and rows go, and come back with "all".
    assert plain(await s.command("redline.showRuns", {"runs": ["debate"]})) == {
        "shownRuns": ["debate"]
    }
    await s.until(lambda: set(titles(s)) == {ACTION_ITEM}, 10, "only the debate's rows")
    await s.until(lambda: all(ACTION_ITEM in m for m in messages(s)), 10, "only its diagnostics")
    assert s.lines_of(APP) == [EVAL_LINE]
    assert s.findings[-1]["shownRuns"] == ["debate"]
    await s.command("redline.showRuns", {"runs": ["review"]})
    await s.until(lambda: set(titles(s)) == review_titles, 10, "only the review's rows")
    assert not any(ACTION_ITEM in m for m in messages(s))
    await s.command("redline.showRuns", {"runs": "all"})
    await s.until(lambda: set(titles(s)) == review_titles | {ACTION_ITEM}, 10, "all rows again")

    # A new review replaces the review's findings only: the debate's action item stays.
    await finish(s, await s.review(scope="uncommitted"))
    await s.until(lambda: s.listed_task is not None and s.listed_task != debate, 10, "new list")
    assert set(titles(s)) == review_titles | {ACTION_ITEM}, titles(s)
    assert any(ACTION_ITEM in m for m in messages(s))

    # Clear Findings clears every run.
    await s.command("redline.clear", {})
    await s.until(lambda: not titles(s) and not messages(s), 10, "nothing left")
    assert s.findings[-1]["runs"] == []


async def test_show_runs_refuses_what_is_not_a_run_kind(s: Session) -> None:
    for bad in ({"runs": ["reviews"]}, {"runs": []}, {"runs": 3}):
        with pytest.raises(JsonRpcException) as err:
            await s.command("redline.showRuns", bad)
        assert "run" in str(err.value)
