"""The language server's small modules on their own: settings, review requests, and findings →
diagnostics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsprotocol import types

from redline.errors import UsageError
from redline.lsp import publish
from redline.lsp.reviews import EditorRequest, ask_command, review_command
from redline.lsp.settings import LspSettings, merge_settings
from redline.lsp.tracking import FindingTracker
from redline.model import Category, Finding, Severity
from redline.requests import AskRequest, ReviewRequest, ScopeKind, ScopeRequest


def finding(**kw: object) -> Finding:
    data: dict[str, object] = {
        "id": "RL-0123456789ab",
        "file": "app.py",
        "line": 2,
        "end_line": 2,
        "severity": Severity.HIGH,
        "category": Category.SECURITY,
        "title": "Shell injection",
        "comment": "First paragraph\nwraps.\n\nSecond paragraph.",
        "existing_code": '    note = "🚀"; run(cmd, shell=True)',
    }
    data.update(kw)
    return Finding.model_validate(data)


def test_settings_merge_spellings_and_refuse_where_code_goes() -> None:
    merged = merge_settings(
        LspSettings(),
        {
            "redline": {
                "minSeverity": "medium",
                "base-branch": "develop",
                "autoReviewOnSave": "true",
                "staleDisplay": "may be stale",
                "concurrency": 3,
                "models": {"model": "openai/x"},
                "apiKey": "sk-nope",
            }
        },
    )
    assert merged.min_severity is Severity.MEDIUM
    assert merged.base_branch == "develop"
    assert merged.auto_review_on_save is True
    assert merged.stale_display == "mark"
    assert merged.engine_flags() == {"llm.max_concurrency": 3}
    assert len(merged.warnings) == 2 and all("ignored" in w for w in merged.warnings)

    bad = merge_settings(LspSettings(), {"minSeverity": "urgent", "concurrency": 1000})
    assert bad.min_severity is Severity.INFO and bad.concurrency is None
    assert len(bad.warnings) == 2
    assert merge_settings(LspSettings(), None) == LspSettings()


def test_editor_commands_become_typed_requests() -> None:
    assert review_command(None) == EditorRequest(ReviewRequest(ScopeRequest()))
    req = review_command({"scope": "branch", "base": " main ", "folder": "file:///w"})
    assert req.request == ReviewRequest(ScopeRequest(ScopeKind.BRANCH, "main"))
    assert req.folder == "file:///w" and req.describe() == "branch main"
    # No base: the engine takes the baseBranch setting, else the repository's default.
    assert review_command("branch").request == ReviewRequest(ScopeRequest(ScopeKind.BRANCH))
    assert review_command({"scope": "Commit", "ref": "HEAD~2"}).request == ReviewRequest(
        ScopeRequest(ScopeKind.COMMIT, "HEAD~2")
    )
    # ask is its own request, whether through redline.ask or the older {scope: "ask"}.
    asked = ask_command({"request": "review PR 12", "uri": "file:///w/a.py"})
    assert asked == EditorRequest(AskRequest("review PR 12"), "file:///w/a.py")
    assert review_command({"scope": "ask", "request": "review PR 12"}).request == asked.request
    assert asked.request.kind == "ask" and asked.request.describe() == "ask review PR 12"


def test_invalid_commands_say_what_is_wrong() -> None:
    for bad, message in (
        ({"scope": "everything"}, "unknown scope 'everything'"),
        ({"scope": "commit"}, "the commit scope needs a revision"),
        ({"scope": "range", "range": "abc"}, "invalid range 'abc'"),
        ({"scope": "pr"}, "the pr scope needs a pull request"),
        ({"scope": "staged", "base": "main"}, ""),  # a key another scope uses: ignored
        ({"scope": "ask"}, "ask needs a request"),
        (["not", "an", "object"], "expects one object argument"),
    ):
        if not message:
            assert review_command(bad).request == ReviewRequest(ScopeRequest(ScopeKind.STAGED))
            continue
        with pytest.raises(UsageError, match=re.escape(message)):
            review_command(bad)
    with pytest.raises(UsageError, match="ask needs a request"):
        ask_command({"request": "   "})


def test_scope_requests_are_checked_wherever_they_come_from() -> None:
    assert ScopeRequest("branch", "main").kind is ScopeKind.BRANCH  # JSON spells kinds as text
    with pytest.raises(UsageError, match="unknown scope 'everything'"):
        ScopeRequest("everything")
    with pytest.raises(UsageError, match="takes no argument"):
        ScopeRequest(ScopeKind.UNCOMMITTED, "HEAD").check()
    assert ScopeRequest(ScopeKind.RANGE, "a...b").check().describe() == "range a...b"
    # A commit picked from a list arrives as its full id; labels show the short one.
    oid = "d4fb961e8816" + "0" * 28
    assert ScopeRequest(ScopeKind.COMMIT, oid).check().describe() == "commit d4fb961"


def test_paths_never_leave_the_repository(tmp_path: Path) -> None:
    assert publish.path_uri(tmp_path, "app/x.py") is not None
    for bad in ("../outside.py", "/etc/passwd", "a/../../b.py", ""):
        assert publish.path_uri(tmp_path, bad) is None


@pytest.mark.parametrize(("encoding", "codec"), [("utf-16", "utf-16-le"), ("utf-8", "utf-8")])
def test_diagnostic_range_in_client_units(encoding: str, codec: str) -> None:
    line = '    note = "🚀"; run(cmd, shell=True)'
    text = f"def f(cmd):\n{line}\n"
    end = len(line.encode(codec)) // (2 if encoding == "utf-16" else 1)
    assert end == len(line) + (1 if encoding == "utf-16" else 3)
    tracker = FindingTracker()
    tracker.set_findings("file:///r/app.py", text, [finding()])
    doc = tracker.document("file:///r/app.py")
    assert doc is not None
    (tracked,) = tracker.visible("file:///r/app.py")
    rng = publish.client_range(tracked, doc, publish.encoding_of(encoding))
    assert (rng.start.line, rng.start.character) == (1, 4)
    assert (rng.end.line, rng.end.character) == (1, end)


def test_diagnostic_fields_and_related_files(tmp_path: Path) -> None:
    f = finding(comment="The caller in lib/run.py:12 passes user input.\n\nMore detail.")
    rng = types.Range(start=types.Position(line=1, character=4), end=types.Position(1, 9))
    related = publish.related_information(f, tmp_path, {"app.py", "lib/run.py"})
    diag = publish.to_diagnostic(f, rng, related=related)
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.source == "redline" and diag.code == "Security"
    assert diag.data == {"id": "RL-0123456789ab"}
    assert diag.message == "Shell injection\nThe caller in lib/run.py:12 passes user input."
    assert diag.related_information is not None
    (info,) = diag.related_information
    assert info.location.uri.endswith("/lib/run.py") and info.location.range.start.line == 11
    # A path that is not part of the change is not linked.
    assert publish.related_information(f, tmp_path, {"app.py"}) == []
    stale = publish.to_diagnostic(f, rng, stale=True)
    assert stale.message.startswith(publish.STALE_PREFIX)
    assert publish.finding_id_of(diag) == "RL-0123456789ab"
