"""The span arithmetic of the redactor (redline.redaction.spans), rule by rule.

Each test states one rule a mutant of spans.py broke: where a mask starts and ends, what is
left of a detection next to a placeholder already in the text, which of two overlapping
detections names the placeholder, where texts scanned together are cut apart, when a known
secret counts as a whole word, and which lines (or windows of a long line) the keyword gate
hands to the gated rules, mapped back to the right place. Run by `make mutation` for spans.py
(scripts/mutation.toml).
"""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from redline.redaction import Redactor
from redline.redaction.rule import ENTROPY, KEYWORD, KEYWORD_GATE, PROVIDER
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

KEY = b"k" * 32
GHP = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"


def S(start: int, end: int, kind: str = "k", rank: int = PROVIDER) -> Span:
    return Span(start, end, kind, rank)


def _redactor() -> Redactor:
    return Redactor(key=KEY, environment=False)


# -- covered: is a key header's material already masked? ------------------------------------------


def test_covered_counts_a_span_starting_within_sixteen_characters_after_the_position() -> None:
    assert covered([S(10, 20)], 10)  # starts right at the header's end
    assert covered([S(26, 40)], 10)  # 16 characters on: still the header's material
    assert not covered([S(27, 40)], 10)  # further on: another span
    assert not covered([S(9, 40)], 10)  # started before the header ended
    assert not covered([S(12, 12)], 10)  # an empty span masks nothing
    assert not covered([], 10)


def test_covered_needs_only_one_of_the_spans() -> None:
    assert covered([S(0, 5), S(50, 60), S(12, 20)], 10)


# -- trim: a mask never covers the whitespace around a secret -------------------------------------


def test_trim_drops_leading_and_trailing_whitespace_of_a_span() -> None:
    assert trim("a  key  b", [S(1, 8, "t", 2)]) == [S(3, 6, "t", 2)]
    assert trim("\tkey\n", [S(0, 5)]) == [S(1, 4)]


def test_trim_keeps_a_span_without_whitespace_unchanged() -> None:
    assert trim("abc", [S(0, 3)]) == [S(0, 3)]
    assert trim("a b", [S(0, 3)]) == [S(0, 3)]  # inner whitespace stays masked


def test_trim_drops_a_span_of_whitespace_only_even_at_the_end_of_the_text() -> None:
    assert trim("ab   ", [S(2, 5)]) == []
    assert trim("   ", [S(0, 3), S(1, 2)]) == []
    assert trim("x y", [S(1, 2), S(0, 1), S(2, 3)]) == [S(0, 1), S(2, 3)]


def test_a_secret_quoted_with_spaces_is_masked_without_the_spaces() -> None:
    out = _redactor().redact('x = "  sk_live_aB3dE5fG7hI9jK1lM3  "')
    assert out.startswith('x = "  [REDACTED:stripe-key:') and out.endswith(']  "')


# -- subtract: a placeholder already in the text is never masked again ----------------------------


def test_subtract_leaves_spans_alone_when_nothing_is_protected() -> None:
    assert subtract([S(0, 1)], []) == [S(0, 1)]  # even a one-character span
    assert subtract([], [(0, 5)]) == []


def test_subtract_cuts_a_placeholder_out_of_the_middle_of_a_span() -> None:
    assert subtract([S(0, 20, "t", 1)], [(5, 10)]) == [S(0, 5, "t", 1), S(10, 20, "t", 1)]


def test_subtract_cuts_a_placeholder_off_either_end_of_a_span() -> None:
    assert subtract([S(3, 12)], [(0, 5)]) == [S(5, 12)]
    assert subtract([S(0, 10)], [(8, 15)]) == [S(0, 8)]
    assert subtract([S(4, 8)], [(0, 20)]) == []  # wholly inside a placeholder


def test_subtract_ignores_placeholders_that_only_touch_the_span() -> None:
    assert subtract([S(5, 10)], [(0, 5), (10, 12)]) == [S(5, 10)]
    assert subtract([S(5, 10)], [(20, 30)]) == [S(5, 10)]


def test_subtract_cuts_out_every_placeholder_inside_a_span() -> None:
    assert subtract([S(0, 30)], [(5, 10), (15, 20)]) == [S(0, 5), S(10, 15), S(20, 30)]


def test_subtract_keeps_every_span_it_is_given() -> None:
    spans = [S(0, 5, "a"), S(10, 20, "b"), S(30, 40, "c")]
    assert subtract(spans, [(12, 14)]) == [
        S(0, 5, "a"),
        S(10, 12, "b"),
        S(14, 20, "b"),
        S(30, 40, "c"),
    ]


def test_subtract_keeps_pieces_of_two_characters_and_drops_single_characters() -> None:
    assert subtract([S(0, 12)], [(2, 11)]) == [S(0, 2)]
    assert subtract([S(0, 12)], [(1, 10)]) == [S(10, 12)]


def test_a_placeholder_in_the_text_is_not_masked_inside_a_larger_detection() -> None:
    r = _redactor()
    once = r.redact(f'token = "{GHP}"')
    assert r.redact(once) == once


def test_secrets_around_a_placeholder_are_all_masked() -> None:
    r = _redactor()
    other = "ghp_" + "Zz9" * 12
    text = f"{GHP} [REDACTED:x:0a1b2c] {other}"
    out = r.redact(text)
    assert GHP not in out and other not in out and "[REDACTED:x:0a1b2c]" in out


# -- merge: overlapping detections become one span, named by the most specific -------------------


def test_merge_of_nothing_is_nothing() -> None:
    assert merge([]) == []


def test_merge_joins_overlapping_spans_into_their_union() -> None:
    assert merge([S(5, 15, "b"), S(0, 10, "a")]) == [S(0, 15, "a")]
    assert merge([S(0, 20, "a"), S(5, 10, "a")]) == [S(0, 20, "a")]


def test_merge_keeps_adjacent_spans_apart() -> None:
    assert merge([S(0, 5, "a"), S(5, 10, "b")]) == [S(0, 5, "a"), S(5, 10, "b")]
    assert merge([S(20, 30), S(0, 5), S(10, 15)]) == [S(0, 5), S(10, 15), S(20, 30)]


def test_merge_names_the_union_after_the_lowest_rank() -> None:
    assert merge([S(0, 20, "keyword", KEYWORD), S(5, 10, "provider", PROVIDER)]) == [
        S(0, 20, "provider", PROVIDER)
    ]
    assert merge([S(0, 10, "provider", PROVIDER), S(5, 20, "keyword", KEYWORD)]) == [
        S(0, 20, "provider", PROVIDER)
    ]


def test_merge_of_equal_ranks_names_the_union_after_the_longer_span() -> None:
    assert merge([S(0, 10, "a", 1), S(5, 25, "b", 1)]) == [S(0, 25, "b", 1)]
    assert merge([S(0, 25, "b", 1), S(5, 10, "a", 1)]) == [S(0, 25, "b", 1)]


def test_merge_of_equal_ranks_and_lengths_names_the_union_after_the_first() -> None:
    assert merge([S(5, 15, "b", 1), S(0, 10, "a", 1)]) == [S(0, 15, "a", 1)]


def test_merge_carries_the_kind_through_a_chain_of_overlaps() -> None:
    spans = [S(0, 10, "e", ENTROPY), S(8, 30, "p", PROVIDER), S(25, 40, "k", KEYWORD)]
    assert merge(spans) == [S(0, 40, "p", PROVIDER)]


def test_a_random_looking_string_gives_way_to_a_detection_it_holds() -> None:
    # "API_TOKEN=<token>": the entropy span ends where the token ends; the name stays readable.
    assert merge([S(0, 40, "high-entropy", ENTROPY), S(10, 40, "token", KEYWORD)]) == [
        S(10, 40, "token", KEYWORD)
    ]
    assert merge([S(0, 40, "high-entropy", ENTROPY), S(5, 20, "token", KEYWORD)]) == [
        S(5, 20, "token", KEYWORD)
    ]


def test_a_random_looking_string_is_held_by_a_detection_found_after_others() -> None:
    # The first specific span from the entropy span's start runs past its end; the next one
    # inside it still counts.
    spans = [
        S(0, 5, "a", KEYWORD),
        S(10, 40, "high-entropy", ENTROPY),
        S(12, 50, "b", KEYWORD),
        S(20, 30, "c", KEYWORD),
    ]
    assert merge(spans) == [S(0, 5, "a", KEYWORD), S(12, 50, "b", KEYWORD)]


def test_a_random_looking_string_that_only_overlaps_a_detection_stays_masked() -> None:
    assert merge([S(0, 20, "high-entropy", ENTROPY), S(15, 30, "token", KEYWORD)]) == [
        S(0, 30, "token", KEYWORD)
    ]
    # A detection that starts before the entropy span is not held by it either.
    assert merge([S(10, 40, "high-entropy", ENTROPY), S(5, 20, "token", KEYWORD)]) == [
        S(5, 40, "token", KEYWORD)
    ]


def test_random_looking_strings_alone_merge_as_they_are() -> None:
    spans = [S(0, 40, "e1", ENTROPY), S(10, 20, "e2", ENTROPY), S(50, 60, "e3", ENTROPY)]
    assert merge(spans) == [S(0, 40, "e1", ENTROPY), S(50, 60, "e3", ENTROPY)]
    assert merge([S(0, 40, "e", ENTROPY), S(50, 60, "p", PROVIDER)]) == [
        S(0, 40, "e", ENTROPY),
        S(50, 60, "p", PROVIDER),
    ]


def test_the_name_before_a_token_in_a_quoted_string_stays_readable() -> None:
    out = _redactor().redact(f'x = "API_TOKEN={GHP}"')
    assert out.startswith('x = "API_TOKEN=[REDACTED:github-token:') and GHP not in out


# -- split_at: texts scanned together are cut apart at the separator ------------------------------


def test_split_at_cuts_a_span_at_every_separator_inside_it() -> None:
    assert split_at("ab|cd", [S(0, 5, "t", 1)], "|") == [S(0, 2, "t", 1), S(3, 5, "t", 1)]
    assert split_at("ab<>cd<>ef", [S(0, 10)], "<>") == [S(0, 2), S(4, 6), S(8, 10)]


def test_split_at_leaves_no_empty_piece_at_a_separator_on_an_edge_or_twice() -> None:
    assert split_at("|abc", [S(0, 4)], "|") == [S(1, 4)]
    assert split_at("abc|", [S(0, 4)], "|") == [S(0, 3)]
    assert split_at("ab||cd", [S(0, 6)], "|") == [S(0, 2), S(4, 6)]


def test_split_at_ignores_separators_outside_the_span() -> None:
    assert split_at("abc|def", [S(0, 3)], "|") == [S(0, 3)]
    assert split_at("abc|def|", [S(4, 7)], "|") == [S(4, 7)]
    assert split_at("a|bcd|ef", [S(2, 5)], "|") == [S(2, 5)]


# -- word_bounded: a known secret found again only as a whole word -------------------------------


def test_word_bounded_accepts_a_value_standing_alone() -> None:
    assert word_bounded("abc", 0, 3)
    assert word_bounded(" abc ", 1, 4)
    assert word_bounded("abc def", 0, 3)  # at the start: the text's last letter is no neighbour
    assert word_bounded("x abc", 2, 5)  # at the end of the text


def test_word_bounded_refuses_a_value_inside_a_longer_word() -> None:
    assert not word_bounded("xabc", 1, 4)
    assert not word_bounded("abcx", 0, 3)
    assert not word_bounded("xabcx", 1, 4)


def test_word_bounded_accepts_punctuation_edges_next_to_letters() -> None:
    assert word_bounded("x-abc", 1, 5)  # the value starts with "-"
    assert word_bounded("abc-x", 0, 4)  # the value ends with "-"


def test_a_known_secret_is_not_masked_inside_a_longer_word() -> None:
    r = _redactor()
    secret = "Zq8sK2vN4wX6"
    r.register(secret)
    assert r.redact(f"id{secret}x and {secret}x") == f"id{secret}x and {secret}x"
    assert secret not in r.redact(f"id {secret}.")


# -- inside ---------------------------------------------------------------------------------------


def test_inside_is_half_open() -> None:
    assert inside([(5, 10)], 5)
    assert inside([(5, 10)], 9)
    assert not inside([(5, 10)], 10)
    assert not inside([(5, 10)], 4)
    assert inside([(0, 2), (5, 10)], 7)
    assert not inside([], 0)


# -- LineSet: the keyword gate's lines, and back -------------------------------------------------


def test_the_gate_selects_exactly_the_lines_naming_a_keyword() -> None:
    text = "a = 1\nmy password here\nb = 2\ntoken x"
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    assert lines is not None
    assert lines.text == "my password here\ntoken x"
    assert list(lines.lines()) == [(6, "my password here"), (29, "token x")]


def test_the_gate_selects_a_line_after_a_newline_that_starts_the_text() -> None:
    lines = LineSet.select("\ntoken x", KEYWORD_GATE, lower=True)
    assert lines is not None and list(lines.lines()) == [(1, "token x")]


def test_the_gate_selects_nothing_from_a_text_without_a_keyword() -> None:
    assert LineSet.select("a = 1\nb = 2\n", KEYWORD_GATE, lower=True) is None


def test_the_gate_selects_each_line_once_however_many_keywords_it_names() -> None:
    text = "password token secret\ntoken\nx"
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    assert lines is not None
    assert list(lines.lines()) == [(0, "password token secret"), (22, "token")]


def test_the_gate_reads_upper_case_keywords_only_when_asked_to_lower_case() -> None:
    assert LineSet.select("PASSWORD=x", KEYWORD_GATE) is None
    lines = LineSet.select("PASSWORD=x", KEYWORD_GATE, lower=True)
    assert lines is not None and lines.text == "PASSWORD=x"


def test_the_gate_keeps_positions_when_lower_casing_changes_the_length() -> None:
    # "İ".lower() is two characters: positions in the lower-cased text would be shifted.
    text = "İİİİ\nPASSWORD = 1\nplain\nTOKEN=2"
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    assert lines is not None
    assert list(lines.lines()) == [(5, "PASSWORD = 1"), (24, "TOKEN=2")]


def test_a_secret_after_a_length_changing_character_is_masked_exactly() -> None:
    out = _redactor().redact('İİİİ = 1\nDB_PASSWORD = "hunter2-fake"\n')
    assert out.startswith('İİİİ = 1\nDB_PASSWORD = "[REDACTED:password:')
    assert out.endswith(']"\n') and "hunter2" not in out


def test_a_line_of_exactly_2048_characters_is_selected_whole() -> None:
    line = "token " + "a" * 2042
    lines = LineSet.select("x\n" + line + "\ny", KEYWORD_GATE, lower=True)
    assert lines is not None and list(lines.lines()) == [(2, line)]


def test_a_longer_line_is_selected_256_characters_either_side_of_each_keyword() -> None:
    line = "a" * 1000 + "token" + "b" * 1000 + "token" + "c" * 1000
    lines = LineSet.select("x\n" + line, KEYWORD_GATE, lower=True)
    assert lines is not None
    first = 2 + 1000 - 256
    second = 2 + 2005 - 256
    assert list(lines.lines()) == [
        (first, line[1000 - 256 : 1005 + 256]),
        (second, line[2005 - 256 : 2010 + 256]),
    ]


def test_windows_of_a_long_line_stop_at_the_line_ends() -> None:
    line = "token" + "a" * 3000 + "token"
    text = "x\n" + line + "\ny"
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    assert lines is not None
    assert list(lines.lines()) == [(2, line[: 5 + 256]), (2 + len(line) - 261, line[-261:])]


def test_touching_windows_of_a_long_line_become_one() -> None:
    # The second window starts exactly where the first ends: one range, not two.
    line = "a" * 1000 + "token" + "b" * 512 + "token" + "c" * 1000
    lines = LineSet.select(line, KEYWORD_GATE, lower=True)
    assert lines is not None
    assert list(lines.lines()) == [(1000 - 256, line[1000 - 256 : 1522 + 256])]


def test_keywords_next_to_each_other_on_a_long_line_each_get_a_window() -> None:
    line = "a" * 1500 + "tokentoken" + "c" * 1500
    lines = LineSet.select(line, KEYWORD_GATE, lower=True)
    assert lines is not None
    assert list(lines.lines()) == [(1244, line[1244 : 1510 + 256])]


def test_lines_after_a_long_line_are_still_selected() -> None:
    text = "token" + "a" * 3000 + "\nplain\ntoken two"
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    assert lines is not None
    assert list(lines.lines())[-1] == (3012, "token two")


def test_map_puts_a_span_back_on_its_line_in_the_original_text() -> None:
    text = "a = 1\nmy password here\nb = 2\ntoken x\npass y"
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    assert lines is not None
    assert lines.text == "my password here\ntoken x\npass y"
    word = lines.text.index("password")
    assert lines.map([S(word, word + 8)]) == [S(text.index("password"), text.index("password") + 8)]
    # A span that starts a selected line, on the second and the third line.
    assert lines.map([S(17, 22, "t", 1)]) == [S(29, 34, "t", 1)]
    assert lines.map([S(25, 29)]) == [S(37, 41)]
    assert lines.map([S(0, 2)]) == [S(6, 8)]


def test_map_cuts_a_span_at_the_end_of_its_line() -> None:
    text = "a = 1\nmy password here\nb = 2\ntoken x"
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    assert lines is not None
    # From "here" across the joint into the next selected line: only "here" is the line's.
    start = lines.text.index("here")
    assert lines.map([S(start, start + 10)]) == [S(text.index("here"), text.index("here") + 4)]


def test_map_drops_a_span_that_starts_at_the_joint_between_lines() -> None:
    lines = LineSet.select("password\ntoken", KEYWORD_GATE, lower=True)
    assert lines is not None
    assert lines.map([S(8, 12)]) == []


# -- properties -----------------------------------------------------------------------------------

_spans = st.lists(
    st.builds(
        lambda a, n, k, r: S(a, a + n, k, r),
        st.integers(0, 60),
        st.integers(1, 20),
        st.sampled_from("abc"),
        st.sampled_from((PROVIDER, KEYWORD, ENTROPY)),
    ),
    max_size=8,
)


def _cells(spans: list[Span]) -> set[int]:
    return {i for s in spans for i in range(s.start, s.end)}


@settings(max_examples=200, deadline=None)
@given(_spans)
def test_merged_spans_are_sorted_apart_and_never_mask_less_than_a_specific_detection(
    spans: list[Span],
) -> None:
    out = merge(spans)
    assert all(a.end <= b.start for a, b in itertools.pairwise(out))
    assert _cells([s for s in spans if s.rank < ENTROPY]) <= _cells(out) <= _cells(spans)


@settings(max_examples=200, deadline=None)
@given(_spans, st.lists(st.tuples(st.integers(0, 80), st.integers(1, 12)), max_size=4))
def test_subtracted_spans_never_touch_a_placeholder(
    spans: list[Span], holes: list[tuple[int, int]]
) -> None:
    protected = [(a, a + n) for a, n in holes]
    out = subtract(spans, protected)
    assert not _cells(out) & {i for a, b in protected for i in range(a, b)}
    assert _cells(out) <= _cells(spans)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab|", max_size=40), st.data())
def test_split_pieces_hold_no_separator_and_all_the_rest(text: str, data: st.DataObject) -> None:
    if not text:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    out = split_at(text, [S(start, end)], "|")
    assert all("|" not in text[s.start : s.end] and s.end > s.start for s in out)
    assert _cells(out) == {i for i in range(start, end) if text[i] != "|"}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["plain", "token x", "Pass", "", "key=1", "İx"]), max_size=8))
def test_selected_lines_are_the_lines_the_gate_matches(rows: list[str]) -> None:
    text = "\n".join(rows)
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    starts = [sum(len(r) + 1 for r in rows[:i]) for i in range(len(rows))]
    gated = [re.search("key|pass|token", r, re.IGNORECASE) for r in rows]
    want = [(o, r) for o, r, g in zip(starts, rows, gated, strict=True) if g]
    assert (list(lines.lines()) if lines else []) == want


# -- line_of: a match's line, bounded ------------------------------------------------------------


def test_line_of_is_the_whole_line_holding_the_match() -> None:
    text = "first\nsecond key here\nthird"
    at = text.index("key")
    assert line_of(text, at, at + 3) == "second key here"
    assert line_of(text, 0, 5) == "first"  # the first line: from the text's start
    assert line_of(text, len(text) - 5, len(text)) == "third"  # the last: to its end
    assert line_of("\nx\n", 1, 2) == "x"  # a line break at 0 and right after the match
    assert line_of("a\nb\nc key", 6, 9) == "c key"  # the nearest break before it
    assert line_of("\nx", 0, 0) == ""  # an empty match right before a break


def test_line_of_reaches_1024_characters_before_and_after_the_match() -> None:
    text = "\n" + "a" * 1500 + "KEY" + "b" * 1500 + "\n"
    at = text.index("KEY")
    assert line_of(text, at, at + 3) == "a" * 1024 + "KEY" + "b" * 1024
    near = "\n" + "a" * 1000 + "KEY" + "b" * 1000 + "\nnext line\n"
    at = near.index("KEY")
    assert line_of(near, at, at + 3) == "a" * 1000 + "KEY" + "b" * 1000
    far = "x\n" + "a" * 1100 + "KEY"
    at = far.index("KEY")
    assert line_of(far, at, at + 3) == "a" * 1024 + "KEY"  # the break before is out of reach
