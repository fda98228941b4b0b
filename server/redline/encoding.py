"""How Redline turns a file's bytes into text: UTF-8, else the encoding the file declares.

A Python file may declare its encoding in a coding line (PEP 263, `# -*- coding: latin-1 -*-`
on line 1 or 2); Emacs and Vim read the same line, and Ruby and others use the same form. A
file that is valid UTF-8 is read as UTF-8 whatever it declares, as editors do (their buffer is
the text findings are placed in); only when UTF-8 fails is the declaration used, and only when
it decodes the whole file. Everything else falls back to UTF-8 with U+FFFD for the bad bytes,
and the caller is told so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

# PEP 263's own pattern, on bytes: the name is ASCII in every encoding a cookie can name.
_COOKIE: Final = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_TEXT_COOKIE: Final = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT: Final = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")
UNDECODABLE_NOTE: Final = "not valid UTF-8: undecodable bytes shown as U+FFFD"


@dataclass(frozen=True)
class Cookie:
    """A coding line's encoding name and its line (0 or 1)."""

    name: str
    line: int


def coding_cookie(data: bytes) -> Cookie | None:
    """The coding declaration in the first two lines, as Python finds it, or None."""
    lines = data.split(b"\n", 2)[:2]
    for index, line in enumerate(lines):
        match = _COOKIE.match(line)
        if match is not None:
            return Cookie(match.group(1).decode("ascii"), index)
        # Python looks at line 2 only when line 1 is blank or a comment (a shebang, say).
        if not _BLANK_OR_COMMENT.match(line):
            return None
    return None


def declared_text(data: bytes) -> str | None:
    """data decoded in its declared encoding, or None (no coding line, an unknown or non-text
    codec, or bytes that codec cannot decode)."""
    cookie = coding_cookie(data)
    if cookie is None:
        return None
    try:
        # bytes.decode refuses non-text codecs (rot13, hex) with LookupError, like Python does.
        return data.decode(cookie.name)
    except (LookupError, UnicodeDecodeError):
        return None


def decode_text(data: bytes) -> tuple[str, str | None]:
    """(text, note): UTF-8, else the declared encoding, else UTF-8 with U+FFFD and a note."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    text = declared_text(data)
    if text is not None:
        return text, None
    return data.decode("utf-8", errors="replace"), UNDECODABLE_NOTE


def as_utf8(data: bytes) -> bytes | None:
    """The same text as UTF-8 bytes for tools that read only UTF-8 (ruff), or None when data
    needs no change (already UTF-8) or cannot be transcoded (no usable declaration).

    The coding line is rewritten to declare UTF-8, so a tool that honours it (bandit, through
    Python's parser) reads the new bytes right; the name is padded with spaces to its old length
    where it is longer, which keeps every column on that line where it was.
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return None
    text = declared_text(data)
    cookie = coding_cookie(data)
    if text is None or cookie is None:
        return None
    lines = text.split("\n")
    match = _TEXT_COOKIE.match(lines[cookie.line])
    if match is None:  # the codec decoded the ASCII cookie into something else (UTF-16, say)
        return None
    old = lines[cookie.line]
    lines[cookie.line] = (
        old[: match.start(1)] + "utf-8".ljust(len(match.group(1))) + old[match.end(1) :]
    )
    return "\n".join(lines).encode("utf-8")
