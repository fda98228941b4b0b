"""Control characters spelled out: the one rule every text Redline prints, writes or posts
passes through last (report.render, cli.common.write_report, the terminal report's review, the
bodies posted to a forge).

A committed file name, a branch name or a model's text may hold escape sequences: OSC 52 sets
the clipboard, CSI 2J clears the screen, a title sequence renames the window, U+009B is a
one-character CSI to terminals that honour C1, and the bidi overrides and isolates reorder what
a reader sees ("Trojan Source"). Each such character becomes the six characters `\\uXXXX`: a
reader sees that it was there, a terminal acts on none of them. Tab and newline stay; a
carriage return stays only as part of CRLF, which becomes LF (a lone CR would let text overwrite
its own line).

The same spelling is JSON's escape, and a JSON text holds raw control characters only inside
strings (its own whitespace is spaces and newlines), so on JSON this is lossless: a parser reads
back exactly the data that was rendered. Lone surrogates (undecodable bytes kept by
`surrogateescape`) are spelled out too: UTF-8 cannot write them, JSON can.
"""

from __future__ import annotations

import re

# C0 but tab and newline, DEL, C1, the bidi embeddings/overrides (U+202A–U+202E) and isolates
# (U+2066–U+2069), and lone surrogates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def escape_controls(text: str) -> str:
    """`text` with every control character written as `\\uXXXX` (CRLF read as LF)."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_spelled, text.replace("\r\n", "\n"))


def _spelled(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
