"""Words for the lexical index, shared by both stores (SQLite FTS5, PostgreSQL tsvector).

A symbol is indexed by the words of its identifier (`getUserName` and `get_user_name` both give
get, user, name) plus the whole name run together (`getusername`), so a query finds it by a part
of a camelCase or snake_case name as well as by the name itself. A query is split the same way:
"UserName" finds `getUserName` through user and name.

A query is text from a user or a model. It never reaches the index's query language as written:
it is cut into words of letters and digits, each quoted (FTS5) or passed as a lexeme
(PostgreSQL), so no query is a syntax error or changes what is asked (no `NEAR`, `*`, column
filters or `OR` from the text itself).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final

MAX_QUERY_WORDS: Final = (
    32  # a longer query (a pasted function) is cut: bm25 over 32 words is plenty
)
MAX_WORD_CHARS: Final = 64

# Letters and digits, Unicode-wide: `_`, punctuation and spaces separate words.
_RUN: Final = re.compile(r"[^\W_]+")


def identifier_words(name: str) -> list[str]:
    """The lowercase words of an identifier (or of any text), in order, each once."""
    out: list[str] = []
    seen: set[str] = set()
    for run in _RUN.findall(unicodedata.normalize("NFKC", name)):
        for part in _camel_parts(run):
            word = part.lower()[:MAX_WORD_CHARS]
            if word not in seen:
                seen.add(word)
                out.append(word)
    return out


def whole_name(name: str) -> str:
    """The identifier's letters and digits run together, lowercase: `get_user` → getuser."""
    return "".join(_RUN.findall(unicodedata.normalize("NFKC", name))).lower()[:MAX_WORD_CHARS]


def symbol_words(qualname: str) -> str:
    """The text indexed as a symbol's identifier words: every segment's words, and each
    segment's whole name (`Client.sendAll` → client send all sendall)."""
    words: list[str] = []
    for segment in qualname.split("."):
        words += identifier_words(segment)
        whole = whole_name(segment)
        if whole:
            words.append(whole)
    return " ".join(_unique(words))


def query_words(query: str) -> list[str]:
    """A query's words as the index spells them: each identifier's words and its whole name,
    at most MAX_QUERY_WORDS. Both sides are NFKC-normalised (a fullwidth `ｓｅｎｄ` is `send`)."""
    words: list[str] = []
    for token in unicodedata.normalize("NFKC", query).split():
        words += identifier_words(token)
        whole = whole_name(token)
        if whole:
            words.append(whole)
    return _unique(words)[:MAX_QUERY_WORDS]


def fts5_query(query: str) -> str | None:
    """An FTS5 MATCH expression for a user's query: its words quoted, joined by OR (bm25 ranks
    a symbol matching more of them higher). None when the query has no word."""
    words = query_words(query)
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def _camel_parts(run: str) -> list[str]:
    """A run of letters and digits cut where its case or kind changes, Unicode-wide:
    "HTTPServer" → HTTP, Server; "parseJSON2" → parse, JSON, 2; "überGröße" → über, Größe."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(run)):
        prev, c = run[i - 1], run[i]
        nxt = run[i + 1] if i + 1 < len(run) else ""
        if (
            (c.isdigit() != prev.isdigit())
            or (c.isupper() and not prev.isupper())
            or (c.isupper() and prev.isupper() and nxt.islower())
        ):
            parts.append(run[start:i])
            start = i
    parts.append(run[start:])
    return parts


def _unique(words: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(w for w in words if w))
