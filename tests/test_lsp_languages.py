"""Issue 26 through the language server: an offline review of a change with a TypeScript, a Go,
a shell, a Dockerfile and a GitHub-workflow file (the demo's feature/export, scripts/demo.py)
publishes each file's finding on its planted line, and the sidebar's row for that diagnostic
names the analyzer that found it. pytest-lsp drives `python -m redline.lsp` over stdio with the
VS Code and Neovim client profiles; no model is configured."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from lsp_support import Session, server_env, start_session, stop_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")

# The demo's files of the languages only the new analyzers read (not ruff's Python).
NATIVE = {
    key: (path, line, demo.EXPECTED_ANALYZER[key])
    for key, (path, line) in demo.EXPECTED.items()
    if not path.endswith(".py")
}


@pytest.fixture(params=["vscode", "neovim"])
async def session(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Session]:
    repo = demo.build_demo_repo(tmp_path / "demo")
    s = await start_session(repo, str(request.param), server_env(tmp_path / "cache"))
    yield s
    await stop_session(s)


def test_the_demo_has_one_file_a_language() -> None:
    suffixes = {Path(path).suffix or Path(path).name for path, _line, _tool in NATIVE.values()}
    assert suffixes == {".ts", ".go", ".sh", "Dockerfile", ".yml"}
    assert {tool for _path, _line, tool in NATIVE.values()} == {
        "oxlint",
        "ast-grep",
        "shellcheck",
        "hadolint",
        "zizmor",
    }


async def test_each_language_gets_its_analyzers_diagnostic_on_the_planted_line(
    session: Session,
) -> None:
    task = await session.review(scope="branch", base="main")
    end = await session.finished(task, timeout=60)
    assert end["state"] == "finished", end
    assert end["tokens"] == 0  # offline: no model ran

    # The coverage names each analyzer as having run on its file and found something.
    runs = {run["name"]: run for run in end["coverage"]["analyzers"]}
    for key, (_path, _line, tool) in NATIVE.items():
        assert tool in runs, (key, sorted(runs))
        assert runs[tool]["status"] == "ok", runs[tool]
        assert runs[tool]["findings"] >= 1 and runs[tool]["files"] >= 1, runs[tool]
        assert runs[tool]["version"], runs[tool]

    # The sidebar's rows of this review, by finding id: what the diagnostics point at.
    sidebar = await session.until(
        lambda: [f for f in session.findings if f["files"] and f.get("taskId") == task],
        what="the review's redline/findings",
    )
    rows: dict[str, dict[str, Any]] = {
        row["id"]: dict(row, path=entry["path"])
        for entry in sidebar[-1]["files"]
        for row in entry["findings"]
    }

    for key, (path, line, tool) in NATIVE.items():
        diags = await session.until(
            lambda path=path: session.client.diagnostics.get(session.uri(path)),
            what=f"diagnostics of {path}",
        )
        # One diagnostic in the file, on the planted line (LSP lines are 0-based).
        assert [d.range.start.line for d in diags] == [line - 1], (key, diags)
        diag = diags[0]
        assert diag.source == "redline", diag
        assert diag.severity in (
            types.DiagnosticSeverity.Error,
            types.DiagnosticSeverity.Warning,
            types.DiagnosticSeverity.Information,
        )
        text = (session.root / path).read_text(encoding="utf-8").splitlines()[line - 1]
        assert diag.range.end.character > diag.range.start.character, (key, diag.range)
        assert diag.range.end.character <= len(text), (key, diag.range, text)
        assert isinstance(diag.data, dict), diag
        row = rows[str(diag.data["id"])]
        # The analyzer that found it, by name and rule, and the same place as the diagnostic.
        assert [s.split(":")[0] for s in row["sources"]] == [tool], (key, row["sources"])
        assert row["rule_id"] and row["sources"] == [f"{tool}:{row['rule_id']}"], row
        assert (row["path"], row["line"]) == (path, line), row
        assert diag.message.startswith(row["title"]), (diag.message, row["title"])
