"""Keys split across string literals (redline.redaction.literals), rule by rule: where a run
of literals starts, ends and resumes, which joints are inside a token, and how a detection is
mapped back onto the pieces it covers.

Each test states one rule a mutant of literals.py broke. Run by `make mutation` for
literals.py (scripts/mutation.toml).
"""

from __future__ import annotations

from redline.redaction.literals import runs, split_spans
from redline.redaction.spans import Span

BODY = "aB3dE5fG7hI9jK1lM3nO5pQ7"


def pieces(text: str) -> list[list[str]]:
    return [[text[a:b] for a, b in run] for run in runs(text)]


def test_the_joint_is_read_between_the_last_character_of_one_piece_and_the_first_of_the_next() -> (
    None
):
    assert pieces('v = ".b" "cd"\n') == [[".b", "cd"]]  # `b` touches `c`
    assert pieces('v = "ab." "cd"\n') == []  # `.` ends the first piece: no token is split


def test_a_literal_that_does_not_close_ends_its_run_and_the_search_goes_on() -> None:
    text = f'a = "x" "y\\z"\nk = "sk_live_" "{BODY}"\n'
    assert pieces(text) == [["sk_live_", BODY]]


def test_a_closing_quote_never_opens_the_next_literal() -> None:
    assert pieces('x = "id"\'s" . "key"') == []


def test_the_33rd_literal_starts_the_next_run_where_it_stands() -> None:
    text = "".join(f'"a{i}"' for i in range(40))  # joined without spaces
    found = pieces(text)
    assert [len(run) for run in found] == [32, 8]
    assert found[1][0] == "a32"


def _stripe(joined: str) -> list[Span]:
    at = joined.find("sk_live_")
    out = []
    while at >= 0:
        end = at + len("sk_live_")
        while end < len(joined) and joined[end].isalnum():
            end += 1
        out.append(Span(at, end, "stripe-key", 0))
        at = joined.find("sk_live_", end)
    return out


def test_a_find_starting_where_a_piece_starts_is_left_to_the_plain_scan() -> None:
    text = f'a = "xx" "sk_live_{BODY}"\n'  # a run; the key starts its own piece
    assert pieces(text) == [["xx", f"sk_live_{BODY}"]]
    assert split_spans(text, _stripe) == []


def test_every_find_across_a_joint_is_mapped_even_after_one_inside_a_piece() -> None:
    text = f'a = "sk_live_{BODY}-x" "y"\nb = "sk_live_" "{BODY}"\n'
    spans = split_spans(text, _stripe)
    assert [text[s.start : s.end] for s in spans] == ["sk_live_", BODY]


def test_a_find_ending_where_a_piece_starts_maps_to_no_empty_span() -> None:
    text = f'a = "sk_live_" "{BODY}" "-x"\n'
    spans = split_spans(text, _stripe)
    assert [text[s.start : s.end] for s in spans] == ["sk_live_", BODY]
    assert all(s.end > s.start for s in spans)
