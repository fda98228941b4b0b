"""oxlint (JavaScript and TypeScript): argv and the reading of its JSON output.

Isolated like ruff (`--isolated`): the configuration is Redline's own empty `.oxlintrc.json`
(`-c`, written into the job's private directory), nested configuration files are not loaded and
ignore files are not read, so neither an `.oxlintrc.json` (whose `jsPlugins` would be code), an
`oxlint.config.ts` or `eslint.config.js` (code by definition), nor an `.eslintignore` of the
change can run anything or silence its own findings. Categories on the command line: correctness
as errors, suspicious as warnings (the JSON says only the level, which then names the category),
minus the rules in `rules.OXLINT_OFF` (mostly noise, see there).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline.analyzers.base import AnalyzerFailed, RawResult, ToolReport, relative_path
from redline.model import Severity

NAME = "oxlint"
PACKAGE = "oxlint"
CONFIG_NAME = "redline-oxlintrc.json"
# oxlint exits 1 when it reports an error-level diagnostic; anything else is trouble.
OK_EXIT_CODES = (0, 1)
SYNTAX_ERROR = "syntax-error"
_MAX_LABEL_SPREAD = 10


def argv(executable: str, config: Path, allowed: Sequence[str], files: Sequence[str]) -> list[str]:
    return [
        executable,
        "-c",
        str(config),
        "--disable-nested-config",
        "--no-ignore",
        "--no-error-on-unmatched-pattern",
        "-D",
        "correctness",
        "-W",
        "suspicious",
        *(arg for rule in allowed for arg in ("-A", _allow_name(rule))),
        "--format",
        "json",
        # "./" keeps a file named like an option a file.
        *(f"./{f}" for f in files),
    ]


def parse(stdout: bytes, scratch: Path) -> ToolReport:
    """Read `oxlint --format json` (oxlint 1.89: {"diagnostics": [...], ...})."""
    try:
        data = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalyzerFailed(f"unreadable oxlint output: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("diagnostics"), list):
        raise AnalyzerFailed("unreadable oxlint output: no 'diagnostics' list")
    results: list[RawResult] = []
    unread: list[str] = []
    for item in data["diagnostics"]:
        try:
            result = _result(item, scratch)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise AnalyzerFailed(f"unexpected oxlint output ({exc!r})") from exc
        if result is not None:
            results.append(result)
        elif not item.get("code"):
            # No position and no rule: oxlint could not read or parse a file at all.
            text = str(item.get("message") or "").replace(f"{scratch}/", "")
            unread.append(f"oxlint: {text}")
    return ToolReport(results, unread=unread)


def _allow_name(rule: str) -> str:
    """How `-A` names a rule: eslint's bare (`no-shadow`), the others' with their plugin."""
    plugin, _, name = rule.partition("/")
    return name if plugin == "eslint" else rule


def rule_id(code: str) -> str:
    """`eslint(no-debugger)` → `eslint/no-debugger`, the spelling oxlint's rule pages use."""
    code = code.strip()
    if code.endswith(")") and "(" in code:
        plugin, rule = code[:-1].split("(", 1)
        return f"{plugin}/{rule}"
    return code


def _result(item: dict[str, Any], scratch: Path) -> RawResult | None:
    labels = [label for label in item.get("labels") or [] if isinstance(label, dict)]
    spans = [label["span"] for label in labels if isinstance(label.get("span"), dict)]
    if not spans:
        return None  # no position: it cannot be put on a changed line
    # The labels mark the problem's parts ("y is declared here as const" / "re-assigned
    # here"): the finding covers them all when they are close, so an edit to any part of it
    # counts; far apart, only the first (the result's own place) — quoting the code between
    # them would bury the finding.
    lines = [int(span["line"]) for span in spans]
    line = end_line = lines[0]
    if max(lines) - min(lines) <= _MAX_LABEL_SPREAD:
        line, end_line = min(lines), max(lines)
    message = str(item.get("message") or "")
    help_text = str(item.get("help") or "")
    if help_text and help_text not in message:
        message = f"{message.rstrip('.')}. {help_text}"
    code = str(item.get("code") or "")
    return RawResult(
        tool=NAME,
        # A diagnostic without a rule is the parser's: the file has a syntax error there.
        rule=rule_id(code) if code else SYNTAX_ERROR,
        file=relative_path(str(item["filename"]), scratch),
        line=max(1, line),
        end_line=max(1, line, end_line),
        message=message,
        url=item.get("url") or None,
        # "error" is a correctness rule (denied) or a syntax error, "warning" a suspicious
        # rule: rules.py rates them by that.
        severity=Severity.MEDIUM if item.get("severity") == "error" else Severity.LOW,
    )
