"""A key split across string literals: `"sk_live_" "4eC39Hq…"`, `"sk_live_" + "…"`,
`'rk_live_' . '…'` (PHP), `"ghp_" .. "…"` (Lua), `'…' || '…'` (SQL), over lines too.

No pattern sees such a key, as no piece holds it whole. Here adjacent literals joined by
juxtaposition or a concatenation operator are read as the one string they make, the provider
rules (and detect-secrets' regex plugins) run over that, and a key found across a joint masks
its part of every piece. Only runs with a joint inside a token (a letter, digit, `_` or `-` on
both sides) are read: `"Hello, " + "world"` is not a split key.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from redline.redaction.spans import Span

_LITERAL: Final = re.compile(r""""([^"\\\n]{0,512})"|'([^'\\\n]{0,512})'""")
# Between two literals: spaces, one operator, and a line break (with a `\` continuation).
_JOINT: Final = re.compile(
    r"[ \t]*(?:\\?\r?\n[ \t]*)?(?:(?:\+|\.\.?|\|\||&)[ \t]*(?:\\?\r?\n[ \t]*)?)?"
)
# Where a run may start: a quote that opens a literal followed by another literal.
_RUN_START: Final = re.compile(
    r"""(?:"[^"\\\n]{0,512}"|'[^'\\\n]{0,512}')[ \t\r\n\\+.|&]{0,16}["']"""
)
_TOKEN: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_MAX_PIECES: Final = 32

Piece = tuple[int, int]  # the content of one literal: text[start:end], quotes excluded


def runs(text: str) -> Iterator[list[Piece]]:
    """Runs of two or more adjacent literals with a joint inside a token."""
    pos = 0
    while True:
        m = _RUN_START.search(text, pos)
        if m is None:
            return
        pieces: list[Piece] = []
        at = m.start()
        while len(pieces) < _MAX_PIECES:
            lit = _LITERAL.match(text, at)
            if lit is None:
                break
            group = 1 if lit.group(1) is not None else 2
            pieces.append(lit.span(group))
            joint = _JOINT.match(text, lit.end())
            at = joint.end() if joint else lit.end()
            if at >= len(text) or text[at] not in "\"'":
                break
        pos = max(m.start() + 1, pieces[-1][1] + 1 if pieces else m.end())
        if len(pieces) > 1 and _split_inside_a_token(text, pieces):
            yield pieces


def _split_inside_a_token(text: str, pieces: list[Piece]) -> bool:
    return any(
        a_end > a_start
        and b_end > b_start
        and text[a_end - 1] in _TOKEN
        and text[b_start] in _TOKEN
        for (a_start, a_end), (b_start, b_end) in itertools.pairwise(pieces)
    )


def split_spans(text: str, scan: Callable[[str], Iterable[Span]]) -> list[Span]:
    """The detections of `scan` across the joints of every run, as spans of `text` (one per
    piece it covers). All runs are scanned in one text, one run per line."""
    found = list(runs(text))
    if not found:
        return []
    joined_parts: list[str] = []
    # For each piece: (its start in the joined text, its start and end in `text`).
    index: list[tuple[int, int, int]] = []
    joints: set[int] = set()  # positions in the joined text where two pieces meet
    offset = 0
    for pieces in found:
        for i, (start, end) in enumerate(pieces):
            if i:
                joints.add(offset)
            index.append((offset, start, end))
            joined_parts.append(text[start:end])
            offset += end - start
        joined_parts.append("\n")
        offset += 1
    joined = "".join(joined_parts)
    out: list[Span] = []
    for span in scan(joined):
        if not any(span.start < j < span.end for j in joints):
            continue  # inside one piece: the scan of `text` itself sees it
        for at, start, end in index:
            lo, hi = max(span.start, at), min(span.end, at + end - start)
            if lo < hi:
                out.append(span._replace(start=start + lo - at, end=start + hi - at))
    return out
