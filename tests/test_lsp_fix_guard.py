"""The language server's side of issue 24's fix items, through pytest-lsp and the real server:

- a fix that keeps a worse defect is no code action (UP031's `.format(name)` on the line of a
  SQL injection): the finding's diagnostic stays, its only actions are the dismissals;
- a diagnostic covers the finding's lines, not its fix's: ruff's mutable-default fix spans the
  docstring below the `def` (it inserts after it), the squiggle must not; generated ranges
  check that the underlined part never leaves the tracked lines.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from redline.lsp.document_findings import DocumentFindings, TrackedFinding
from redline.lsp.publish import focus
from redline.model import Category, Finding, Severity
from test_fix_guard import FORMAT_FIX, MUTABLE_LINE, SQL_LINE, sql_repo

from lsp_support import Session, server_env, start_session, stop_session

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    repo = sql_repo(tmp_path / "repo")
    s = await start_session(repo.root, "vscode", server_env(tmp_path / "cache"))
    end = await s.finished(await s.review(scope="branch", base="main"))
    assert end["state"] == "finished", end
    yield s
    await stop_session(s)


def diagnostics(s: Session) -> list[types.Diagnostic]:
    return sorted(s.client.diagnostics.get(s.uri("app.py"), []), key=lambda d: d.range.start.line)


async def actions_at(s: Session, line: int) -> list[types.CodeAction]:
    pos = types.Position(line=line, character=4)
    result = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri("app.py")),
            range=types.Range(start=pos, end=pos),
            context=types.CodeActionContext(diagnostics=diagnostics(s)),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


def edits_of(action: types.CodeAction) -> str:
    return repr(action.edit)


async def test_no_code_action_applies_a_fix_that_keeps_the_injection(session: Session) -> None:
    await session.until(lambda: diagnostics(session), what="diagnostics")
    on_sql = [d for d in diagnostics(session) if d.range.start.line == SQL_LINE - 1]
    messages = " | ".join(d.message for d in on_sql)
    assert "SQL injection" in messages and "percent format" in messages
    assert "No fix offered" in messages
    actions = await actions_at(session, SQL_LINE - 1)
    assert actions, "the dismissals are still offered"
    assert not [a for a in actions if FORMAT_FIX in edits_of(a)]
    assert not [a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.edit]


async def test_the_mutable_default_squiggle_stays_on_its_line(session: Session) -> None:
    await session.until(lambda: diagnostics(session), what="diagnostics")
    [mutable] = [d for d in diagnostics(session) if "Mutable default" in d.message]
    assert (mutable.range.start.line, mutable.range.end.line) == (MUTABLE_LINE - 1,) * 2
    # The fix still replaces what it was computed against: the def and its docstring.
    [fix] = [a for a in await actions_at(session, MUTABLE_LINE - 1) if "seen=None" in edits_of(a)]
    assert "Names seen so far" in edits_of(fix)


@given(
    line=st.integers(1, 30),
    extra=st.integers(0, 4),
    focus_at=st.integers(-3, 8),
    focus_len=st.integers(0, 3),
    moved=st.integers(0, 10),
    shrunk=st.integers(0, 4),
)
def test_the_focus_never_leaves_the_tracked_lines(
    line: int, extra: int, focus_at: int, focus_len: int, moved: int, shrunk: int
) -> None:
    # Whatever edits did to the tracked range (moved, lines removed inside), the underlined
    # part stays inside it, and a finding without a focus is underlined whole.
    doc = DocumentFindings("file:///a.py", "".join(f"line {i} text\n" for i in range(60)))
    finding = Finding(
        id="RL-000000000001", file="a.py", line=line, end_line=line + extra,
        severity=Severity.MEDIUM, category=Category.QUALITY, title="t", comment="c",
        focus_line=line + focus_at, focus_end_line=line + focus_at + focus_len,
    )  # fmt: skip
    start = line - 1 + moved
    tracked = TrackedFinding(finding, start, 0, start + max(0, extra - shrunk), 11)
    shown = focus(tracked, doc)
    assert tracked.start_line <= shown.start_line <= shown.end_line <= tracked.end_line
    if shown.start_line == tracked.start_line:
        assert shown.start_char == tracked.start_char
    whole = finding.model_copy(update={"focus_line": None, "focus_end_line": None})
    plain = TrackedFinding(whole, start, 0, tracked.end_line, 11)
    assert focus(plain, doc) is plain
