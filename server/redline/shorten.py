"""One-line text cut to a length at a word boundary, marked with "…".

Titles (analyzer findings, debate findings, pull requests) are read at a glance; a word cut in
half ("Possible hardcoded passw") reads as a typo, so the cut falls between words.
"""

from __future__ import annotations

ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """`text` with whitespace folded, at most `limit` characters. A longer text is cut at the
    last space that keeps at least half of it, so a single long word (a path, a URL) is cut
    inside rather than reduced to nothing."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS) + 1]
    space = head.rfind(" ")
    head = head[:space] if space >= limit // 2 else head[: limit - len(ELLIPSIS)]
    return head.rstrip(" ,;:.-—") + ELLIPSIS
