"""How code is shown to a reviewer model: pure text functions, no I/O.

Every code line a reviewer sees carries its new-side line number, in one format everywhere:
`  42 +| code` (an added line) or `  42  | code` (unchanged). Removed lines have no new-side
number, so they are shown as `     -| code` in a separate `__old hunk__` block: models that
count lines inside a diff, or quote removed-side numbers, are the usual source of misplaced
comments (see notes/peers.md). The model is asked to quote code without the prefix; anchoring
then finds that code in the file.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from typing import Final

from redline.diff.file_diff import FileDiff
from redline.diff.parse import parse_git_diff
from redline.encoding import decode_text

LEGEND: Final = (
    "Code lines are shown as `<new-side line number> <+ if added>| <code>`; `-|` lines were "
    "removed. Quote code without that prefix."
)
_BINARY_SNIFF: Final = 8192
_MIN_WIDTH: Final = 4
_HEADER_SCAN_LINES: Final = 200
_HEADER_MAX_LINES: Final = 80
_HEADER_FALLBACK_LINES: Final = 10
_IMPORT: Final = re.compile(
    r"""^\s*(?:
        import\b | from\s+\S+\s+import\b | package\s | using\s | use\s | \#include\b
      | \#import\b | require\s*\( | (?:const|let|var)\s+[\w{}\s,]+=\s*require\s*\(
      | export\s+(?:\*|\{[^}]*\})\s+from\b | @import\b | extern\s+crate\b
    )""",
    re.VERBOSE,
)


def split_lines(text: str) -> list[str]:
    """Lines split on "\\n" only, as git and tree-sitter number them ("\\r" and U+2028 are
    content; str.splitlines would shift every line number after them)."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def decode_source(data: bytes) -> tuple[list[str] | None, str | None]:
    """(lines, note) of a file version; lines is None for binary data (a NUL near the start).

    Decoded as `encoding.decode_text` does (UTF-8, else the file's coding line), so a Latin-1
    file's lines read as its author wrote them."""
    if b"\0" in data[:_BINARY_SNIFF]:
        return None, None
    text, note = decode_text(data)
    return split_lines(text), note


def line_width(last_line: int) -> int:
    return max(_MIN_WIDTH, len(str(last_line)))


def number_lines(
    lines: Sequence[str], first: int, *, width: int, added: Container[int] = ()
) -> str:
    """`lines` (the first one is line `first`) in the shared numbered format."""
    out = []
    for n, line in enumerate(lines, start=first):
        mark = "+" if n in added else " "
        out.append(f"{n:>{width}} {mark}| {line}")
    return "\n".join(out)


def format_patch(patch: str) -> tuple[str, FileDiff | None]:
    """A unit's unified-diff text in the reviewer format, PR-Agent style: per hunk, the `@@`
    line, `__new hunk__` (numbered new-side lines) and, when lines were removed,
    `__old hunk__` (the removed lines, runs separated by `…`).

    Returns the text and the parsed file diff (None when the patch has no file section).
    A patch without hunks (binary, mode change, pure rename) is returned as its header lines.
    """
    sections = parse_git_diff(patch)
    fd = sections[0] if sections else None
    if fd is None or not fd.hunks:
        header = fd.header if fd is not None else split_lines(patch)
        body = [line for line in header if not line.startswith(("--- ", "+++ "))]
        return "\n".join(body) or "(no textual changes)", fd
    last = max(h.new_start + h.new_count for h in fd.hunks)
    width = line_width(last)
    out: list[str] = []
    for hunk in fd.hunks:
        out.append(hunk.header)
        new_lines: list[str] = []
        old_lines: list[str] = []
        new_line = hunk.new_start
        previous = ""
        for line in hunk.lines:
            tag, text = line[:1], line[1:]
            if tag == "+":
                new_lines.append(f"{new_line:>{width}} +| {text}")
                new_line += 1
            elif tag == "-":
                if old_lines and previous != "-":
                    old_lines.append(f"{'':>{width}}  | …")
                old_lines.append(f"{'':>{width}} -| {text}")
            elif tag == "\\":  # "\ No newline at end of file": not code
                continue
            else:
                new_lines.append(f"{new_line:>{width}}  | {text}")
                new_line += 1
            previous = tag
        out.append("__new hunk__")
        out += new_lines
        if old_lines:
            out.append("__old hunk__")
            out += old_lines
    return "\n".join(out), fd


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in text, so code cannot close it early."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def module_header_end(lines: Sequence[str]) -> int:
    """Last line of the file's header (docstring, imports, package clause): 0 for an empty file.

    The last import-like line within the first lines, extended over a multi-line import
    (`from x import (`, `import {`, Go's `import (` block). Without imports, the first few
    lines (a docstring or licence comment usually says what the module is).
    """
    last = 0
    depth = 0
    for i, line in enumerate(lines[:_HEADER_SCAN_LINES], start=1):
        if depth > 0 or _IMPORT.match(line):
            depth = max(0, depth + _bracket_balance(line))
            last = i
    if last == 0:
        return min(len(lines), _HEADER_FALLBACK_LINES)
    return min(last, _HEADER_MAX_LINES)


def _bracket_balance(line: str) -> int:
    return line.count("(") + line.count("{") - line.count(")") - line.count("}")


__all__ = [
    "LEGEND",
    "decode_source",
    "fence_for",
    "format_patch",
    "line_width",
    "module_header_end",
    "number_lines",
    "split_lines",
]
