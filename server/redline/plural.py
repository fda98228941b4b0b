"""Counted nouns in what a user reads: "1 finding", "2 findings", "1 round" (issue 24).

One helper for every message, so no "1 findings" or "splitting 1 files" is left to a format
string that forgot the singular.
"""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and `word`, in the plural unless `n` is 1 (`many` for an irregular plural)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"
