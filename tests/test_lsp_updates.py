"""`redline/findings` sized to the change: a review sends the whole list, edits send only the
files whose findings moved, a burst of edits is coalesced, and the export says what the editor
shows after unsaved edits."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_support import Session, plain, server_env, start_session, stop_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")

REPORTS = "app/reports.py"
DEMO_LINES = [3, 20, 26, 30]  # 0-based lines of the demo's planted problems
BURST = 40


@pytest.fixture
async def vscode(tmp_path: Path) -> AsyncIterator[Session]:
    repo = demo.build_demo_repo(tmp_path / "demo")
    s = await start_session(repo, "vscode", server_env(tmp_path / "cache"))
    yield s
    await stop_session(s)


def listed_lines(s: Session) -> list[int]:
    return sorted(row["line"] - 1 for row in s.rows() if row["file"] == REPORTS)


async def test_edits_send_only_the_changed_file_and_bursts_are_coalesced(vscode: Session) -> None:
    s = vscode
    await s.finished(await s.review(scope="branch", base="main"))
    # The review's final list (its rows say which run found them), not its early findings.
    await s.until(
        lambda: (
            listed_lines(s) == DEMO_LINES and all(r.get("runs") == ["review"] for r in s.rows())
        ),
        what="the review's list",
    )
    whole = s.findings[-1]
    # The whole list: app/reports.py and the demo's files in other languages.
    files = sorted({path for path, _line in demo.EXPECTED.values()})
    assert whole["full"] is True and [f["path"] for f in whole["files"]] == files
    before = len(s.findings)

    s.open(REPORTS)
    top = types.Position(line=0, character=0)
    for version in range(2, BURST + 2):  # one line inserted per notification, as typed
        s.edit(REPORTS, version, types.Range(start=top, end=top), "# new line\n")
    moved = [line + BURST for line in DEMO_LINES]
    await s.until(lambda: s.lines_of(REPORTS) == moved, what="diagnostics moved")
    await s.until(lambda: listed_lines(s) == moved, what="the sidebar moved with them")

    updates = s.findings[before:]
    assert all(u["full"] is False for u in updates), [u["full"] for u in updates]
    assert all([f["uri"] for f in u["files"]] == [s.uri(REPORTS)] for u in updates), [
        [f["uri"] for f in u["files"]] for u in updates
    ]
    assert all(u["taskId"] == whole["taskId"] for u in updates)
    # Coalesced: far fewer updates than edits (one per loop turn / 50 ms at most).
    assert 1 <= len(updates) < BURST / 2, len(updates)

    # Rewriting the bare except withdraws its finding: the partial list drops the row.
    line = 26 + BURST
    start = types.Position(line=line, character=4)
    end = types.Position(line=line, character=len("    except:"))
    s.edit(REPORTS, BURST + 2, types.Range(start=start, end=end), "except OSError:")
    left = [3 + BURST, 20 + BURST, 30 + BURST]
    await s.until(lambda: listed_lines(s) == left, what="withdrawn from the sidebar")

    # The export is what the editor shows: the buffer's lines, not the withdrawn finding.
    exported = json.loads(plain(await s.command("redline.export", {"format": "json"}))["content"])
    assert sorted(f["line"] - 1 for f in exported["findings"] if f["file"] == REPORTS) == left
    assert {f["id"] for f in exported["findings"]} == {row["id"] for row in s.rows()}


async def test_clear_sends_the_whole_empty_list(vscode: Session) -> None:
    s = vscode
    await s.finished(await s.review(scope="branch", base="main"))
    await s.until(lambda: listed_lines(s) == DEMO_LINES, what="the review's list")
    assert plain(await s.command("redline.clear")) == {"cleared": True}
    await s.until(lambda: s.findings[-1]["full"] and not s.findings[-1]["files"], what="clear")
    assert s.rows() == []
