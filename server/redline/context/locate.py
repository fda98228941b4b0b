"""Locating a change in a file: the lines that anchor it on each side of the diff, the innermost
function around a line, and a named definition among a file's. Pure functions, no reads."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from redline.diff.file_diff import FileDiff
from redline.diff.functions import FunctionSpan
from redline.model import ReviewUnit


def innermost(spans: Sequence[FunctionSpan], line: int) -> FunctionSpan | None:
    """The innermost span containing line; spans are sorted outer-first (function_spans)."""
    best = None
    stop = bisect.bisect_right([s.start for s in spans], line)
    for span in spans[:stop]:
        if span.end >= line:
            best = span
    return best


def new_anchors(unit: ReviewUnit, fd: FileDiff | None) -> list[int]:
    """New-side lines that locate the change (added lines, and the line above a removal)."""
    if fd is not None and fd.hunks:
        return sorted({n for h in fd.hunks for n in h.anchors})
    return sorted(set(unit.added_lines))


def old_anchors(fd: FileDiff) -> list[int]:
    """Old-side numbers of the removed lines (or, for pure additions, the line above them)."""
    out: list[int] = []
    for hunk in fd.hunks:
        old = hunk.old_start
        for line in hunk.lines:
            tag = line[:1]
            if tag == "-":
                out.append(old)
                old += 1
            elif tag == "+":
                out.append(max(old - 1, 1))
            elif tag != "\\":
                old += 1
    return sorted(set(out))


__all__ = ["innermost", "new_anchors", "old_anchors"]
