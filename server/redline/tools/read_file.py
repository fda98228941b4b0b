"""read_file: numbered lines of a file in the working tree, inside the repository only.

Secret files are refused, not redacted (refusal holds for every format; redaction of a format
we do not parse is best effort). Everything returned still goes through ToolContext.clean:
key patterns and `.env` values are masked wherever they appear, control characters shown.
"""

from __future__ import annotations

from typing import Final

from redline.agent.toolkit import ToolError
from redline.tools.names import shown
from redline.tools.paths import read_repo_bytes
from redline.tools.sandbox import ToolContext

_BINARY_SNIFF: Final = 8192


def decode_text(data: bytes, path: str) -> tuple[str, str | None]:
    """(text, note): refuses binary data; invalid UTF-8 is replaced and a note says so."""
    if b"\0" in data[:_BINARY_SNIFF]:
        raise ToolError(f"{shown(path)} is a binary file; read_file shows text files only")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        note = "note: the file is not valid UTF-8; undecodable bytes are shown as U+FFFD"
        return data.decode("utf-8", errors="replace"), note


def number_lines(lines: list[str], first: int) -> str:
    """`  12| code` for each line, numbers right-aligned to a common width (at least 4)."""
    width = max(4, len(str(first + len(lines) - 1)))
    return "\n".join(f"{n:>{width}}| {line}" for n, line in enumerate(lines, start=first))


def select_lines(
    lines: list[str],
    start_line: int | None,
    end_line: int | None,
    max_lines: int,
    what: str,
) -> tuple[int, int, str | None]:
    """Validate a 1-based inclusive range against the text; (first, last, note)."""
    total = len(lines)
    for name, value in (("start_line", start_line), ("end_line", end_line)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ToolError(f"{name} must be an integer")
        if value is not None and value < 1:
            raise ToolError(f"{name} must be 1 or more (line numbers start at 1)")
    first = start_line or 1
    if start_line is not None and end_line is not None and end_line < start_line:
        raise ToolError(f"end_line ({end_line}) is before start_line ({start_line})")
    if total == 0:
        return 1, 0, None
    if first > total:
        raise ToolError(f"start_line {first} is past the end of {what} ({total} lines)")
    last = min(end_line or total, total)
    note = None
    if last - first + 1 > max_lines:
        last = first + max_lines - 1
        note = (
            f"note: showing at most {max_lines} lines per call; continue with start_line={last + 1}"
        )
    return first, last, note


def read_file(
    ctx: ToolContext,
    path: str,
    start_line: int | None = None,
    end_line: int | None = None,
) -> str:
    rp, data = read_repo_bytes(ctx, path)
    text, decode_note = decode_text(data, path)
    lines = text.splitlines()
    first, last, range_note = select_lines(
        lines, start_line, end_line, ctx.limits.max_lines_per_call, shown(path)
    )
    header = f"{rp.rel} (lines {first}-{last} of {len(lines)})"
    if not lines:
        header = f"{rp.rel} (empty file)"
    parts = [header]
    if decode_note:
        parts.append(decode_note)
    if lines:
        parts.append(number_lines(lines[first - 1 : last], first))
    if range_note:
        parts.append(range_note)
    return ctx.clean("\n".join(parts))
