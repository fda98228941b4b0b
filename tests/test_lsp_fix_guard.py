"""The language server's side of issue 24's fix items, through pytest-lsp and the real server:

- a fix that keeps a worse defect is no code action (UP031's `.format(name)` on the line of a
  SQL injection): the finding's diagnostic stays, its only actions are the dismissals;
- a diagnostic covers the finding's lines, not its fix's: ruff's mutable-default fix spans the
  docstring below the `def` (it inserts after it), the squiggle must not.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types

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
