"""bandit: argv and the reading of its JSON output.

bandit 1.9 has no SARIF formatter of its own (`-f` offers csv, custom, html, json, screen, txt,
xml, yaml), so JSON it is. Files are passed explicitly and no `-c`/`--ini` is given, so no
configuration from the reviewed repository is read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline.analyzers.base import AnalyzerFailed, RawResult, ToolReport, relative_path
from redline.model import Severity

NAME = "bandit"

_SEVERITY = {"HIGH": Severity.HIGH, "MEDIUM": Severity.MEDIUM, "LOW": Severity.LOW}
_CONFIDENCE = {"HIGH": 0.8, "MEDIUM": 0.6, "LOW": 0.4}


def argv(executable: str, files: Sequence[str]) -> list[str]:
    return [executable, "-f", "json", "-q", "--exit-zero", *(f"./{f}" for f in files)]


def parse(stdout: bytes, scratch: Path) -> ToolReport:
    try:
        data = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalyzerFailed(f"unreadable bandit output: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise AnalyzerFailed("unreadable bandit output: no 'results' list")
    results: list[RawResult] = []
    try:
        for item in data["results"]:
            results.append(_result(item, scratch))
    except (KeyError, TypeError, ValueError) as exc:
        raise AnalyzerFailed(f"unexpected bandit output ({exc!r})") from exc
    # bandit skips a file it cannot parse entirely (a syntax error, bytes its coding line does
    # not decode), so each one is a file that was not checked.
    unread = [
        f"bandit could not check {relative_path(str(e.get('filename', '?')), scratch)}: "
        f"{e.get('reason', 'unknown error')}"
        for e in data.get("errors") or ()
        if isinstance(e, dict)
    ]
    return ToolReport(results, unread=unread)


def _result(item: dict[str, Any], scratch: Path) -> RawResult:
    line = int(item["line_number"])
    rows = [int(r) for r in item.get("line_range") or [line]]
    cwe = item.get("issue_cwe") or {}
    message = str(item.get("issue_text") or "").strip()
    if isinstance(cwe, dict) and cwe.get("id"):
        message = f"{message} (CWE-{cwe['id']})"
    return RawResult(
        tool=NAME,
        rule=str(item["test_id"]),
        file=relative_path(str(item["filename"]), scratch),
        line=min([*rows, line]),
        end_line=max([*rows, line]),
        message=message,
        url=item.get("more_info") or None,
        severity=_SEVERITY.get(str(item.get("issue_severity", "")).upper()),
        confidence=_CONFIDENCE.get(str(item.get("issue_confidence", "")).upper()),
        security=True,
    )
