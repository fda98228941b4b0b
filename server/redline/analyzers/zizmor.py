"""zizmor (GitHub Actions workflows and actions): argv and the reading of its JSON output.

Offline (`--offline`: no GitHub API, no token — the child environment holds none anyway) and
with `--no-config`: a `zizmor.yml` of the change could turn audits off for its own workflow.
The workflow files keep their repository paths in the scratch directory (zizmor tells a
workflow from an action by them). zizmor reads YAML; it runs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline.analyzers.base import AnalyzerFailed, RawResult, ToolReport, relative_path
from redline.model import Severity

NAME = "zizmor"
PACKAGE = "zizmor"
# With --no-exit-codes: 0, or 1 for a failure. 3 is "no inputs collected" (nothing parsed).
OK_EXIT_CODES = (0,)
NOTHING_PARSED = 3
_SEVERITIES = {
    "High": Severity.HIGH,
    "Medium": Severity.MEDIUM,
    "Low": Severity.LOW,
    "Informational": Severity.INFO,
    "Unknown": Severity.LOW,
}
_CONFIDENCES = {"High": 0.9, "Medium": 0.7, "Low": 0.5, "Unknown": 0.5}


def argv(executable: str, cache: Path, files: Sequence[str]) -> list[str]:
    return [
        executable,
        "--offline",
        "--no-config",
        "--no-exit-codes",
        "--no-progress",
        "--cache-dir",
        str(cache),
        "--format",
        "json",
        *(f"./{f}" for f in files),
    ]


def parse(stdout: bytes, scratch: Path) -> ToolReport:
    try:
        data = json.loads(stdout.decode("utf-8") or "[]")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalyzerFailed(f"unreadable zizmor output: {exc}") from exc
    if not isinstance(data, list):
        raise AnalyzerFailed("unreadable zizmor output: expected a JSON list")
    results: list[RawResult] = []
    try:
        for item in data:
            result = _result(item, scratch)
            if result is not None:
                results.append(result)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise AnalyzerFailed(f"unexpected zizmor output ({exc!r})") from exc
    return ToolReport(results)


def unparsed_note(stderr: bytes) -> str | None:
    """zizmor's word that it skipped an input it could not parse (it names no file)."""
    if b"failed to parse input" in stderr:
        return "zizmor could not parse some of the workflow files (not checked)"
    return None


def _result(item: dict[str, Any], scratch: Path) -> RawResult | None:
    if item.get("ignored"):
        return None  # an inline `# zizmor: ignore[...]`, honoured like ruff's inline markers
    primary = next(
        (
            loc
            for loc in item.get("locations") or []
            if (loc.get("symbolic") or {}).get("kind") == "Primary"
        ),
        None,
    )
    if primary is None:
        return None
    key = primary["symbolic"]["key"]
    local = key.get("Local") if isinstance(key, dict) else None
    if not isinstance(local, dict):
        return None  # a remote input: nothing of the change
    where = primary["concrete"]["location"]
    line = int(where["start_point"]["row"]) + 1
    end = int(where["end_point"]["row"]) + 1
    if end > line and int(where["end_point"]["column"]) == 0:
        end -= 1  # ends at the start of the next row: the row before is the last
    determinations = item.get("determinations") or {}
    desc = str(item.get("desc") or item.get("ident") or "")
    annotation = str(primary["symbolic"].get("annotation") or "")
    message = f"{desc}: {annotation}" if annotation else desc
    message = message[:1].upper() + message[1:]
    return RawResult(
        tool=NAME,
        rule=str(item["ident"]),
        file=relative_path(str(local["verbatim_path"]), scratch),
        line=line,
        end_line=max(line, end),
        message=message,
        url=item.get("url") or None,
        severity=_SEVERITIES.get(str(determinations.get("severity")), Severity.LOW),
        confidence=_CONFIDENCES.get(str(determinations.get("confidence")), 0.5),
        security=True,  # every zizmor audit is a security check
    )
