"""The depth bound on model JSON (json_bounds.py), on generated documents.

The scan must agree with the decoder: a document within the bound decodes exactly as
json.loads decodes it, one beyond it is refused with a ValueError, brackets inside strings
(escaped quotes included) never count, the scan stops where the first value ends, and nothing
— however deep or malformed — raises RecursionError.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.json_bounds import MAX_DEPTH, JSONTooDeep, loads, raw_decode, too_deep
from redline.review.structured import extract_json

# Strings full of what the scan must not take for structure.
TRICKY = st.text(alphabet='[]{}"\\,:ab \n\t\u00e9\u2028', max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TRICKY
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=30,
)


def depth(value: Any) -> int:
    """Arrays and objects nested, as the decoder recurses into them."""
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


def nest(value: Any, levels: int, kinds: list[bool]) -> Any:
    for i in range(levels):
        value = [value] if kinds[i % len(kinds)] else {"k[{": value}
    return value


def dumps(value: Any, indent: int | None, ascii_only: bool) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=ascii_only)


@settings(max_examples=300, deadline=None)
@given(
    value=VALUES,
    limit=st.integers(0, 8),
    indent=st.none() | st.integers(0, 2),
    ascii_only=st.booleans(),
)
def test_the_scan_agrees_with_the_decoder_on_generated_documents(
    value: Any, limit: int, indent: int | None, ascii_only: bool
) -> None:
    text = dumps(value, indent, ascii_only)
    assert too_deep(text, limit=limit) == (depth(value) > limit)
    if depth(value) <= limit:
        assert loads(text, limit) == json.loads(text)
    else:
        with pytest.raises(JSONTooDeep):
            loads(text, limit)


@settings(max_examples=200, deadline=None)
@given(
    inner=VALUES,
    levels=st.integers(0, 2 * MAX_DEPTH),
    kinds=st.lists(st.booleans(), min_size=1, max_size=5),
)
def test_documents_within_the_default_bound_decode_and_deeper_ones_are_refused(
    inner: Any, levels: int, kinds: list[bool]
) -> None:
    value = nest(inner, levels, kinds)
    text = json.dumps(value)
    if depth(value) <= MAX_DEPTH:
        assert loads(text) == json.loads(text)
    else:
        with pytest.raises(ValueError, match=f"deeper than {MAX_DEPTH}"):
            loads(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='[]{}",:\\ 0a-e.tnrufl', max_size=60), st.integers(0, 6))
def test_any_text_decodes_as_json_does_or_is_a_value_error(text: str, limit: int) -> None:
    try:
        expected: Any = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            loads(text, limit)
        return
    if depth(expected) <= limit:
        assert loads(text, limit) == expected
    else:
        with pytest.raises(JSONTooDeep):
            loads(text, limit)


@settings(max_examples=200, deadline=None)
@given(
    value=VALUES,
    before=st.text(alphabet="ab ,.", max_size=10),
    after=st.text(alphabet='[[[{{"\\ab', max_size=80),
    limit=st.integers(0, 8),
)
def test_the_scan_stops_where_the_first_value_ends(
    value: Any, before: str, after: str, limit: int
) -> None:
    """raw_decode's view: prose after the value (unbalanced brackets and quotes) does not
    count, whatever its nesting would be."""
    body = json.dumps(value)
    text = before + body + after
    if depth(value) <= limit:
        assert raw_decode(text, len(before), limit) == (json.loads(body), len(before) + len(body))
    else:
        with pytest.raises(JSONTooDeep):
            raw_decode(text, len(before), limit)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        "[" * 100_000 + "]" * 100_000,
        '{"a": ' * 100_000,
        '{"a": ' * 100_000 + "1" + "}" * 100_000,
        "[" * 99_999 + '"' + "]" * 100_000,  # an unterminated string at the bottom
    ],
)
def test_nesting_100000_deep_is_a_value_error_never_a_recursion_error(text: str) -> None:
    with pytest.raises(ValueError):
        loads(text)
    with pytest.raises(ValueError):
        extract_json(text)
    with pytest.raises(ValueError):
        extract_json("Here is my review:\n```json\n" + text + "\n```")
    with pytest.raises(ValueError):
        extract_json("Some prose first. " + text)


def test_brackets_in_strings_and_escaped_quotes_do_not_count() -> None:
    text = json.dumps({"code": "[" * 1000 + '\\"]{' * 500, "k": ["{{{", '"[["']})
    assert not too_deep(text, limit=2)
    assert loads(text, limit=2) == json.loads(text)
    assert extract_json("The answer: " + text + " and [[[[ prose") == json.loads(text)
