"""A small TOML writer for flat tables of scalars (no TOML-writing dependency).

What `.redline/dismissed.toml` needs (store/dismissals.py): basic strings with every escape
TOML requires, bare or quoted keys, booleans, integers, floats (nan/inf included), dates and
times, flat arrays of those, and a TOML datetime for an ISO 8601 text with a zone. Reading is
tomllib's job.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, time

Scalar = str | int | float | bool | datetime | date | time

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_datetime(value: str) -> str:
    # A TOML datetime when it is one (readable, and typed for tools), else a string.
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return toml_string(value)
    if parsed.tzinfo is None:
        return toml_string(value)
    return parsed.astimezone(UTC).isoformat().replace("+00:00", "Z")


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def toml_value(value: Scalar | list[Scalar]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return toml_string(value)


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped, the rest
    (any Unicode) written as is."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            out.append("\ufffd")  # a lone surrogate cannot be written as UTF-8
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
