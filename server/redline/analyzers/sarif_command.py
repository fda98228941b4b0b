"""Custom analyzers: a configured command that prints SARIF 2.1.0 on stdout.

The command is an argv list from the user's settings; "{files}" as a whole argument expands to
one argument per matching file, inside a larger argument to the files joined by spaces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from redline.analyzers.base import AnalyzerFailed, Edit, RawResult, ToolReport, relative_path
from redline.model import Severity

PLACEHOLDER = "{files}"

_LEVELS = {
    "error": Severity.HIGH,
    "warning": Severity.MEDIUM,
    "note": Severity.LOW,
    "none": Severity.INFO,
}
_SECURITY_TAGS = {"security", "vulnerability", "cwe", "owasp"}


def matching_files(files: Iterable[str], globs: Sequence[str]) -> list[str]:
    """Files matching any glob, by full relative path or by base name."""
    matched = []
    for path in files:
        name = path.rsplit("/", 1)[-1]
        if any(fnmatchcase(path, g) or fnmatchcase(name, g) for g in globs):
            matched.append(path)
    return matched


def expand_command(command: Sequence[str], files: Sequence[str]) -> list[str]:
    paths = [f"./{f}" for f in files]  # "./" keeps a file named like an option a file
    argv: list[str] = []
    for arg in command:
        if arg == PLACEHOLDER:
            argv.extend(paths)
        elif PLACEHOLDER in arg:
            argv.append(arg.replace(PLACEHOLDER, " ".join(paths)))
        else:
            argv.append(arg)
    return argv


def parse(stdout: bytes, tool: str, scratch: Path) -> ToolReport:
    """Read a SARIF 2.1.0 log into raw results; raise AnalyzerFailed when it is not one."""
    try:
        log = json.loads(stdout.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalyzerFailed(f"output is not SARIF JSON: {exc}") from exc
    if not isinstance(log, dict) or not isinstance(log.get("runs"), list):
        raise AnalyzerFailed("output is not a SARIF log (no 'runs' list)")
    if log.get("version") not in (None, "2.1.0"):
        raise AnalyzerFailed(f"unsupported SARIF version {log.get('version')!r}; need 2.1.0")
    results: list[RawResult] = []
    try:
        for run in log["runs"]:
            results.extend(_run_results(run, tool, scratch))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise AnalyzerFailed(f"malformed SARIF ({exc!r})") from exc
    return ToolReport(results)


def _run_results(run: dict[str, Any], tool: str, scratch: Path) -> list[RawResult]:
    driver = run.get("tool", {}).get("driver", {})
    rules: list[dict[str, Any]] = driver.get("rules") or []
    by_id = {r.get("id"): r for r in rules if isinstance(r, dict)}
    out = []
    for result in run.get("results") or []:
        rule = _rule_for(result, rules, by_id)
        rule_id = str(result.get("ruleId") or rule.get("id") or tool)
        located = _location(result, scratch)
        if located is None:
            continue  # a result without a file position cannot be put on a changed line
        file, line, end_line = located
        level = result.get("level") or (rule.get("defaultConfiguration") or {}).get("level")
        out.append(
            RawResult(
                tool=tool,
                rule=rule_id,
                file=file,
                line=line,
                end_line=end_line,
                message=_message(result.get("message") or {}, rule),
                url=rule.get("helpUri") or None,
                severity=_LEVELS.get(str(level or "warning")),
                security=_is_security(rule, result),
                edits=_edits(result, file, scratch),
            )
        )
    return out


def _rule_for(
    result: dict[str, Any], rules: list[dict[str, Any]], by_id: dict[Any, dict[str, Any]]
) -> dict[str, Any]:
    index = result.get("ruleIndex")
    if isinstance(index, int) and 0 <= index < len(rules):
        return rules[index]
    return by_id.get(result.get("ruleId")) or {}


def _message(message: dict[str, Any], rule: dict[str, Any]) -> str:
    text = message.get("text")
    if not text and message.get("id"):
        template = (rule.get("messageStrings") or {}).get(message["id"], {}).get("text", "")
        text = template
        for i, arg in enumerate(message.get("arguments") or []):
            text = text.replace("{" + str(i) + "}", str(arg))
    return str(text or (rule.get("shortDescription") or {}).get("text") or rule.get("id") or "")


def _is_security(rule: dict[str, Any], result: dict[str, Any]) -> bool:
    tags = [
        *((rule.get("properties") or {}).get("tags") or []),
        *((result.get("properties") or {}).get("tags") or []),
    ]
    return any(str(t).lower() in _SECURITY_TAGS for t in tags) or "security-severity" in (
        rule.get("properties") or {}
    )


def _uri_to_path(uri: str, scratch: Path) -> str:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return relative_path(unquote(parsed.path), scratch)
    if parsed.scheme:
        return uri  # some other scheme: matches no reviewed file
    return relative_path(unquote(uri), scratch)


def _location(result: dict[str, Any], scratch: Path) -> tuple[str, int, int] | None:
    for location in result.get("locations") or []:
        physical = location.get("physicalLocation") or {}
        uri = (physical.get("artifactLocation") or {}).get("uri")
        region = physical.get("region") or {}
        if not uri or not isinstance(region.get("startLine"), int):
            continue
        line = max(1, region["startLine"])
        end_line = region.get("endLine")
        end_line = max(line, end_line) if isinstance(end_line, int) else line
        return _uri_to_path(uri, scratch), line, end_line
    return None


def _edits(result: dict[str, Any], file: str, scratch: Path) -> tuple[Edit, ...]:
    """The first fix's replacements in this result's own file, when they are plain text."""
    for fix in result.get("fixes") or []:
        edits = []
        for change in fix.get("artifactChanges") or []:
            uri = (change.get("artifactLocation") or {}).get("uri")
            if not uri or _uri_to_path(uri, scratch) != file:
                return ()  # a fix that edits another file is not a line suggestion
            for replacement in change.get("replacements") or []:
                edit = _edit(replacement)
                if edit is None:
                    return ()
                edits.append(edit)
        if edits:
            return tuple(edits)
    return ()


def _edit(replacement: dict[str, Any]) -> Edit | None:
    region = replacement.get("deletedRegion") or {}
    start = region.get("startLine")
    if not isinstance(start, int):
        return None  # offset-based regions are not "simple"
    end = region.get("endLine", start)
    content = (replacement.get("insertedContent") or {}).get("text", "")
    if not isinstance(end, int) or not isinstance(content, str):
        return None
    start_col = region.get("startColumn", 1)
    end_col = region.get("endColumn")
    if not isinstance(start_col, int) or not (end_col is None or isinstance(end_col, int)):
        return None
    return Edit(start, start_col, end, end_col, content)
