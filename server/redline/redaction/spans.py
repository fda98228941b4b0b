"""Spans: where the secrets are in a text, and the arithmetic on them (trim, subtract the
placeholders already there, merge overlaps, split at a separator) and on a gate's subset of
lines (`LineSet`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from typing import Final, NamedTuple

from redline.redaction.rule import ENTROPY

_LONG_LINE: Final = 2048
_WINDOW: Final = 256


class Span(NamedTuple):
    start: int
    end: int
    kind: str
    rank: int


def covered(spans: list[Span], pos: int) -> bool:
    return any(pos <= s.start <= pos + 16 and s.end > s.start for s in spans)


def trim(text: str, spans: Iterable[Span]) -> list[Span]:
    out = []
    for s in spans:
        start, end = s.start, s.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            out.append(s._replace(start=start, end=end))
    return out


def subtract(spans: list[Span], protected: list[tuple[int, int]]) -> list[Span]:
    """Spans minus the placeholders already in the text (the pieces left that hold a letter
    or digit stay masked)."""
    if not protected or not spans:
        return spans
    out = []
    for s in spans:
        pieces = [(s.start, s.end)]
        for ps, pe in protected:
            if pe <= s.start or ps >= s.end:
                continue
            pieces = [p for a, b in pieces for p in ((a, min(b, ps)), (max(a, pe), b))]
        out += [s._replace(start=a, end=b) for a, b in pieces if b - a >= 2]
    return out


def merge(spans: list[Span]) -> list[Span]:
    """Overlapping detections become one span; its kind is the most specific one's.

    A random-looking string that holds a more specific detection (`"API_TOKEN=<token>"`)
    gives way to it, so the name stays readable."""
    if not spans:
        return []
    spans = sorted(spans)
    specific = [s for s in spans if s.rank < ENTROPY]
    if len(specific) < len(spans) and specific:
        spans = [s for s in spans if s.rank < ENTROPY or not _holds(s, specific)]
    out: list[Span] = []
    cur = spans[0]
    for s in spans[1:]:
        if s.start < cur.end:
            best = cur if (cur.rank, cur.start - cur.end) <= (s.rank, s.start - s.end) else s
            cur = Span(cur.start, max(cur.end, s.end), best.kind, best.rank)
        else:
            out.append(cur)
            cur = s
    out.append(cur)
    return out


def _holds(outer: Span, spans: list[Span]) -> bool:
    i = bisect.bisect_left(spans, (outer.start,))
    while i < len(spans) and spans[i].start < outer.end:
        if spans[i].end <= outer.end:
            return True
        i += 1
    return False


def split_at(text: str, spans: list[Span], sep: str) -> list[Span]:
    out = []
    for s in spans:
        start = s.start
        cut = text.find(sep, start, s.end)
        while cut >= 0:
            if cut > start:
                out.append(s._replace(start=start, end=cut))
            start = cut + len(sep)
            cut = text.find(sep, start, s.end)
        if s.end > start:
            out.append(s._replace(start=start))
    return out


_LINE_REACH: Final = 1024


def line_of(text: str, start: int, end: int) -> str:
    """The line holding `text[start:end]`, cut 1,024 characters beyond either end: a rule's
    check on every match of a minified file's one line must not copy (or search) all of it
    each time."""
    lo = max(0, start - _LINE_REACH)
    a = text.rfind("\n", lo, start)
    a = lo if a < 0 else a + 1
    hi = min(len(text), end + _LINE_REACH)
    b = text.find("\n", end, hi)
    return text[a : hi if b < 0 else b]


def word_bounded(text: str, start: int, end: int) -> bool:
    if text[start].isalnum() and start and text[start - 1].isalnum():
        return False
    return not (text[end - 1].isalnum() and end < len(text) and text[end].isalnum())


def inside(protected: list[tuple[int, int]], pos: int) -> bool:
    return any(a <= pos < b for a, b in protected)


class LineSet:
    """The lines of a text that a gate selects, joined by "\\n", mapped back to the text."""

    def __init__(self, text: str, ranges: list[tuple[int, int]]) -> None:
        self.origins = [s for s, _ in ranges]
        self.lengths = [e - s for s, e in ranges]
        self.offsets: list[int] = []
        pos = 0
        for n in self.lengths:
            self.offsets.append(pos)
            pos += n + 1
        self.text = "\n".join(text[s:e] for s, e in ranges)

    @classmethod
    def select(cls, text: str, gate: re.Pattern[str], *, lower: bool = False) -> LineSet | None:
        """The lines holding a match of `gate`; for a very long line (minified code, a data
        blob), only a window around each match: every gated pattern needs its keyword
        nearby, and scanning a megabyte line for each of them would take seconds."""
        hay = text
        if lower:
            hay = text.lower()
            if len(hay) != len(text):  # a few characters change length when lower-cased
                hay, gate = text, re.compile(gate.pattern, re.IGNORECASE)
        ranges: list[tuple[int, int]] = []
        pos = 0
        start = end = -1  # the line of the last match: a long line is searched for once
        while True:
            m = gate.search(hay, pos)
            if m is None:
                break
            if not start <= m.start() < end:
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.end())
                end = len(text) if end < 0 else end
            if end - start <= _LONG_LINE:
                ranges.append((start, end))
                pos = end + 1
                continue
            lo = max(start, m.start() - _WINDOW)
            hi = min(end, m.end() + _WINDOW)
            if ranges and lo <= ranges[-1][1]:
                lo = ranges.pop()[0]
            ranges.append((lo, hi))
            pos = m.end()
        return cls(text, ranges) if ranges else None

    def lines(self) -> Iterable[tuple[int, str]]:
        for origin, offset, n in zip(self.origins, self.offsets, self.lengths, strict=True):
            yield origin, self.text[offset : offset + n]

    def map(self, spans: Iterable[Span]) -> list[Span]:
        """Spans in the joined text → spans in the original text, cut at their line's end."""
        out = []
        for s in spans:
            i = bisect.bisect_right(self.offsets, s.start) - 1
            offset, origin = self.offsets[i], self.origins[i]
            end = min(s.end, offset + self.lengths[i])
            if end > s.start:
                out.append(s._replace(start=origin + s.start - offset, end=origin + end - offset))
        return out
