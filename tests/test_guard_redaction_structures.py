"""Redacting structures (redline.redaction.structures), rule by rule: every string of JSON-like
data (dictionary keys too) is redacted and the shape is kept; chat messages are copied with
every text field and tool-call argument redacted, and tool-call arguments stay valid JSON.

Each test states one rule a mutant of structures.py broke. Run by `make mutation` for
structures.py (scripts/mutation.toml).
"""

from __future__ import annotations

import json
from typing import Any

from guard_redaction import GHP, redactor
from redline.redaction import Redactor


def ph(r: Redactor) -> str:
    return r.placeholder(GHP, "github-token")


# -- data -----------------------------------------------------------------------------------------


def test_every_string_and_key_is_redacted_and_the_shape_kept() -> None:
    r = redactor()
    data: dict[Any, Any] = {
        "a": [f"t {GHP}", 1, None, 2.5, True],
        GHP: {"inner": (f"{GHP}", "plain")},
        7: "seven",
    }
    out = r.redact_data(data)
    p = ph(r)
    assert out == {
        "a": [f"t {p}", 1, None, 2.5, True],
        p: {"inner": (p, "plain")},
        7: "seven",
    }
    assert isinstance(out[p]["inner"], tuple)
    assert data["a"][0] == f"t {GHP}"  # the original is untouched


def test_data_without_a_secret_is_returned_itself() -> None:
    r = redactor()
    clean: dict[str, Any] = {"a": ["b", 1], "c": {"d": ("e",)}}
    assert r.redact_data(clean) is clean
    assert r.redact_data(5) == 5
    assert r.redact_data([]) == []
    assert r.redact_data("plain") == "plain"


def test_a_bare_string_is_redacted() -> None:
    r = redactor()
    assert r.redact_data(f"t {GHP}") == f"t {ph(r)}"


def test_a_repeated_string_is_redacted_everywhere_it_appears() -> None:
    r = redactor()
    data = [f"k {GHP}", "x", f"k {GHP}", {"k": f"k {GHP}"}]
    p = ph(r)
    assert r.redact_data(data) == [f"k {p}", "x", f"k {p}", {"k": f"k {p}"}]


def test_data_is_scanned_in_one_batch_of_distinct_strings() -> None:
    seen: list[list[str]] = []

    class Recording:
        def redact(self, text: str) -> str:
            raise AssertionError("data is redacted in a batch")

        def redact_many(self, texts: list[str]) -> list[str]:
            seen.append(list(texts))
            return [t.upper() for t in texts]

    from redline.redaction import structures

    out = structures.redact_data(Recording(), {"a": ["a", "b", "a"], "c": "b"})
    assert seen == [["a", "b", "c"]]
    assert out == {"A": ["A", "B", "A"], "C": "B"}


# -- chat messages --------------------------------------------------------------------------------


def test_string_and_multi_part_contents_are_redacted_in_copies() -> None:
    r = redactor()
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"key {GHP}"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"key {GHP}"},
                {"type": "image_url", "image_url": {"url": "x"}},
                {"type": "text", "text": 5},
                "raw part",
            ],
        },
        {"role": "assistant", "content": None},
    ]
    out = r.redact_messages(messages)
    p = ph(r)
    assert out == [
        {"role": "user", "content": f"key {p}"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"key {p}"},
                {"type": "image_url", "image_url": {"url": "x"}},
                {"type": "text", "text": 5},
                "raw part",
            ],
        },
        {"role": "assistant", "content": None},
    ]
    assert messages[0]["content"] == f"key {GHP}"
    assert messages[1]["content"][0]["text"] == f"key {GHP}"


def test_tool_call_arguments_are_redacted_and_stay_valid_json() -> None:
    r = redactor()
    args = json.dumps({"path": "café.py", "note": f'token "{GHP}"\nnext'})
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "read", "arguments": args}}
            ],
        }
    ]
    out = r.redact_messages(messages)
    call = out[0]["tool_calls"][0]
    assert call["id"] == "1" and call["type"] == "function" and call["function"]["name"] == "read"
    raw = call["function"]["arguments"]
    assert GHP not in raw and "café.py" in raw  # non-ASCII stays readable
    assert json.loads(raw) == {"path": "café.py", "note": f'token "{ph(r)}"\nnext'}
    assert messages[0]["tool_calls"][0]["function"]["arguments"] == args


def test_tool_call_arguments_without_a_secret_are_kept_byte_for_byte() -> None:
    r = redactor()
    args = '{"path":  "a.py"}'
    call = {"id": "1", "function": {"name": "read", "arguments": args}}
    out = r.redact_messages([{"role": "assistant", "tool_calls": [call]}])
    assert out[0]["tool_calls"][0]["function"]["arguments"] == args


def test_tool_call_arguments_that_are_not_json_are_redacted_as_text() -> None:
    r = redactor()
    args = f"not json {GHP}"
    call = {"id": "1", "function": {"name": "read", "arguments": args}}
    out = r.redact_messages([{"role": "assistant", "tool_calls": [call]}])
    assert out[0]["tool_calls"][0]["function"]["arguments"] == f"not json {ph(r)}"


def test_tool_calls_of_another_shape_pass_through() -> None:
    r = redactor()
    odd: list[Any] = [
        "a string",
        {"id": "2"},
        {"id": "3", "function": "f"},
        {"id": "4", "function": {"name": "n", "arguments": {"already": "parsed"}}},
    ]
    out = r.redact_messages([{"role": "assistant", "tool_calls": odd}])
    assert out[0]["tool_calls"] == odd
    assert r.redact_messages([{"role": "assistant", "tool_calls": []}]) == [
        {"role": "assistant", "tool_calls": []}
    ]
