"""Identifier words for the lexical index, and a query's escaping (memory/lexical.py)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from redline.memory.lexical import (
    MAX_QUERY_WORDS,
    fts5_query,
    identifier_words,
    query_words,
    symbol_words,
)


def test_camel_and_snake_case_give_the_same_words() -> None:
    assert identifier_words("getUserName") == ["get", "user", "name"]
    assert identifier_words("get_user_name") == ["get", "user", "name"]
    assert identifier_words("HTTPServer") == ["http", "server"]
    assert identifier_words("parseJSON2") == ["parse", "json", "2"]
    assert identifier_words("überGröße") == ["über", "größe"]
    assert symbol_words("Client.sendAll") == "client send all sendall"
    assert query_words("ｓｅｎｄＡｌｌ") == ["send", "all", "sendall"]  # fullwidth, NFKC


def test_a_query_is_words_in_quotes_and_nothing_else() -> None:
    assert fts5_query('retry" OR NEAR(a b) * col:x') == (
        '"retry" OR "or" OR "near" OR "a" OR "neara" OR "b" OR "col" OR "x" OR "colx"'
    )
    assert fts5_query("(*) : ^ -") is None
    assert len(query_words("word " * 1000 + " ".join(f"w{i}" for i in range(100)))) <= (
        MAX_QUERY_WORDS
    )


# A word may hold a combining mark lowercasing made ("İ" → "i̇"), never a quote or a space.
_QUOTED = re.compile(r'"[^"\s]+"( OR "[^"\s]+")*')


@given(st.text(max_size=300))
def test_every_query_is_quoted_words_or_none(query: str) -> None:
    match = fts5_query(query)
    words = query_words(query)
    assert len(words) <= MAX_QUERY_WORDS
    if match is None:
        assert words == []
    else:
        assert _QUOTED.fullmatch(match), match
        assert all(w and w == w.lower() and re.fullmatch(r'[^"\s]+', w) for w in words)


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,30}", fullmatch=True))
def test_a_name_as_a_query_shares_a_word_with_its_symbol(name: str) -> None:
    indexed = set(symbol_words(name).split())
    asked = set(query_words(name))
    if any(c.isalnum() for c in name):
        assert indexed & asked
        assert set(identifier_words(name)) <= indexed
