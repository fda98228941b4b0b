"""Turn an analyzer's fix (character edits) into whole-line existing → improved code.

A Finding carries code as whole lines so the editor can offer it as a line replacement. A fix
may touch lines outside the flagged range (ruff's B006 fix inserts a guard on the next line),
so the range widens to cover every edit: `existing_code → improved_code` must be a faithful
replacement of exactly the lines `line..end_line`.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import add

from redline.analyzers.base import Edit

# Ruff (and Python's tokenizer) break lines on \n, \r\n and \r only. str.splitlines() also
# breaks on \x0c, \x1c, U+2028 ... and would shift every line number after one of those.
_NEWLINE = re.compile(r"\r\n|\r|\n")


class SourceText:
    """A file's text with line offsets: 1-based rows, 1-based character columns."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._rows: list[str] | None = None
        if "\r" in text:
            self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        else:
            # "\n" only (nearly every file): the rows and their starts at C speed, not a
            # Python step per line (5x faster on large files).
            rows = text.split("\n")
            self.starts = list(accumulate(map(add, map(len, rows[:-1]), repeat(1)), initial=0))
            if len(rows) > 1 and rows[-1] == "":
                rows.pop()
            self._rows = rows
        # A trailing newline does not open a line of its own.
        if len(self.starts) > 1 and self.starts[-1] == len(text):
            self.starts.pop()

    def rows(self) -> list[str]:
        """The lines, without their line breaks (row n is `rows()[n - 1]`)."""
        if self._rows is None:
            rows = _NEWLINE.split(self.text)
            if len(rows) > 1 and rows[-1] == "":
                rows.pop()
            self._rows = rows
        return self._rows

    @property
    def line_count(self) -> int:
        return len(self.starts) if self.text else 0

    def line_end(self, row: int) -> int:
        """Offset just past row's line break (or the end of the text)."""
        return self.starts[row] if row < len(self.starts) else len(self.text)

    def content_end(self, row: int) -> int:
        """Offset of row's line break (its content end)."""
        end = self.line_end(row)
        segment = self.text[self.starts[row - 1] : end]
        return end - (len(segment) - len(segment.rstrip("\r\n")))

    def offset(self, row: int, col: int) -> int:
        if row > len(self.starts):  # one past the last line: the end of the text
            return len(self.text)
        return min(self.starts[row - 1] + max(col, 1) - 1, self.line_end(row))

    def row_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def lines(self, first: int, last: int) -> str:
        """Rows first..last joined with '\\n', without their line breaks."""
        last = min(last, self.line_count)
        if first > last:
            return ""
        chunk = self.text[self.starts[first - 1] : self.line_end(last)]
        return "\n".join(_NEWLINE.split(_strip_one_newline(chunk)))


@dataclass(frozen=True)
class LineFix:
    line: int
    end_line: int
    existing_code: str
    improved_code: str


def apply_fix(
    source: SourceText, line: int, end_line: int, edits: Sequence[Edit]
) -> LineFix | None:
    """Apply `edits` and return the affected whole lines before and after.

    Returns None when the edits do not fit the text (overlapping, out of range): a wrong
    suggestion is worse than none.
    """
    count = source.line_count
    if not edits or count == 0:
        return None
    spans: list[tuple[int, int, str]] = []
    first, last = line, end_line
    for edit in edits:
        if not 1 <= edit.start_row <= edit.end_row <= count + 1:
            return None
        start = source.offset(edit.start_row, edit.start_col)
        if edit.end_col is None:
            end = source.content_end(edit.end_row) if edit.end_row <= count else len(source.text)
        else:
            end = source.offset(edit.end_row, edit.end_col)
        if end < start:
            return None
        spans.append((start, end, edit.content))
        row = min(source.row_of(start), count)
        if end > start:
            first, last = min(first, row), max(last, source.row_of(end - 1))
        elif start == len(source.text) or start == source.starts[row - 1]:
            # An insertion at a line start sits on the boundary between two lines: it fits a
            # range ending on the line before as well as one starting on this line.
            at = row + 1 if start == len(source.text) and start != source.starts[row - 1] else row
            if at < first:
                first = at
            elif at > last + 1:
                last = at - 1
        else:
            first, last = min(first, row), max(last, row)
    first, last = max(1, first), min(last, count)
    spans.sort()
    for (_, prev_end, _), (next_start, _, _) in itertools.pairwise(spans):
        if next_start < prev_end:
            return None
    region_start, region_end = source.starts[first - 1], source.line_end(last)
    if spans[0][0] < region_start or spans[-1][1] > region_end:
        return None
    pieces: list[str] = []
    cursor = region_start
    for start, end, content in spans:
        pieces += [source.text[cursor:start], content]
        cursor = end
    pieces.append(source.text[cursor:region_end])
    new_region = "".join(pieces)
    if source.text[region_start:region_end].endswith(("\n", "\r")):
        # Both sides are whole lines; drop the one line break the region ends with.
        new_region = _strip_one_newline(new_region)
    improved = "\n".join(_NEWLINE.split(new_region)) if new_region else ""
    return LineFix(first, last, source.lines(first, last), improved)


def _strip_one_newline(text: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if text.endswith(ending):
            return text[: -len(ending)]
    return text
