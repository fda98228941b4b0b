"""SARIF 2.1.0 for GitHub code scanning (and any SARIF viewer).

GitHub specifics, each on purpose:
- every result has a location: GitHub rejects a result without one, and shows a result only
  with `region.startLine`. An unanchored finding (its code was not found) is therefore placed
  at line 1 of its file and says so in its message and properties.
- `partialFingerprints["redline/v1"]` is the finding id (file + normalized code + category),
  so an alert survives code moving above it instead of being closed and reopened.
- with `--baseline`, each result's `baselineState` (see report/baseline.py).
- URIs are repo-relative, percent-encoded, with `uriBaseId` "%SRCROOT%".
- rules carry `security-severity` for security findings: GitHub's severity for security alerts.
- a `fixes` entry only for an applicable fix (`Finding.fix_applicable`): improved code that
  does not parse, or whose quoted code is not in the file, is in `properties.suggestedCode`.
"""

from __future__ import annotations

import re
from importlib import metadata
from typing import Any
from urllib.parse import quote

from redline.model import AnalyzerRun, AnchorState, Category, Finding, Review, Severity
from redline.report.baseline import FINGERPRINT_KEY, TOOL_NAME, Comparison, absent_sarif_result

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"

_LEVEL = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
# GitHub maps security-severity to its labels: >= 9.0 critical, >= 7.0 high, >= 4.0 medium.
_SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "1.0",
}
# Analyzer comments end with "Rule X (tool): <url>" (see analyzers/convert.py).
_HELP_URL = re.compile(r"\((?:[^()]+)\): (https?://\S+)\s*$")


def rule_id(finding: Finding) -> str:
    """The analyzer's rule, or for model findings a rule per category ("redline/security")."""
    return finding.rule_id or f"redline/{finding.category.value.lower()}"


def artifact_uri(path: str) -> str:
    return quote(path, safe="/")


def render_sarif(review: Review, baseline: Comparison | None = None) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict (see `report.render` for the text).

    With a baseline, every result has its `baselineState` (new or unchanged) and the
    baseline's findings this review no longer has follow as "absent" results."""
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    worst: dict[str, Severity] = {}
    results: list[dict[str, Any]] = []
    for finding in review.findings:
        rid = rule_id(finding)
        if rid not in index:
            index[rid] = len(rules)
            rules.append(_rule(rid, finding))
        if finding.category is Category.SECURITY and (
            rid not in worst or finding.severity.rank > worst[rid].rank
        ):
            worst[rid] = finding.severity
        result = _result(finding, rid, index[rid])
        if baseline is not None:
            result["baselineState"] = baseline.state(finding.id)
        results.append(result)
    for rid, severity in worst.items():
        rules[index[rid]]["properties"]["security-severity"] = _SECURITY_SEVERITY[severity]
    properties: dict[str, Any] = {
        "scope": review.scope,
        "scopeLabel": review.scope_label,
        "taskId": review.task_id,
        "models": list(review.coverage.models),
        "cachedModels": list(review.coverage.cached_models),
        "tokens": review.coverage.tokens,
        "costUsd": review.coverage.cost_usd,
    }
    if baseline is not None:
        results += [absent_sarif_result(a) for a in baseline.absent]
        properties["baseline"] = {
            "file": baseline.file,
            "new": len(baseline.new),
            "unchanged": len(baseline.unchanged),
            "absent": len(baseline.absent),
        }
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": _driver(rules),
                },
                "invocations": [_invocation(review)],
                "originalUriBaseIds": {},
                "results": results,
                "properties": properties,
            }
        ],
    }


def _rule(rid: str, finding: Finding) -> dict[str, Any]:
    # The category as a tag; for security findings that is the "security" tag GitHub looks for.
    tags = [finding.category.value.lower()]
    rule: dict[str, Any] = {
        "id": rid,
        "name": rid,
        "shortDescription": {"text": _one_line(finding.title) if finding.rule_id else
                             f"{finding.category.value} issue found by a model review"},
        "defaultConfiguration": {"level": _LEVEL[finding.severity]},
        "properties": {"tags": tags},
    }  # fmt: skip
    help_uri = _help_uri(finding)
    if help_uri:
        rule["helpUri"] = help_uri
    return rule


def _result(finding: Finding, rid: str, rule_index: int) -> dict[str, Any]:
    uri = artifact_uri(finding.file)
    artifact = {"uri": uri, "uriBaseId": SRCROOT}
    anchored = finding.line is not None
    start = finding.line if finding.line is not None else 1
    end = max(start, finding.end_line or start)
    text = f"{_one_line(finding.title)}\n\n{finding.comment}".strip()
    if not anchored:
        text += "\n\n(Location not found in the current file; shown at line 1.)"
    elif finding.anchor is AnchorState.APPROXIMATE:
        text += "\n\n(Approximate location: the quoted code is not in the file.)"
    result: dict[str, Any] = {
        "ruleId": rid,
        "ruleIndex": rule_index,
        "level": _LEVEL[finding.severity],
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact,
                    "region": {"startLine": start, "endLine": end},
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: finding.id},
        "properties": {
            "severity": finding.severity.value,
            "category": finding.category.value,
            "confidence": finding.confidence,
            "sources": list(finding.sources),
            "anchor": finding.anchor.value,
            "fix": finding.fix.value,
        },
    }
    if finding.improved_code is not None and not finding.fix_applicable:
        # Shown, never offered as a fix: SARIF viewers apply `fixes` entries as they are.
        result["properties"]["suggestedCode"] = finding.improved_code
    if finding.fix_applicable:
        result["fixes"] = [_fix(finding, artifact, start, end)]
    return result


def _fix(finding: Finding, artifact: dict[str, str], start: int, end: int) -> dict[str, Any]:
    # Whole lines: from the start of `start` to the start of the line after `end`, so the
    # replacement (or a deletion) also covers the line break.
    inserted = finding.improved_code + "\n" if finding.improved_code else ""
    return {
        "description": {"text": f"Suggested fix: {_one_line(finding.title)}"},
        "artifactChanges": [
            {
                "artifactLocation": artifact,
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": start,
                            "startColumn": 1,
                            "endLine": end + 1,
                            "endColumn": 1,
                        },
                        "insertedContent": {"text": inserted},
                    }
                ],
            }
        ],
    }


def _invocation(review: Review) -> dict[str, Any]:
    notifications = [_analyzer_notification(run) for run in review.coverage.analyzers]
    notifications = [n for n in notifications if n is not None]
    notifications += [_skipped_notification(s.path, s.reason) for s in review.coverage.skipped]
    if review.model_error is not None:
        # First: it is why the results are the analyzers' only (the CLI exits 3).
        notifications.insert(
            0,
            {
                "level": "error",
                "message": {"text": f"The model could not be used: {review.model_error}"},
                "descriptor": {"id": "redline/model-unusable"},
            },
        )
    return {
        # A failed review (an ask that never submitted), a model that could not be used or a
        # failed analyzer: incomplete.
        "executionSuccessful": review.failure is None
        and review.model_error is None
        and not any(r.status == "failed" for r in review.coverage.analyzers),
        "toolExecutionNotifications": notifications,
    }


def _skipped_notification(path: str, reason: str) -> dict[str, Any]:
    artifact = {"uri": artifact_uri(path), "uriBaseId": SRCROOT}
    return {
        "level": "note",
        "message": {"text": f"Not reviewed: {path} ({reason})"},
        "descriptor": {"id": "redline/skipped-file"},
        "locations": [{"physicalLocation": {"artifactLocation": artifact}}],
    }


def _analyzer_notification(run: AnalyzerRun) -> dict[str, Any] | None:
    level = {"failed": "error", "missing": "warning", "partial": "warning", "skipped": "note"}.get(
        run.status
    )
    if level is None:
        return None
    text = f"Analyzer {run.name}: {run.status}" + (f" ({run.message})" if run.message else "")
    return {
        "level": level,
        "message": {"text": text},
        "descriptor": {"id": f"redline/analyzer-{run.status}"},
    }


def _help_uri(finding: Finding) -> str | None:
    last = finding.comment.rstrip().rsplit("\n", 1)[-1]
    match = _HELP_URL.search(last)
    return match.group(1) if match else None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _driver(rules: list[dict[str, Any]]) -> dict[str, Any]:
    driver: dict[str, Any] = {"name": TOOL_NAME, "version": "0.0.0", "rules": rules}
    try:
        meta = metadata.metadata("redline")
    except metadata.PackageNotFoundError:
        return driver
    driver["version"] = (meta.get_all("Version") or ["0.0.0"])[0]
    # The project's home page from its package metadata; no URL is made up when there is none.
    urls = list(meta.get_all("Home-page") or []) + [
        u.split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []
    ]
    home = next((u for u in urls if u.startswith(("https://", "http://"))), None)
    if home:
        driver["informationUri"] = home
    return driver
