"""What a rule names as the secret (redline.redaction.rule): the value inside its match, never
the quotes or the name around it; and the keyword gate every gated rule depends on.

Each test states one rule a mutant of rule.py broke. Run by `make mutation` for rule.py
(scripts/mutation.toml).
"""

from __future__ import annotations

import re

import pytest

from guard_redaction import own_masks
from redline.redaction.rule import (
    CONTEXT,
    ENTROPY,
    KEYWORD,
    KEYWORD_GATE,
    PROVIDER,
    Rule,
    value_span,
)

_QUOTED = re.compile(r"""=\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|`(?P<bq>[^`]*)`|(?P<bare>\S+))""")


@pytest.mark.parametrize(
    ("text", "value"),
    [('k = "abc"', "abc"), ("k = 'abc'", "abc"), ("k = `abc`", "abc"), ("k = abc", "abc")],
)
def test_the_value_of_a_quoted_or_bare_assignment_is_inside_its_quotes(
    text: str, value: str
) -> None:
    m = _QUOTED.search(text)
    assert m is not None
    start, end = value_span(Rule("k", _QUOTED, group="dqv"), m)
    assert text[start:end] == value


def test_an_empty_quoted_value_is_still_the_value_inside_the_quotes() -> None:
    m = _QUOTED.search('k = ""')
    assert m is not None
    assert value_span(Rule("k", _QUOTED, group="dqv"), m) == (5, 5)


def test_a_rule_without_a_group_names_its_whole_match_and_a_named_group_that_group() -> None:
    pattern = re.compile(r"id=(?P<v>\w+)")
    m = pattern.search("x id=abc y")
    assert m is not None
    assert value_span(Rule("k", pattern), m) == (2, 8)
    assert value_span(Rule("k", pattern, group="v"), m) == (5, 8)
    assert value_span(Rule("k", pattern, group=1), m) == (5, 8)


@pytest.mark.parametrize(
    "text",
    ['db_password = "hunter2-fake"', "db_password = 'hunter2-fake'", "db_pwd: `hunter2-fake`"],
)
def test_a_keyword_assignment_masks_the_value_and_keeps_the_quotes_and_name(text: str) -> None:
    assert own_masks(text) == [("hunter2-fake", "password")]


def test_ranks_order_specific_before_general() -> None:
    assert PROVIDER < CONTEXT < KEYWORD < ENTROPY


def test_the_keyword_gate_is_necessary_for_every_gated_rule() -> None:
    """The gate's words (on the lower-cased line): a line without one is never scanned."""
    for word in ("key", "pw", "pass", "token", "secret", "auth", "bearer", "access"):
        assert KEYWORD_GATE.search(word)
    assert not KEYWORD_GATE.search("value = 1")
