"""Renderers: what a reader sees in Markdown, the JSON shapes, and SARIF that GitHub accepts."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline.model import (
    AnalyzerRun,
    AnchorState,
    Category,
    Coverage,
    DiffStats,
    Finding,
    Review,
    Severity,
    SkippedFile,
    finding_id,
)
from redline.report import render, render_markdown
from redline.report.sanitize import sanitize_markdown

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def make(
    severity: Severity,
    title: str,
    *,
    file: str = "src/app.py",
    line: int | None = 10,
    category: Category = Category.FUNCTIONALITY,
    existing: str = "x = 1",
    improved: str | None = None,
    rule: str | None = None,
    sources: list[str] | None = None,
    comment: str = "Cause, impact and fix.",
) -> Finding:
    return Finding(
        id=finding_id(file, existing, category, rule or title),
        file=file,
        line=line,
        end_line=line,
        severity=severity,
        category=category,
        title=title,
        comment=comment,
        existing_code=existing,
        improved_code=improved,
        confidence=0.8,
        sources=sources or ["model:gpt-4o-mini"],
        rule_id=rule,
        anchor=AnchorState.EXACT if line is not None else AnchorState.UNANCHORED,
    )


FENCED_FIX = 'doc = """\n```python\nprint(1)\n```\n"""'


def full_review() -> Review:
    findings = [
        make(Severity.LOW, "Unused import `os`", line=1, existing="import os", improved="",
             rule="F401", category=Category.QUALITY, sources=["ruff:F401"],
             comment="`os` imported but unused.\n\nRule F401 (ruff): https://docs.astral.sh/ruff/rules/unused-import"),
        make(Severity.CRITICAL, "Shell injection", line=7, category=Category.SECURITY,
             rule="S602", sources=["ruff:S602", "bandit:B602"], improved=FENCED_FIX),
        make(Severity.HIGH, 'Bad <img src="http://x/p" onerror=alert(1)> [run](command:evil.run)',
             line=12, comment="Look <script>alert(1)</script> here ![pix](http://t/p.png)."),
        make(Severity.MEDIUM, "Unanchored claim", file="src/my file.py", line=None),
        make(Severity.INFO, "Naming nit", file="web/ui.ts", line=3, category=Category.QUALITY,
             improved="const total = 1;"),
    ]  # fmt: skip
    coverage = Coverage(
        reviewed_files=["src/app.py", "src/my file.py", "web/ui.ts"],
        skipped=[SkippedFile(path="uv.lock", reason="lockfile")],
        analyzers=[
            AnalyzerRun(name="ruff", status="ok", files=2, findings=2, version="0.17.6"),
            AnalyzerRun(name="bandit", status="failed", files=2, message="timed out after 120 s"),
            AnalyzerRun(name="semgrep", status="missing", message="semgrep not found"),
        ],
        models=["gpt-4o-mini"],
        tokens=12345,
        cost_usd=None,
        notes=["2 findings below Low hidden"],
    )
    return Review(
        task_id="t1",
        scope="branch",
        scope_label="feature vs main",
        repo="/repo",
        stats=DiffStats(files=3, added=40, removed=5),
        findings=findings,
        coverage=coverage,
    )


def offline_empty_review() -> Review:
    coverage = Coverage(
        reviewed_files=["a.py"],
        analyzers=[AnalyzerRun(name="ruff", status="ok", files=1, version="0.17.6")],
    )
    return Review(
        task_id="t2", scope="uncommitted", scope_label="uncommitted changes", repo="/r",
        stats=DiffStats(files=1, added=2, removed=0), coverage=coverage,
    )  # fmt: skip


# --- Markdown --------------------------------------------------------------------------------


def test_markdown_groups_by_severity_most_serious_first() -> None:
    text = render(full_review(), "markdown")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Critical (1)",
        "## High (1)",
        "## Medium (1)",
        "## Low (1)",
        "## Info (1)",
        "## Coverage",
    ]
    assert text.startswith("# Redline review: feature vs main\n")
    assert "**3 files changed, +40 −5 lines.** 5 findings: 1 Critical, 1 High" in text


def test_markdown_finding_lines() -> None:
    text = render_markdown(full_review())
    assert "### `src/app.py:7` — Shell injection" in text
    assert "### `src/my file.py` (location not found) — Unanchored claim" in text
    assert "*Security · confidence 0.80 · from ruff:S602, bandit:B602 · rule S602*" in text
    assert "```typescript\nconst total = 1;\n```" in text
    # Deleting lines says so and shows what goes.
    assert "Suggested fix: delete these lines.\n\n```python\nimport os\n```" in text


def test_markdown_code_fence_outlasts_backticks_in_code() -> None:
    text = render_markdown(full_review())
    assert f"````python\n{FENCED_FIX}\n````" in text


def test_markdown_strips_untrusted_markup() -> None:
    text = render_markdown(full_review())
    for bad in ("<img", "<script", "command:", "onerror", "![pix]"):
        assert bad not in text
    assert "### `src/app.py:12` — Bad run" in text


def test_markdown_coverage() -> None:
    text = render_markdown(full_review())
    assert "- Reviewed: 3 files: `src/app.py`, `src/my file.py`, `web/ui.ts`" in text
    assert "  - `uv.lock`: lockfile" in text
    assert "  - ruff 0.17.6: ok, 2 files, 2 findings" in text
    assert "  - bandit: failed (timed out after 120 s)" in text
    assert "  - semgrep: missing (semgrep not found)" in text
    assert "- Models: `gpt-4o-mini`" in text
    assert "- Tokens: 12,345 · cost: unpriced" in text
    assert "- Note: 2 findings below Low hidden" in text
    assert "Offline review" not in text


def test_markdown_without_findings_or_model_says_so() -> None:
    text = render_markdown(offline_empty_review())
    assert "No findings." in text
    assert "> Offline review: no model ran. These results come from static analyzers only." in text
    assert "- Models: none (offline review by static analyzers only)" in text
    assert "  - ruff 0.17.6: ok, 1 file, 0 findings" in text


def test_markdown_is_fast_for_thousands_of_findings() -> None:
    review = full_review()
    base = review.findings
    review.findings = [base[i % len(base)].model_copy(update={"line": i + 1}) for i in range(5000)]
    start = time.perf_counter()
    text = render_markdown(review)
    assert time.perf_counter() - start < 2.0
    assert text.count("### ") == 5000


# --- JSON ------------------------------------------------------------------------------------


def test_json_is_the_whole_review() -> None:
    review = full_review()
    data = json.loads(render(review, "json"))
    assert data == review.model_dump(mode="json")
    assert Review.model_validate(data) == review


def test_json_simple_shape() -> None:
    data = json.loads(render(full_review(), "json-simple"))
    assert len(data) == 5
    keys = {
        "relevantFile",
        "existingCode",
        "suggestionContent",
        "improvedCode",
        "label",
        "suggestionLine",
        "severity",
    }
    assert all(set(item) == keys for item in data)
    critical = next(d for d in data if d["severity"] == "Critical")
    assert critical["relevantFile"] == "src/app.py"
    assert critical["label"] == "security"
    assert critical["suggestionLine"] == 7
    assert critical["suggestionContent"].startswith("Shell injection\n\n")
    unanchored = next(d for d in data if d["relevantFile"] == "src/my file.py")
    assert unanchored["suggestionLine"] is None and unanchored["improvedCode"] is None


# --- SARIF -----------------------------------------------------------------------------------


def sarif(review: Review) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(render(review, "sarif"))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return log


def test_sarif_validates_against_the_official_schema() -> None:
    sarif(full_review())
    sarif(offline_empty_review())


def test_sarif_schema_rejects_broken_logs() -> None:
    # The checked-in schema must actually bite.
    log = sarif(full_review())
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SCHEMA).validate(log)


def test_sarif_github_specifics() -> None:
    review = full_review()
    log = sarif(review)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "Redline" and driver["version"]
    rules, results = driver["rules"], run["results"]
    assert len({r["id"] for r in rules}) == len(rules)
    for result, finding in zip(results, review.findings, strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"] == {"redline/v1": finding.id}
        (loc,) = result["locations"]
        assert loc["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert loc["physicalLocation"]["region"]["startLine"] >= 1
        assert ("fixes" in result) == (
            finding.improved_code is not None and finding.line is not None
        )
    levels = {r["ruleId"]: r["level"] for r in results}
    assert levels["S602"] == "error"
    assert levels["F401"] == "note"
    assert levels["redline/functionality"] in {"error", "warning"}
    assert levels["redline/quality"] == "note"
    by_id = {r["id"]: r for r in rules}
    assert by_id["S602"]["properties"]["security-severity"] == "9.5"
    assert "security" in by_id["S602"]["properties"]["tags"]
    assert by_id["F401"]["helpUri"] == "https://docs.astral.sh/ruff/rules/unused-import"
    assert "security-severity" not in by_id["F401"]["properties"]


def test_sarif_locations_and_fixes() -> None:
    results = sarif(full_review())["runs"][0]["results"]
    unanchored = next(r for r in results if "Unanchored" in r["message"]["text"])
    location = unanchored["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "src/my%20file.py"
    assert location["region"] == {"startLine": 1, "endLine": 1}
    assert "Location not found" in unanchored["message"]["text"]
    assert unanchored["properties"]["anchor"] == "unanchored"
    delete = next(r for r in results if r["ruleId"] == "F401")
    (replacement,) = delete["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement["deletedRegion"] == {
        "startLine": 1,
        "startColumn": 1,
        "endLine": 2,
        "endColumn": 1,
    }
    assert replacement["insertedContent"] == {"text": ""}
    critical = next(r for r in results if r["ruleId"] == "S602")
    inserted = critical["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]
    assert inserted["text"] == FENCED_FIX + "\n"
    assert critical["properties"]["sources"] == ["ruff:S602", "bandit:B602"]
    assert critical["properties"]["confidence"] == 0.8


def test_sarif_reports_analyzer_trouble_and_skips() -> None:
    (invocation,) = sarif(full_review())["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = {n["message"]["text"]: n["level"] for n in invocation["toolExecutionNotifications"]}
    assert notes["Analyzer bandit: failed (timed out after 120 s)"] == "error"
    assert notes["Analyzer semgrep: missing (semgrep not found)"] == "warning"
    assert notes["Not reviewed: uv.lock (lockfile)"] == "note"
    (clean,) = sarif(offline_empty_review())["runs"][0]["invocations"]
    assert clean["executionSuccessful"] is True


def test_unknown_format_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown report format"):
        render(full_review(), "html")


# --- sanitizer -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('hi <img src=x onerror="alert(1)"> there', "hi  there"),
        ("![tracker](https://evil.example/p.png) ok", "tracker ok"),
        ("[run](command:workbench.action.terminal.new) now", "run now"),
        ("[run]( <COMMAND:x> 'title' )", "run"),
        ("see <command:evil>", "see command:evil"),
        ("[ref]: command:evil\n[ref] x", "\n[ref] x"),
        ("[docs](https://docs.example/x)", "[docs](https://docs.example/x)"),
        ("<https://ok.example>", "<https://ok.example>"),
        ("a <b>bold</b> <!-- hidden --> word", "a bold  word"),
        ("generic List<int> stays", "generic List\\<int> stays"),
        ("x <<img>img src=1> y", "x \\<img src=1> y"),
        ("an escaped \\<tag> stays escaped", "an escaped \\<tag> stays escaped"),
        ("a backslash \\\\<tag x> then", "a backslash \\\\\\<tag x> then"),
        ("a < b && c > d", "a < b && c > d"),
        ("keep `<b>` and `[x](command:y)` in code", "keep `<b>` and `[x](command:y)` in code"),
        ("```\n<script>1</script>\n```\nafter <i>x</i>", "```\n<script>1</script>\n```\nafter x"),
    ],
)  # fmt: skip
def test_sanitize_markdown(text: str, expected: str) -> None:
    assert sanitize_markdown(text) == expected


def test_escaped_tags_render_as_text_and_read_plainly() -> None:
    # No HTML entity in the Markdown itself (it is read raw in terminals and CI logs), and a
    # CommonMark renderer (markdown-it, as rich and VS Code use) shows the "<" as text.
    from markdown_it import MarkdownIt

    shown = sanitize_markdown("use Map<K, V> & a <foo onclick=x> here")
    assert "&" + "lt;" not in shown and "&amp;" not in shown
    html = MarkdownIt("commonmark").render(shown)
    assert "<foo" not in html and "&lt;foo onclick=x&gt;" in html
    assert "Map&lt;K, V&gt; &amp; a" in html
