"""ruff: argv and the reading of its JSON output.

`--isolated` on purpose: the reviewed repository's own ruff config (which the change itself may
edit) must not silence findings. `--unsafe-fixes` makes ruff report unsafe fixes too; each
finding says when its fix is unsafe.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline.analyzers.base import AnalyzerFailed, Edit, RawResult, ToolReport, relative_path

NAME = "ruff"


def argv(executable: str, select: Sequence[str], files: Sequence[str]) -> list[str]:
    return [
        executable,
        "check",
        "--isolated",
        "--select",
        ",".join(select),
        "--output-format",
        "json",
        "--no-cache",
        "--exit-zero",
        "--unsafe-fixes",
        "--quiet",
        # "./" keeps a file named like an option ("-x.py") a file.
        *(f"./{f}" for f in files),
    ]


def parse(stdout: bytes, scratch: Path) -> ToolReport:
    """Read `ruff check --output-format json` (a list of diagnostics, ruff 0.17)."""
    try:
        data = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalyzerFailed(f"unreadable ruff output: {exc}") from exc
    if not isinstance(data, list):
        raise AnalyzerFailed("unreadable ruff output: expected a JSON list")
    results: list[RawResult] = []
    unread: list[str] = []
    # Each file's path mapped once, not once per result (relative_path resolves the scratch
    # directory: 1,400 results of 75 files took 85 ms, more than reading the JSON).
    paths: dict[str, str] = {}
    for item in data:
        try:
            result = _result(item, scratch, paths)
        except (KeyError, TypeError, ValueError) as exc:
            raise AnalyzerFailed(f"unexpected ruff output ({exc!r})") from exc
        if result.rule == "E902":
            # The file could not be read (e.g. not UTF-8 and no usable coding line): a coverage
            # note, not a finding.
            unread.append(f"ruff could not read {result.file}: {result.message}")
            continue
        results.append(result)
    return ToolReport(results, unread=unread)


def _result(item: dict[str, Any], scratch: Path, paths: dict[str, str]) -> RawResult:
    start, end = item["location"], item["end_location"]
    line = int(start["row"])
    end_line = max(line, int(end["row"]))
    # An end at column 1 of a later row is the line break of the row before it.
    if end_line > line and int(end["column"]) == 1:
        end_line -= 1
    fix = item.get("fix") or None
    edits: tuple[Edit, ...] = ()
    unsafe = False
    fix_message = None
    if fix:
        edits = tuple(
            Edit(
                int(e["location"]["row"]),
                int(e["location"]["column"]),
                int(e["end_location"]["row"]),
                int(e["end_location"]["column"]),
                str(e["content"]),
            )
            for e in fix.get("edits") or ()
        )
        # "display-only" fixes are not meant to be applied at all.
        if fix.get("applicability") == "display-only":
            edits = ()
        unsafe = fix.get("applicability") == "unsafe"
        fix_message = fix.get("message")
    return RawResult(
        tool=NAME,
        rule=str(item.get("code") or item.get("name") or "ruff"),
        file=_mapped(str(item["filename"]), scratch, paths),
        line=line,
        end_line=end_line,
        message=str(item.get("message") or ""),
        url=item.get("url") or None,
        edits=edits,
        fix_unsafe=unsafe,
        fix_message=fix_message,
    )


def _mapped(reported: str, scratch: Path, paths: dict[str, str]) -> str:
    path = paths.get(reported)
    if path is None:
        path = paths[reported] = relative_path(reported, scratch)
    return path
