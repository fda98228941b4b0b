"""Token estimates and the line-range arithmetic the context budget is built on.

Estimates are characters / 4, the same rule as the agent session (agent/session.py): the only
decision made with them — "does this still fit?" — has slack anyway, and a real tokenizer would
cost time on every section of every unit.
"""

from __future__ import annotations

from collections.abc import Iterable

from redline.agent.session import estimate_tokens

# A range of 1-based line numbers, both ends included.
Range = tuple[int, int]


def merge_ranges(ranges: Iterable[Range]) -> list[Range]:
    """Sorted ranges with overlapping and adjacent ones joined: (1, 5) + (6, 9) → (1, 9)."""
    merged: list[Range] = []
    for start, end in sorted(r for r in ranges if r[0] <= r[1]):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def subtract_ranges(ranges: Iterable[Range], covered: Iterable[Range]) -> list[Range]:
    """The parts of `ranges` not inside `covered` (both may be unsorted and overlapping)."""
    result: list[Range] = []
    holes = merge_ranges(covered)
    for start, end in merge_ranges(ranges):
        cursor = start
        for h_start, h_end in holes:
            if h_end < cursor or h_start > end:
                continue
            if h_start > cursor:
                result.append((cursor, h_start - 1))
            cursor = max(cursor, h_end + 1)
            if cursor > end:
                break
        if cursor <= end:
            result.append((cursor, end))
    return result


def clamp(ranges: Iterable[Range], last_line: int) -> list[Range]:
    """Ranges cut to the lines 1..last_line of a file; empty ones dropped."""
    out = [(max(1, s), min(last_line, e)) for s, e in ranges]
    return [(s, e) for s, e in out if s <= e]


def around(lines: Iterable[int], margin: int) -> list[Range]:
    """A window of ±margin lines around each line, merged."""
    return merge_ranges((n - margin, n + margin) for n in lines)


__all__ = ["Range", "around", "clamp", "estimate_tokens", "merge_ranges", "subtract_ranges"]
