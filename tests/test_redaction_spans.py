"""The span arithmetic of redaction/spans.py, each boundary asserted exactly: a masked span is
the secret, not one character more or less, and a line set maps back to the very characters it
was cut from. Plus a property over the whole redactor: a key planted anywhere in ordinary text
comes out as exactly one placeholder where the key was, everything else unchanged.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from redline.redaction import Redactor
from redline.redaction.rule import CONTEXT, ENTROPY, KEYWORD, PROVIDER
from redline.redaction.spans import (
    LineSet,
    Span,
    covered,
    inside,
    line_of,
    merge,
    split_at,
    subtract,
    trim,
    word_bounded,
)


def S(start: int, end: int, kind: str = "k", rank: int = PROVIDER) -> Span:
    return Span(start, end, kind, rank)


# -- covered / inside / word_bounded -------------------------------------------------------------


def test_covered_means_a_non_empty_span_starting_within_sixteen_characters() -> None:
    assert covered([S(10, 12)], 10)  # at the position
    assert covered([S(26, 30)], 10)  # sixteen after: still the key's material
    assert not covered([S(27, 30)], 10)  # seventeen after
    assert not covered([S(9, 30)], 10)  # started before
    assert not covered([S(12, 12)], 10)  # empty
    assert not covered([], 0)


def test_inside_is_half_open() -> None:
    protected = [(5, 8)]
    assert [p for p in range(10) if inside(protected, p)] == [5, 6, 7]


def test_word_bounded_looks_at_the_characters_just_outside() -> None:
    text = "ab key12 cd"
    assert word_bounded(text, 3, 8)  # "key12" between spaces
    assert not word_bounded(text, 4, 8)  # "ey12": a letter before
    assert not word_bounded(text, 3, 7)  # "key1": a digit after
    assert word_bounded("key", 0, 3)  # the text's own ends bound it
    assert word_bounded("-x-", 1, 2)
    assert word_bounded("a-b", 1, 2)  # a span of punctuation is bounded whatever touches it


# -- trim ----------------------------------------------------------------------------------------


def test_trim_removes_exactly_the_surrounding_whitespace() -> None:
    text = "  \tsecret \n"
    assert trim(text, [S(0, len(text))]) == [S(3, 9)]
    assert trim(text, [S(3, 9)]) == [S(3, 9)]  # nothing to trim
    assert trim("   ", [S(0, 3)]) == []  # all whitespace: no span left
    assert trim("a b", [S(1, 2)]) == []
    assert trim("ab", [S(0, 1), S(1, 2)]) == [S(0, 1), S(1, 2)]  # one character each
    for n in range(1, 4):  # one whitespace character at a time, not more
        assert trim("ab" + " " * n, [S(0, 2 + n)]) == [S(0, 2)]
        assert trim(" " * n + "ab", [S(0, 2 + n)]) == [S(n, 2 + n)]


# -- subtract ------------------------------------------------------------------------------------


def test_subtract_cuts_placeholders_out_and_keeps_pieces_of_two_or_more() -> None:
    assert subtract([S(0, 10)], []) == [S(0, 10)]
    assert subtract([S(0, 1)], []) == [S(0, 1)]  # nothing to subtract: even one character stays
    assert subtract([], [(0, 5)]) == []
    assert subtract([S(0, 10)], [(4, 6)]) == [S(0, 4), S(6, 10)]
    assert subtract([S(0, 10)], [(1, 9)]) == []  # pieces of one character are dropped
    assert subtract([S(0, 10)], [(2, 8)]) == [S(0, 2), S(8, 10)]  # two characters stay
    assert subtract([S(0, 10)], [(0, 10)]) == []
    # A placeholder that only touches the span leaves it whole.
    assert subtract([S(5, 10)], [(0, 5), (10, 12)]) == [S(5, 10)]
    assert subtract([S(5, 10)], [(0, 6)]) == [S(6, 10)]
    assert subtract([S(5, 10)], [(9, 12)]) == [S(5, 9)]
    assert subtract([S(0, 20)], [(3, 5), (10, 12)]) == [S(0, 3), S(5, 10), S(12, 20)]


# -- merge ---------------------------------------------------------------------------------------


def test_merge_joins_overlaps_but_not_neighbours() -> None:
    assert merge([]) == []
    assert merge([S(5, 9), S(0, 5)]) == [S(0, 5), S(5, 9)]  # touching: two spans, sorted
    assert merge([S(0, 6), S(5, 9)]) == [S(0, 9)]  # one character in common: one span
    assert merge([S(0, 9), S(2, 4)]) == [S(0, 9)]


def test_merge_keeps_the_most_specific_kind_then_the_longest_then_the_first() -> None:
    a = S(0, 8, "keyword", KEYWORD)
    b = S(2, 10, "provider", PROVIDER)
    assert merge([a, b]) == [Span(0, 10, "provider", PROVIDER)]
    longer = S(0, 10, "long", CONTEXT)
    shorter = S(1, 5, "short", CONTEXT)
    assert merge([shorter, longer]) == [Span(0, 10, "long", CONTEXT)]
    first = S(0, 5, "first", CONTEXT)
    second = S(1, 6, "second", CONTEXT)  # as long, and as specific
    assert merge([second, first]) == [Span(0, 6, "first", CONTEXT)]


def test_a_random_string_gives_way_to_the_specific_secret_it_holds() -> None:
    blob = S(0, 30, "high-entropy-string", ENTROPY)
    inner = S(10, 30, "token", KEYWORD)
    assert merge([blob, inner]) == [inner]  # the name before the token stays readable
    crossing = S(20, 40, "token", KEYWORD)  # not held: the blob stays, joined with it
    assert merge([blob, crossing]) == [Span(0, 40, "token", KEYWORD)]
    alone = S(50, 60, "high-entropy-string", ENTROPY)
    assert merge([alone, inner]) == [inner, alone]


# -- split_at ------------------------------------------------------------------------------------


def test_split_at_cuts_a_span_at_each_separator() -> None:
    text = "aa|bb|cc"
    assert split_at(text, [S(0, 8)], "|") == [S(0, 2), S(3, 5), S(6, 8)]
    assert split_at(text, [S(2, 6)], "|") == [S(3, 5)]  # separators at both ends
    assert split_at(text, [S(0, 2)], "|") == [S(0, 2)]
    assert split_at("a||b", [S(0, 4)], "|") == [S(0, 1), S(3, 4)]
    assert split_at("ab<>cd", [S(0, 6)], "<>") == [S(0, 2), S(4, 6)]


# -- line_of -------------------------------------------------------------------------------------


def test_line_of_is_the_line_cut_1024_characters_beyond_the_match() -> None:
    text = "first\nsecond line here\nthird"
    start = text.index("line")
    assert line_of(text, start, start + 4) == "second line here"
    assert line_of(text, 0, 5) == "first"
    assert line_of(text, len(text) - 5, len(text)) == "third"
    long = "x" * 3000 + "KEY" + "y" * 3000
    at = long.index("KEY")
    assert line_of(long, at, at + 3) == "x" * 1024 + "KEY" + "y" * 1024
    near = "a\n" + "x" * 10 + "KEY" + "y" * 10 + "\nb"
    at = near.index("KEY")
    assert line_of(near, at, at + 3) == "x" * 10 + "KEY" + "y" * 10


# -- LineSet -------------------------------------------------------------------------------------

GATE = re.compile(r"key")


def test_a_line_set_holds_the_gated_lines_and_maps_spans_back() -> None:
    text = "one\ntwo key=abc\nthree\nkey four\n"
    lines = LineSet.select(text, GATE)
    assert lines is not None
    assert lines.text == "two key=abc\nkey four"
    assert list(lines.lines()) == [(4, "two key=abc"), (22, "key four")]
    at = lines.text.index("abc")
    [span] = lines.map([S(at, at + 3)])
    assert text[span.start : span.end] == "abc"
    at = lines.text.index("four")
    [span] = lines.map([S(at, at + 4)])
    assert text[span.start : span.end] == "four"


def test_a_mapped_span_is_cut_at_its_lines_end() -> None:
    text = "key=abcdef\nother key\n"
    lines = LineSet.select(text, GATE)
    assert lines is not None
    start = lines.text.index("abc")
    [span] = lines.map([S(start, len(lines.text))])  # runs over the joint into the next line
    assert text[span.start : span.end] == "abcdef"
    assert lines.map([S(10, 11)]) == []  # the joint itself holds nothing


def test_no_gated_line_is_no_line_set() -> None:
    assert LineSet.select("nothing here\n", GATE) is None
    assert LineSet.select("", GATE) is None


def test_a_long_line_gives_windows_around_each_match() -> None:
    pad = "z" * 3000
    text = pad + "key1" + pad + "key2" + "z" * 100 + "key3" + pad
    lines = LineSet.select(text, GATE)
    assert lines is not None
    ranges = [(o, o + len(t)) for o, t in lines.lines()]
    first = text.index("key1")
    second, third = text.index("key2"), text.index("key3")
    # 256 characters each side; the second and third windows overlap and are one.
    assert ranges == [(first - 256, first + 3 + 256), (second - 256, third + 3 + 256)]
    for origin, piece in lines.lines():
        assert text[origin : origin + len(piece)] == piece


def test_windows_that_touch_are_one_window() -> None:
    # The first window ends 256 after its match; the second starts 256 before its own: when the
    # two meet exactly, a secret across the meeting point must not be cut by a joint.
    first = 3000
    second = first + 3 + 256 + 256
    text = "z" * first + "key" + "z" * (second - first - 3) + "key" + "z" * 3000
    lines = LineSet.select(text, GATE)
    assert lines is not None
    assert [(o, o + len(t)) for o, t in lines.lines()] == [(first - 256, second + 3 + 256)]
    apart = "z" * first + "key" + "z" * (second - first - 2) + "key" + "z" * 3000
    lines = LineSet.select(apart, GATE)
    assert lines is not None
    assert len(list(lines.lines())) == 2  # one character between them: two windows


def test_a_line_of_exactly_the_limit_is_kept_whole() -> None:
    whole = "key" + "z" * (2048 - 3)
    lines = LineSet.select(whole + "\n" + whole + "x", GATE)
    assert lines is not None
    # The first line (2,048 characters) whole; the second (2,049) a window from its start
    # (no 256 characters before the match) to 256 after it.
    assert [len(t) for _, t in lines.lines()] == [2048, 3 + 256]


def test_lower_casing_that_changes_lengths_falls_back_to_a_case_blind_gate() -> None:
    text = "İİ\nKEY=abc\n"  # "İ".lower() is two characters: offsets would shift
    lines = LineSet.select(text, GATE, lower=True)
    assert lines is not None
    assert list(lines.lines()) == [(3, "KEY=abc")]
    shifted = "İ" * 10 + "\nabc\nKEY=1\n" + "z" * 16 + "\n"  # ten characters of shift
    lines = LineSet.select(shifted, GATE, lower=True)
    assert lines is not None
    assert list(lines.lines()) == [(15, "KEY=1")]


# -- the whole redactor: a planted key is masked exactly -------------------------------------------

WORDS = ["alpha", "beta", "gamma", "delta", "value", "the", "of", "run", "x", "y"]
GAPS = [" ", "\n", ", ", "; ", " (", ") ", " = ", ": ", "\t"]
ordinary = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(GAPS)), max_size=8).map(
    lambda parts: "".join(w + g for w, g in parts)
)
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
body = st.text(ALNUM, min_size=36, max_size=36).filter(
    lambda v: (
        any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v)
    )
)
KEYS = st.one_of(
    body.map(lambda b: ("ghp_" + b, "github-token")),
    body.map(lambda b: ("sk_live_" + b[:24], "stripe-key")),
    body.map(lambda b: ("glpat-" + b[:20], "gitlab-token")),
    st.text("0123456789abcdef", min_size=32, max_size=32)
    .filter(lambda v: len(set(v)) > 8)
    .map(lambda h: ("shpat_" + h, "shopify-token")),
)


@settings(max_examples=60, deadline=None)
@given(ordinary, KEYS, ordinary)
def test_a_planted_key_becomes_exactly_one_placeholder(
    before: str, key: tuple[str, str], after: str
) -> None:
    value, kind = key
    text = f"{before} {value} {after}"
    r = Redactor(key=b"s" * 32, environment=False)
    assert r.redact(text) == f"{before} {r.placeholder(value, kind)} {after}"
