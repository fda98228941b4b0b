"""Hover Markdown: the whole finding, and nothing a renderer could run or fetch."""

from __future__ import annotations

from pathlib import Path

from redline.lsp.hover import hover_markdown
from redline.model import Category, Finding, Severity, Verification, finding_id
from redline.report.markup import fenced


def make(**kw: object) -> Finding:
    base: dict[str, object] = {
        "id": finding_id("app/x.py", "eval(s)", "Security"),
        "file": "app/x.py",
        "line": 3,
        "end_line": 3,
        "severity": Severity.HIGH,
        "category": Category.SECURITY,
        "title": "eval of user input",
        "comment": "First paragraph.\n\nSecond paragraph with `eval(s)` and more detail.",
        "existing_code": "eval(s)",
        "improved_code": "ast.literal_eval(s)",
        "confidence": 0.87,
        "sources": ["ruff:S307", "model:gpt-4o-mini"],
        "verification": Verification(verdict="CORRECT", evidence="s comes from the request"),
    }
    base.update(kw)
    return Finding.model_validate(base)


def test_hover_shows_the_whole_finding() -> None:
    finding = make()
    text = hover_markdown(finding, stale=False)
    assert text.startswith("**Redline: eval of user input**")
    assert "High · Security · confidence 87%" in text
    assert "Found by: ruff S307, model gpt-4o-mini" in text
    assert "Verification: verified correct — s comes from the request" in text
    assert "First paragraph." in text and "Second paragraph with `eval(s)`" in text
    assert "```python\nast.literal_eval(s)\n```" in text
    assert f"redline: ignore[{finding.id}]" in text
    assert "stale" not in text.lower()


def test_stale_note() -> None:
    assert "May be stale" in hover_markdown(make(), stale=True)


def test_deletion_and_no_fix() -> None:
    assert "delete these lines" in hover_markdown(make(improved_code=""))
    text = hover_markdown(make(improved_code=None, verification=None, sources=[]))
    assert "Suggested" not in text and "Verification" not in text and "Found by" not in text


def test_hostile_model_text_is_sanitized() -> None:
    finding = make(
        title='Bad <img src="https://evil.example/p.png"> title',
        comment=(
            "Look ![pixel](https://evil.example/t.png) here.\n"
            "<script>alert(1)</script>\n"
            "[run me](command:workbench.action.terminal.sendSequence?%7B%7D) and "
            "[docs](https://docs.python.org/3/library/ast.html)\n"
            '<a href="command:x">click</a> <details><summary>hidden</summary>x</details>'
        ),
        verification=Verification(verdict="CORRECT", evidence="<iframe src='x'></iframe>ok"),
    )
    text = hover_markdown(finding)
    lowered = text.lower()
    for bad in ("<img", "<script", "command:", "<a ", "<iframe", "<details", "evil.example"):
        assert bad not in lowered, bad
    assert "run me" in text and "pixel" in text
    assert "[docs](https://docs.python.org/3/library/ast.html)" in text


def test_code_cannot_break_out_of_its_fence() -> None:
    code = 'doc = """\n```\n<img src=x>\n````\n"""'
    text = hover_markdown(make(improved_code=code))
    assert "`````python\n" + code + "\n`````" in text  # longer than the 4-backtick run
    assert fenced("a ` b") == "```\na ` b\n```"


def test_unclosed_fence_in_the_comment_is_closed_before_the_suggestion() -> None:
    text = hover_markdown(make(comment="See:\n```python\nx = 1\n"))
    comment_end = text.index("x = 1\n```\n")
    assert comment_end < text.index("Suggested code:")


def test_beside_the_diagnostic_the_hover_does_not_repeat_it() -> None:
    # VS Code shows the diagnostic's message (the title and the comment's first paragraph) at
    # the top of the same hover: the hover then adds only what the message does not say.
    finding = make()
    text = hover_markdown(finding, stale=False, beside_diagnostic=True)
    assert "eval of user input" not in text
    assert "First paragraph." not in text
    assert text.startswith("High · Security · confidence 87%")
    assert "Second paragraph with `eval(s)`" in text
    assert "```python\nast.literal_eval(s)\n```" in text
    # A first paragraph the message had to cut is shown whole.
    long = "word " * 200
    cut = hover_markdown(make(comment=long.strip()), beside_diagnostic=True)
    assert long.strip() in cut


def test_the_vscode_extension_asks_for_the_hover_beside_the_diagnostic() -> None:
    from redline.lsp.settings import LspSettings, merge_settings

    assert LspSettings().hover_beside_diagnostic is False
    merged = merge_settings(LspSettings(), {"hoverBesideDiagnostic": True})
    assert merged.hover_beside_diagnostic is True and not merged.warnings
    client = (
        Path(__file__).resolve().parents[1] / "editor-client" / "src" / "client.ts"
    ).read_text(encoding="utf-8")
    assert "initializationOptions: { hoverBesideDiagnostic: true," in client
