"""Lines and columns of a document as LSP counts them, for the finding tracker and the
handlers: ranges, lines split with their breaks, and columns converted between code points (the
server's) and the client's UTF-16 or UTF-8 units.

Positions are 0-based `(line, character)` with characters counted in Python str code points.
Line breaks are `\\n`, `\\r\\n` and `\\r` (as in LSP).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]
Position = tuple[int, int]

_NEWLINE = re.compile(r"\r\n|\r|\n")
LINE_BREAKS = ("\n", "\r")


@dataclass(frozen=True)
class Range:
    """An LSP-style range: 0-based lines, code-point characters, end exclusive."""

    start_line: int
    start_char: int
    end_line: int
    end_char: int

    @property
    def start(self) -> Position:
        return (self.start_line, self.start_char)

    @property
    def end(self) -> Position:
        return (self.end_line, self.end_char)


def split_keepends(text: str) -> list[str]:
    """Lines with their line breaks, plus the (possibly empty) text after the last break, so
    every LSP line number of the document — including an empty last line — has an entry."""
    parts: list[str] = []
    pos = 0
    for match in _NEWLINE.finditer(text):
        parts.append(text[pos : match.end()])
        pos = match.end()
    parts.append(text[pos:])
    return parts


def line_content(line: str) -> str:
    """A stored line without its line break."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(LINE_BREAKS):
        return line[:-1]
    return line


def from_client_units(line: str, units: int, encoding: Encoding) -> int:
    """A client column (UTF-16 or UTF-8 code units) on `line` as a code-point column; a column
    inside a character (half a surrogate pair) rounds up to the next character."""
    if units <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return min(units, len(line))
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        count += _unit_width(ch, encoding)
    return len(line)


def to_client_units(line: str, char: int, encoding: Encoding) -> int:
    """A code-point column on `line` in the client's units."""
    char = max(0, min(char, len(line)))
    if encoding == "utf-32" or line.isascii():
        return char
    return sum(_unit_width(ch, encoding) for ch in line[:char])


def _unit_width(ch: str, encoding: Encoding) -> int:
    code = ord(ch)
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 1
