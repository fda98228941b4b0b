"""JSON from a model, decoded with a bound on its nesting depth.

Python's decoder recurses once per nested array or object: an answer (or tool-call arguments)
nested 100,000 deep raises RecursionError — not a ValueError, so it escaped every "the answer
is not valid JSON" handler and ended the run with a traceback. Here the depth is measured
first by a cheap scan that never recurses (strings are skipped whole, so brackets inside them
do not count), and a value nested deeper than MAX_DEPTH is refused with `JSONTooDeep`, a
ValueError: to the callers, one more kind of invalid output.

The scan follows the decoder: it starts where the decoder would, ends where the first value
ends, and ends a string where the decoder does (at the first unescaped quote). Text the decoder
rejects anyway may be counted deeper than the decoder would go, never shallower, so a document
that passes the scan never recurses past MAX_DEPTH in the decoder.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

# Far beyond any answer or tool call Redline asks for (their schemas nest a few levels), far
# below the interpreter's recursion limit (1,000) with the decoder's own frames on top.
MAX_DEPTH: Final = 64

# A string (its closing quote optional: an unterminated one runs to the end, where the decoder
# fails) or a bracket; everything else is skipped.
_TOKEN: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_SPACE: Final = re.compile(r"[ \t\n\r]*")
_DECODER: Final = json.JSONDecoder()


class JSONTooDeep(ValueError):
    """A JSON value nested deeper than the bound."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the JSON nests deeper than {limit} levels")
        self.limit = limit


def too_deep(text: str, start: int = 0, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON value starting at `start` (after whitespace) nests deeper than
    `limit` arrays and objects. Looks no further than that value's end."""
    space = _SPACE.match(text, start)
    pos = space.end() if space else start
    if text[pos : pos + 1] not in ("[", "{"):
        return False  # a scalar: the decoder does not recurse
    depth = 0
    for m in _TOKEN.finditer(text, pos):
        ch = text[m.start()]
        if ch == '"':
            continue
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
            if depth == 0:
                return False
    return False


def raw_decode(text: str, start: int = 0, limit: int = MAX_DEPTH) -> tuple[Any, int]:
    """json.JSONDecoder().raw_decode(text, start), refusing a value nested deeper than
    `limit`: raises json.JSONDecodeError or JSONTooDeep (both ValueError), never
    RecursionError."""
    if too_deep(text, start, limit):
        raise JSONTooDeep(limit)
    return _DECODER.raw_decode(text, start)


def loads(text: str, limit: int = MAX_DEPTH) -> Any:
    """json.loads(text) with the depth bound (see raw_decode)."""
    if too_deep(text, 0, limit):
        raise JSONTooDeep(limit)
    return json.loads(text)


__all__ = ["MAX_DEPTH", "JSONTooDeep", "loads", "raw_decode", "too_deep"]
