"""The security_sensitive tag: does a unit's path or changed text look security-relevant?

Each entry below is a reason a reviewer should look closer. The net is wide on purpose: the tag
only deepens context and lowers rule confidence, it never raises a finding by itself. Prose
(docs, changelogs) is not scanned at all (see units.py): a README that says "password" is not a
security change.

Speed. Every changed line of every diff is scanned, so the whole scan is ONE compiled regex run
once over the lowered text. CPython's `re` tries an alternation branch by branch at every
position, which makes a plain "a|b|c|…" of ~100 patterns ~20× slower than needed; it is fast
when (1) every top-level branch starts with a literal character, so `re` can skip positions
whose character starts no keyword, and (2) the branches form a trie, so at a position only one
branch per level gets past its first character. `_one_pattern` builds that shape: a trie of the
keywords' literal stems, each leaf followed by the rest of its pattern (a word boundary before a
keyword is written as a lookbehind after it, keeping the literal first). The few case-sensitive
patterns (SQL keywords, key formats) are in the trie in lower case; a match of one of them is
confirmed once on the original text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

_SECURITY_PATH = re.compile(
    r"auth(?!ors?\b)|login|logout|passw|secret|token(?!i[sz])|crypt|session|permission|acl\b"
    r"|oauth|saml|jwt|security|sanitiz|csrf|cors|credential|keystore|\.pem$|\.key$|\.env\b",
    re.IGNORECASE,
)
# The literal start of each _SECURITY_PATH alternative (keep in step with it).
_SECURITY_PATH_STEMS = (
    *("auth", "login", "logout", "passw", "secret", "token", "crypt", "session"),
    *("permission", "acl", "oauth", "saml", "jwt", "security", "sanitiz", "csrf", "cors"),
    *("credential", "keystore", ".pem", ".key", ".env"),
)

# A file operation whose line goes on to name user input (both on one line, operation first).
_ON_INPUT = r"[^\n]*(?:request|params|argv|input\s*\(|query|user|upload|filename)"
# A SQL statement built from strings (%-format, +, .format, f-string, template literal).
_SQL_TAIL = r"[^\n]*(?:%s|%\(|\+\s*\w|\{|\$\{|\.format\()"

# Keyword (lower case, matched in the lowered text) → what must follow it ("" when the keyword
# alone is enough). A leading "\b" means the keyword must start a word.
_KEYWORDS: dict[str, str] = {
    # credentials and secrets
    **dict.fromkeys(
        ("passw", "secret", "api_key", "apikey", "api-key", "access_key", "accesskey"), ""
    ),
    **dict.fromkeys(
        ("private_key", "privatekey", "credential", "csrf", "permission", "cookie"), ""
    ),
    "token": r"(?!i[sz])",
    "auth": r"(?!ors?\b|orship|ored)",
    "session": "",
    r"\bcors": r"\b",
    # cryptography
    **dict.fromkeys(
        ("hashlib", "hmac", "jwt", "bcrypt", "scrypt", "argon2", "crypto", "cipher", "fernet"), ""
    ),
    r"\bssl": r"\b",
    r"\btls": r"\b",
    "verify": r"\s*=\s*false",
    "random.": r"(?:random|randint|choice)\b",
    # command execution and code evaluation
    **dict.fromkeys(("subprocess", "os.system", "os.popen", "os.exec", "child_process"), ""),
    **dict.fromkeys(("execsync", "exec.command", "runtime.getruntime"), ""),
    "shell": r"\s*=\s*true",
    r"\beval": r"\s*\(",
    r"\bexec": r"\s*\(",
    ".execute": r"(?:many)?\s*\(",
    r"\bspawn": r"\s*\(",
    "new": r"\s+function\s*\(",
    # deserialization
    **dict.fromkeys(("pickle", "marshal.load", "shelve", "jsonpickle", "unserialize"), ""),
    "yaml.": r"(?:unsafe_)?load\b",
    r"\bdill": r"\b",
    # SQL through raw cursors
    "cursor": r"\s*\(",
    ".raw": r"\s*\(",
    "sqlalchemy.text": "",
    # markup injection
    **dict.fromkeys(("innerhtml", "outerhtml", "document.write", "mark_safe", "autoescape"), ""),
    "render_template_string": "",
    "|": r"\s*safe\b",
    # filesystem, permissions, network
    **dict.fromkeys(("chmod", "setuid", "mktemp", "send_file", "sendfile", "ssrf"), ""),
    "allow_origins": "",
    r"\b0": r"o?777\b",
    r"\bunsafe": r"\b",
    # file access on user input
    **dict.fromkeys(("open", "path"), r"\s*\(" + _ON_INPUT),
    **dict.fromkeys(
        ("os.path.join", "readfile", "filepath.join", "os.open", "send_from_directory"), _ON_INPUT
    ),
}
# Case-sensitive patterns, written in lower case: matched in the lowered text, then confirmed
# on the original by _CASED (SQL is conventionally upper case; key formats are exact).
_CASED_KEYWORDS: dict[str, str] = {
    r"\bselect": rf"\s[^\n]+\sfrom\b{_SQL_TAIL}",
    r"\binsert": rf"\s+into\b{_SQL_TAIL}",
    r"\bupdate": rf"\s+\w+\s+set\b{_SQL_TAIL}",
    r"\bdelete": rf"\s+from\b{_SQL_TAIL}",
    r"\bf'": r"[^\n]*\b(?:select|insert|update|delete)\b",
    r"\bf\"": r"[^\n]*\b(?:select|insert|update|delete)\b",
    "akia": r"[0-9a-z]{16}",
    "-----begin ": r"[a-z ]*private key",
    **{prefix: r"_(?:live|test)_\w{10}" for prefix in ("sk", "rk")},
    r"\bgh": r"[pousr]_[a-z0-9]{20}",
    r"\bxox": r"[abprs]-[a-z0-9-]{10}",
    "aiza": r"[0-9a-z_-]{30}",
}
_CASED = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b"
    r".*(%s|%\(|\+\s*\w|\{|\$\{|\.format\()"
    r"|\bf[\"'].*\b(SELECT|INSERT|UPDATE|DELETE)\b"
    r"|AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY|[sr]k_(live|test)_\w{10}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20}|\bxox[abprs]-[A-Za-z0-9-]{10}|AIza[0-9A-Za-z_-]{30}"
)
# What a match of a _CASED_KEYWORDS entry starts with (no other keyword starts so).
_CASED_STARTS: tuple[str, ...] = (
    *("select", "insert", "update", "delete", "f'", 'f"', "akia", "-----begin "),
    *("sk_", "rk_", "gh", "xox", "aiza"),
)


def _one_pattern(entries: Iterable[tuple[str, str]]) -> re.Pattern[str]:
    """One regex matching any `keyword + tail`, shaped as a trie of the keywords (see the
    module docstring). A keyword written with a leading "\\b" must start a word: that is
    checked by a lookbehind after its literal, so every branch still starts with a literal."""
    root: dict[str, Any] = {}
    for keyword, tail in entries:
        literal = keyword.removeprefix(r"\b")
        if literal != keyword:  # no word character just before the literal
            tail = f"(?<!\\w{re.escape(literal)})" + tail
        node = root
        for ch in literal:
            node = node.setdefault(ch, {})
        node.setdefault("", []).append(tail)

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        branches += node.get("", [])
        if len(branches) == 1:
            return branches[0]
        return "(?:" + "|".join(branches) + ")"

    return re.compile(emit(root))


_SCAN = _one_pattern([*_KEYWORDS.items(), *_CASED_KEYWORDS.items()])
_PATH_SCAN = _one_pattern((stem, "") for stem in _SECURITY_PATH_STEMS)


def security_sensitive(path: str, changed_lines: Sequence[str]) -> bool:
    """The path or changed lines look security-relevant.

    Removed lines count as much as added ones: deleting a check is a security change. Lines
    may keep their "+"/"-" diff prefix; no pattern depends on what starts a line.
    """
    return security_sensitive_text(path, "\n".join(changed_lines))


def security_sensitive_text(path: str, text: str) -> bool:
    """security_sensitive with the changed lines already joined by "\\n"."""
    if _security_path(path):
        return True
    return bool(text) and security_text(text)


def security_text(text: str) -> bool:
    """Whether the text holds a security keyword: one scan of the lowered text; a match of a
    case-sensitive pattern is confirmed on the original text (once)."""
    lowered = text.lower()
    cased: bool | None = None
    match = _SCAN.search(lowered)
    while match is not None:
        if not match.group().startswith(_CASED_STARTS):
            return True
        if cased is None:
            cased = _CASED.search(text) is not None
            if cased:
                return True
        # An unconfirmed match may span other keywords of its line: look again just after
        # its start, not after its end.
        match = _SCAN.search(lowered, match.start() + 1)
    return False


def _security_path(path: str) -> bool:
    """_SECURITY_PATH.search(path), whose alternatives re tries one by one at every position.
    An ASCII path first has its lowered form scanned for their literal stems (one trie regex):
    a case-insensitive match of a pattern contains its stem, and in ASCII text that is exactly
    an occurrence of the stem in the lowered text."""
    if path.isascii() and _PATH_SCAN.search(path.lower()) is None:
        return False
    return _SECURITY_PATH.search(path) is not None
