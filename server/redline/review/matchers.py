"""The matchers `review/anchoring.py` runs, in its order: verbatim, whitespace (with
fragments), fuzzy; and the per-file line index they share. See anchoring's docstring for what
each level accepts and why.

Ranges here are 0-based and inclusive; `anchoring.locate` turns them into 1-based lines.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

from redline.review.quotes import indent, norm, split_lines

FUZZY_THRESHOLD = 0.8
MIN_FRAGMENT = 5
MAX_FUZZY_WINDOWS = 400
# Quotes longer than this are not fuzzy-matched: SequenceMatcher is quadratic in the worst case
# and a model that quotes 200 lines is not pointing at a place anyway.
MAX_FUZZY_LINES = 200
# A line that occurs this often (`}`, `return None`, `else:`) says nothing about where a quote
# belongs, so it does not propose fuzzy candidate windows.
_COMMON_LINE = 25
_IDENT = re.compile(r"[A-Za-z_]\w{3,}")
_TOKEN = re.compile(r"\w+|[^\w\s]")
# Fuzzy windows are always scored this many lines either side of the model's line number, and
# over the change's own lines: that is where a misquoted line most likely is, even when the
# quote shares no whole line and no distinctive word with the file.
NEAR_HINT = 25


class FileIndex:
    """A file's lines with the indexes the matchers need, built lazily and cached per text."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)
        self.stripped = [line.rstrip() for line in self.lines]

    @cached_property
    def content(self) -> list[int]:
        """0-based indexes of the non-blank lines."""
        return [i for i, line in enumerate(self.stripped) if line]

    @cached_property
    def normalized(self) -> list[str]:
        """Whitespace-collapsed text of each non-blank line, parallel to `content`."""
        return [norm(self.lines[i]) for i in self.content]

    @cached_property
    def norm_positions(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for pos, line in enumerate(self.normalized):
            index.setdefault(line, []).append(pos)
        return index


@lru_cache(maxsize=8)
def prepare(text: str) -> FileIndex:
    # A review anchors many findings against the same file text; str caches its hash, so the
    # lookup is cheap and the split and indexes are built once per file.
    return FileIndex(text)


def distance(start: int, end: int, hint: int | None) -> int:
    """0-based range vs 1-based hint: 0 when the hint falls inside the range."""
    if hint is None:
        return 0
    h = hint - 1
    if h < start:
        return start - h
    if h > end:
        return h - end
    return 0


def in_change(start: int, end: int, changed: Collection[int] | None) -> bool:
    """Whether the 0-based range holds one of the change's (1-based) lines."""
    if not changed:
        return False
    return any(n in changed for n in range(start + 1, end + 2))


def pick(
    ranges: Iterable[tuple[int, int]], hint: int | None, changed: Collection[int] | None = None
) -> tuple[int, int] | None:
    """Among equal matches: the one the model's line number points at, then one on the
    change's own lines (`changed`, 1-based: the reviewer was asked about the change, and a
    model's number may be counted in the diff or drift far), then the closest to the hint, the
    one starting nearest it (a model's line number is the first line of what it quotes), the
    earliest."""
    h = hint - 1 if hint is not None else 0
    best: tuple[int, int] | None = None
    best_key: tuple[int, int, int, int, int] | None = None
    for start, end in ranges:
        d = distance(start, end, hint)
        hit = 0 if hint is not None and d == 0 else 1
        key = (hit, 0 if in_change(start, end, changed) else 1, d, abs(start - h), start)
        if best_key is None or key < best_key:
            best, best_key = (start, end), key
    return best


def verbatim(
    f: FileIndex, quote: list[str], hint: int | None, changed: Collection[int] | None = None
) -> tuple[int, int] | None:
    want = [line.rstrip() for line in quote]
    k = len(want)
    if k > len(f.stripped):
        return None
    first = want[0]
    lines = f.stripped
    hits = (
        (i, i + k - 1) for i, line in enumerate(lines) if line == first and lines[i : i + k] == want
    )
    return pick(hits, hint, changed)


@dataclass(frozen=True)
class WsMatch:
    start: int  # 0-based file lines, inclusive
    end: int
    prefix: str = ""
    suffix: str = ""
    file_indent: str = ""
    quote_indent: str = ""


def _loose(fragment: str) -> str:
    """A regex for `fragment` that accepts any run of whitespace where it has one."""
    return r"\s+".join(re.escape(part) for part in fragment.split())


def whitespace(
    f: FileIndex, quote: list[str], hint: int | None, changed: Collection[int] | None = None
) -> WsMatch | None:
    body = [line for line in quote if line.strip()]
    want = [norm(line) for line in body]
    k = len(want)
    if k > len(f.content):
        return None
    matches: list[WsMatch] = []
    for pos in f.norm_positions.get(want[0], []):
        if f.normalized[pos : pos + k] == want:
            start, end = f.content[pos], f.content[pos + k - 1]
            matches.append(WsMatch(start, end, "", "", indent(f.lines[start]), indent(body[0])))
    if not matches:
        matches = _fragments(f, body, want)
    if not matches:
        return None
    best = pick(((m.start, m.end) for m in matches), hint, changed)
    return next(m for m in matches if (m.start, m.end) == best)


def _fragments(f: FileIndex, body: list[str], want: list[str]) -> list[WsMatch]:
    """Matches where the first quoted line is a line's tail and the last one a line's head."""
    k = len(want)
    first, last = want[0], want[-1]
    if len(first.replace(" ", "")) < MIN_FRAGMENT or len(last.replace(" ", "")) < MIN_FRAGMENT:
        return []
    matches: list[WsMatch] = []
    norms = f.normalized
    if k == 1:
        if len(_TOKEN.findall(first)) < 2:
            return []  # one word (`items`) is in many lines: it does not say which
        pattern = re.compile(_loose(first))
        for pos, text in enumerate(norms):
            if first in text:
                i = f.content[pos]
                m = pattern.search(f.lines[i])
                if m is not None:
                    matches.append(WsMatch(i, i, f.lines[i][: m.start()], f.lines[i][m.end() :]))
        return matches
    head = re.compile(_loose(first) + r"\s*$")
    tail = re.compile(r"^\s*" + _loose(last))
    middle = want[1:-1]
    for pos in range(len(norms) - k + 1):
        if not norms[pos].endswith(first) or not norms[pos + k - 1].startswith(last):
            continue
        if norms[pos + 1 : pos + k - 1] != middle:
            continue
        i, j = f.content[pos], f.content[pos + k - 1]
        mh, mt = head.search(f.lines[i]), tail.match(f.lines[j])
        if mh is None or mt is None:
            continue
        # Indentation is compared on the second quoted line: the first one is only a tail.
        second = f.content[pos + 1]
        matches.append(
            WsMatch(
                i,
                j,
                f.lines[i][: mh.start()],
                f.lines[j][mt.end() :],
                indent(f.lines[second]),
                indent(body[1]),
            )
        )
    return matches


def fuzzy(
    f: FileIndex, quote: list[str], hint: int | None, changed: Collection[int] | None = None
) -> tuple[int, int, float] | None:
    body = [line for line in quote if line.strip()]
    want = [norm(line) for line in body]
    k = len(want)
    n = len(f.normalized)
    if k > n or k > MAX_FUZZY_LINES:
        return None
    starts = _candidate_starts(f, want) | _windows_around(f, k, hint, changed)
    if not starts:
        return None
    if len(starts) > MAX_FUZZY_WINDOWS:
        # Keep the windows nearest the model's line: if the cap bites, those are the likeliest.
        h = hint - 1 if hint is not None else 0
        ordered = sorted(starts, key=lambda s: (abs(f.content[s] - h), s))
        starts = set(ordered[:MAX_FUZZY_WINDOWS])
    target = "\n".join(want)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)  # seq2 is the one SequenceMatcher indexes; reuse it across windows
    scored: list[tuple[float, int, int]] = []
    for s in sorted(starts):
        matcher.set_seq1("\n".join(f.normalized[s : s + k]))
        if matcher.real_quick_ratio() < FUZZY_THRESHOLD or matcher.quick_ratio() < FUZZY_THRESHOLD:
            continue
        ratio = matcher.ratio()
        if ratio >= FUZZY_THRESHOLD:
            scored.append((ratio, f.content[s], f.content[s + k - 1]))
    # A near-miss on the change's own lines beats one elsewhere: that is the code the model was
    # asked about and shown first.
    on_change = [s for s in scored if in_change(s[1], s[2], changed)]
    scored = on_change or scored
    if not scored:
        return None
    top = max(r for r, _, _ in scored)
    # Equal ratios are equally good text matches; only then does the model's line decide.
    best = pick(((a, b) for r, a, b in scored if r >= top - 1e-9), hint, changed)
    if best is None:
        return None
    return best[0], best[1], top


def _windows_around(
    f: FileIndex, k: int, hint: int | None, changed: Collection[int] | None
) -> set[int]:
    """Window starts (indexes into the non-blank lines) covering the lines within `NEAR_HINT`
    of the model's line and the change's lines."""
    lines: set[int] = set(changed or ())
    if hint is not None:
        lines.update(range(hint - NEAR_HINT, hint + NEAR_HINT + 1))
    n = len(f.normalized)
    starts: set[int] = set()
    for line in lines:
        pos = bisect.bisect_left(f.content, line - 1)
        if pos < n and f.content[pos] == line - 1:
            starts.update(range(max(0, pos - k + 1), min(pos, n - k) + 1))
    return starts


def _candidate_starts(f: FileIndex, want: list[str]) -> set[int]:
    """Window starts (indexes into the non-blank lines) worth scoring.

    A window is a candidate when one of the quote's lines occurs in it unchanged at the same
    offset, or when it contains one of the quote's most distinctive identifiers (the longest
    ones; that is what survives an edit to a single-line quote).
    """
    k, n = len(want), len(f.normalized)
    starts: set[int] = set()
    for j, line in enumerate(want):
        positions = f.norm_positions.get(line, [])
        if len(positions) > _COMMON_LINE:
            continue
        for pos in positions:
            if 0 <= pos - j <= n - k:
                starts.add(pos - j)
    if starts:
        return starts
    idents = sorted(set(_IDENT.findall(" ".join(want))), key=lambda s: (-len(s), s))[:3]
    for ident in idents:
        hits = [pos for pos, text in enumerate(f.normalized) if ident in text]
        if len(hits) * k > MAX_FUZZY_WINDOWS * 4:
            continue  # a word on every other line is not distinctive
        for pos in hits:
            starts.update(range(max(0, pos - k + 1), min(pos, n - k) + 1))
    return starts
