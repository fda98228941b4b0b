"""The per-file cap on a diff, applied while the diff is read.

A file's section of the diff (from its `diff ` line to the next) larger than
`section_cap(review.max_file_bytes)` — twice the read limit: the old and the new version of a
file within it, each whole — is never kept. While git writes it, its header (the `diff` line
and the extended header: names, modes, blob ids) is kept, the rest is counted and dropped, and
the header goes on with one marker line after the `diff` line. The diff parser
(diff/parse.py) reads the marker as "cut": the file becomes one skipped unit whose reason gives
the sizes, so nothing of its content reaches units, context, analyzers or a model, and the
report says so. However big a section is, at most max(cap, HEADER_MAX) bytes of it are held.

The marker starts with "\\ ". In a section's header git writes no such line (it writes
"\\ No newline at end of file" only inside a hunk body, which the parser reads by the hunk's
line counts), and no content line can start with it (content lines start with ' ', '+' or
'-'): the reviewed code cannot forge one.
"""

from __future__ import annotations

import re
from typing import Final

# The most of a cut section's header that is kept (a header is a few lines; C-quoted names
# of PATH_MAX bytes fit many times over).
HEADER_MAX: Final = 64 * 1024
_MARKER: Final = "\\ Redline: section cut, "
_MARKER_RE: Final = re.compile(r"\\ Redline: section cut, (\d+) bytes over the (\d+)-byte cap")


def section_cap(max_file_bytes: int) -> int:
    """The most bytes one file's diff section may have (see the module docstring)."""
    return 2 * max_file_bytes


def read_marker(line: str) -> tuple[int, int] | None:
    """(section bytes, cap) when `line` is a cut marker, else None."""
    if not line.startswith(_MARKER):
        return None
    m = _MARKER_RE.fullmatch(line.rstrip("\r"))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _header_end(data: bytes) -> int:
    """Where the kept header of a section starting `data` ends: before its first hunk line,
    else after the last whole line within HEADER_MAX."""
    hunk = data.find(b"\n@@", 0, HEADER_MAX)
    if hunk != -1:
        return hunk + 1
    if len(data) <= HEADER_MAX and data.endswith(b"\n"):
        return len(data)
    last = data.rfind(b"\n", 0, HEADER_MAX)
    return last + 1 if last != -1 else 0


class SectionCut:
    """One section being cut: its header kept, its size and changed lines counted as the rest
    streams past (`more`), and the stub that stands for it (`stub`)."""

    def __init__(self, start: bytes) -> None:
        """`start`: the section's first bytes, from its `diff ` line on."""
        end = _header_end(start)
        self.header = start[:end]
        self.size = 0
        self.added = self.removed = 0
        self._last = b"\n"  # the byte before the body: its first line is a line start
        self.more(start[end:])
        self.size += end

    def more(self, data: bytes) -> None:
        """Count the next bytes of the section (the body: after the kept header)."""
        if not data:
            return
        self.size += len(data)
        # A changed line starts after a newline; the one byte kept between calls lets a line
        # that starts at a chunk boundary count once.
        joined = self._last + data
        self.added += joined.count(b"\n+")
        self.removed += joined.count(b"\n-")
        self._last = data[-1:]

    def stub(self, cap: int) -> bytes:
        """The header with the marker after its `diff` line: what the diff keeps of it."""
        first = self.header.find(b"\n") + 1 or len(self.header)
        marker = f"{_MARKER}{self.size} bytes over the {cap}-byte cap\n".encode("ascii")
        head, rest = self.header[:first], self.header[first:]
        if not head.endswith(b"\n"):
            head += b"\n"
        return head + marker + rest


__all__ = ["HEADER_MAX", "SectionCut", "read_marker", "section_cap"]
