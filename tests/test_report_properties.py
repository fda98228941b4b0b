"""Every report format over generated reviews (tests/review_strategies.py): Markdown, JSON,
json-simple and SARIF must not raise and must show every finding, each as its format shows one.

- Markdown: a `###` heading per finding (read by a CommonMark parser, as a viewer would) naming
  its file, under the `##` section of its severity.
- JSON: the findings read back exactly (the control-character escape is JSON's own).
- json-simple: one entry per finding, in order, its file, line, severity and title.
- SARIF: valid against the SARIF 2.1.0 schema; one result per finding, its fingerprint, file,
  title and level, and a `fixes` entry exactly for an applicable fix.

The terminal report has its own file (tests/test_terminal_property.py); the posted comments
and the language server theirs (test_publish_properties.py, test_lsp_properties.py).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
from hypothesis import HealthCheck, given, settings
from markdown_it import MarkdownIt

from redline.model import Review, Severity
from redline.report import escape_controls, render
from review_strategies import many_findings, marker, reviews

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
_LEVELS = {"Critical": "error", "High": "error", "Medium": "warning", "Low": "note", "Info": "note"}
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def _validator() -> Any:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def headings(markdown: str) -> list[tuple[int, str]]:
    """(level, visible text) of each heading, as a CommonMark parser reads the document."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    out: list[tuple[int, str]] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[i + 1]
            text = "".join(child.content for child in inline.children or [] if child.content)
            out.append((int(token.tag[1]), text))
    return out


_MARKER = re.compile(r"RLT\d{4}X")


def check_markdown(review: Review) -> None:
    text = render(review, "markdown")
    found = headings(text)
    # Each finding's heading, by the marker that starts its title; and its severity's section.
    at: dict[str, list[int]] = {}
    section: dict[str, str] = {}
    current = ""
    for n, (level, heading) in enumerate(found):
        if level == 2:
            current = heading
        elif level == 3:
            for word in set(_MARKER.findall(heading)):
                at.setdefault(word, []).append(n)
                section[word] = current
    for i, finding in enumerate(review.findings):
        holders = at.get(marker(i), [])
        assert len(holders) == 1, (marker(i), found)
        assert squeezed(escape_controls(finding.file)) in squeezed(found[holders[0]][1])
        assert finding.severity.value in section[marker(i)]


def check_json(review: Review) -> None:
    data = json.loads(render(review, "json"))
    assert Review.model_validate(data).findings == review.findings


def check_json_simple(review: Review) -> None:
    data = json.loads(render(review, "json-simple"))
    assert len(data) == len(review.findings)
    for i, (item, finding) in enumerate(zip(data, review.findings, strict=True)):
        assert item["suggestionContent"].startswith(marker(i))
        assert item["relevantFile"] == finding.file
        assert item["suggestionLine"] == finding.line
        assert item["severity"] == finding.severity.value
        expected = finding.improved_code if finding.fix_applicable else None
        assert item["improvedCode"] == expected


def check_sarif(review: Review, sample: int = 1) -> None:
    """The log valid against the schema (with `sample`, every sample-th result of it: each
    result has the same shape, and validating thousands takes seconds) and every result right."""
    log = json.loads(render(review, "sarif"))
    results = log["runs"][0]["results"]
    if sample > 1:
        log["runs"][0]["results"] = results[::sample]
    _validator().validate(log)
    assert len(results) == len(review.findings)
    for i, (result, finding) in enumerate(zip(results, review.findings, strict=True)):
        assert result["message"]["text"].startswith(marker(i))
        assert result["partialFingerprints"]["redline/v1"] == finding.id
        place = result["locations"][0]["physicalLocation"]
        assert unquote(place["artifactLocation"]["uri"]) == finding.file
        assert place["region"]["startLine"] == (finding.line or 1)
        assert result["level"] == _LEVELS[finding.severity.value]
        assert ("fixes" in result) == finding.fix_applicable


@SETTINGS
@given(review=reviews())
def test_every_format_shows_every_finding(review: Review) -> None:
    check_markdown(review)
    check_json(review)
    check_json_simple(review)
    check_sarif(review)


def test_an_empty_review_in_every_format() -> None:
    review = Review(task_id="t", scope="branch", scope_label="b", repo="/r")
    for fmt in ("markdown", "json", "json-simple", "sarif"):
        assert render(review, fmt)
    check_sarif(review)
    assert json.loads(render(review, "json-simple")) == []


def test_thousands_of_findings_in_every_format() -> None:
    review = many_findings(2000)
    check_markdown(review)
    check_json(review)
    check_json_simple(review)
    check_sarif(review, sample=50)


def test_every_severity_has_a_level() -> None:
    review = many_findings(len(Severity))
    assert {f.severity for f in review.findings} == set(Severity)
    check_sarif(review)
