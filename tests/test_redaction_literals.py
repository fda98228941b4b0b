"""Keys split across string literals (redaction/literals.py): which runs of literals are read
joined, the exact pieces of each, and how a key found across a joint maps back onto them.
"""

from __future__ import annotations

import pytest

from redline.redaction import Redactor
from redline.redaction.literals import runs, split_spans
from redline.redaction.spans import Span

from secret_corpus import random_key

BODY = random_key(24)
KEY = b"l" * 32


def pieces(text: str) -> list[list[str]]:
    return [[text[a:b] for a, b in run] for run in runs(text)]


@pytest.mark.parametrize(
    "joint",
    [" ", "", " + ", "+", " . ", " .. ", " || ", " & ", "\n    ", " +\n    ", " \\\n    "],
)
def test_every_joint_joins(joint: str) -> None:
    text = f'k = "sk_live_"{joint}"{BODY}"\n'
    assert pieces(text) == [["sk_live_", BODY]]


def test_a_run_at_the_very_start_and_quotes_of_either_kind() -> None:
    assert pieces(f"'sk_live_' \"{BODY}\"") == [["sk_live_", BODY]]


def test_what_is_not_a_run() -> None:
    assert pieces(f'k = "sk_live_{BODY}"') == []  # one literal
    assert pieces('"Hello, " + "world"') == []  # the joint is not inside a token
    assert pieces('"abc" , "def"') == []  # a comma separates, it does not join
    assert pieces('"" "abc"') == []  # an empty piece has no token to split


def test_a_run_is_read_once_from_its_first_literal() -> None:
    text = '"sk_" "live_" "abc" x = 1 "ghp_" "def"'
    assert pieces(text) == [["sk_", "live_", "abc"], ["ghp_", "def"]]


def test_a_run_holds_at_most_32_pieces() -> None:
    text = " ".join(f'"a{i}"' for i in range(40))
    found = pieces(text)
    assert [len(run) for run in found] == [32, 8]
    assert found[0][0] == "a0" and found[1][0] == "a32"


def test_a_key_across_joints_masks_its_part_of_every_piece() -> None:
    text = f'a = "sk_" "live_" "{BODY[:10]}" "{BODY[10:]}"\n'
    spans = split_spans(text, lambda joined: _stripe(joined))
    assert [text[s.start : s.end] for s in spans] == ["sk_", "live_", BODY[:10], BODY[10:]]
    assert {s.kind for s in spans} == {"stripe-key"}


def test_a_find_inside_one_piece_is_left_to_the_plain_scan() -> None:
    text = f'a = "sk_live_{BODY}" "_{BODY}"\n'  # a run, but the key ends inside its piece
    assert pieces(text) == [[f"sk_live_{BODY}", f"_{BODY}"]]
    assert split_spans(text, lambda joined: _stripe(joined)) == []


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


def test_two_runs_map_back_to_their_own_pieces() -> None:
    other = random_key(30)
    text = f'a = "sk_live_" "{BODY}"\nb = "sk_test_" + "{other}"\n'
    r = Redactor(key=KEY, environment=False)
    out = r.redact(text)
    assert out == (
        f'a = "{r.placeholder("sk_live_", "stripe-key")}" "{r.placeholder(BODY, "stripe-key")}"\n'
        f'b = "{r.placeholder("sk_test_", "stripe-key")}" + '
        f'"{r.placeholder(other, "stripe-key")}"\n'
    )


def test_ordinary_joined_strings_stay_readable() -> None:
    text = (
        'msg = "Hello, " + name + "!"\n'
        'sql = "SELECT a " "FROM b " "WHERE c = 1"\n'
        'url = base + "/api/" + "v1/" + "users"\n'
        "prefixes = ('sk_live_', 'sk_test_', 'rk_live_')\n"
    )
    assert Redactor(key=KEY, environment=False).redact(text) == text
