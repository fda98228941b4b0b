"""The file names in a git diff's section headers: C-quoted names (`unquote_path`), the two names
of a `diff --git` line, its prefixes (a/ b/, mnemonic c/ w/ i/ o/ ..., or none), and the names on
`--- `/`+++ ` and `rename from`/`copy to` lines. Used once per section by parse.py.
"""

from __future__ import annotations

_C_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    '"': '"',
    "\\": "\\",
}


def unquote_path(text: str) -> tuple[str, str]:
    """Read one C-quoted git path from the start of `text`: (path, the rest after it).

    Git quotes names with '"', backslash, control characters (and, unless core.quotePath is
    false, non-ASCII bytes as octal). Octal escapes are bytes of a UTF-8 name, so they are
    collected as bytes and decoded together.
    """
    assert text.startswith('"')
    out = bytearray()
    i, n = 1, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", errors="replace"), text[i + 1 :]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            octal = text[i + 1 : i + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            out += _C_ESCAPES.get(nxt, nxt).encode("utf-8", errors="replace")
            i += 2
            continue
        out += ch.encode("utf-8", errors="replace")
        i += 1
    return out.decode("utf-8", errors="replace"), ""  # unterminated: take what is there


def split_pair(text: str) -> tuple[str, str] | None:
    """The two names of a `diff --git` header, prefixes still on. None when ambiguous."""
    if text.startswith('"'):
        first, rest = unquote_path(text)
        rest = rest.lstrip(" ")
        second = unquote_path(rest)[0] if rest.startswith('"') else rest
        return first, second
    if text.endswith('"'):
        pos = text.rfind(' "')
        while pos > 0:
            second, rest = unquote_path(text[pos + 1 :])
            if rest == "":
                return text[:pos], second
            pos = text.rfind(' "', 0, pos)
        return None
    # Unquoted names may contain spaces. Without a rename both sides name the same file, so the
    # header is symmetric around its middle space (after the 2-char prefixes, if any).
    mid = len(text) // 2
    if len(text) % 2 == 1 and text[mid] == " ":
        first, second = text[:mid], text[mid + 1 :]
        if first == second or first[2:] == second[2:]:
            return first, second
    pos = text.find(" b/")
    return (text[:pos], text[pos + 1 :]) if pos > 0 else None


def strip_prefix(path: str | None, prefix: str) -> str | None:
    if path is None or path == "/dev/null":
        return None
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


def diff_prefixes(pair: tuple[str, str] | None) -> tuple[str, str]:
    """Which prefixes this diff uses: a/ b/, mnemonic (c/ w/ i/ o/ ...), or none."""
    if pair is None:
        return ("a/", "b/")
    old, new = pair
    if old.startswith("a/") and new.startswith("b/"):
        return ("a/", "b/")
    if (
        len(old) > 2
        and len(new) > 2
        and old[1] == "/"
        and new[1] == "/"
        and old[0] != new[0]
        and old[0] in "ciow12"
        and new[0] in "ciow12"
    ):
        return (old[:2], new[:2])
    return ("", "")


def marker_path(value: str) -> str:
    """The name on a `--- `/`+++ ` line: quoted, or cut at the tab git/diff may append."""
    if value.startswith('"'):
        return unquote_path(value)[0]
    return value.split("\t", 1)[0]


def plain_path(value: str) -> str:
    """A name on a `rename from`/`copy to` line: no prefix, maybe quoted."""
    return unquote_path(value)[0] if value.startswith('"') else value
