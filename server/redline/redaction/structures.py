"""Redacting structures: JSON-like data (every string and dictionary key, scanned together in
one pass) and chat messages (text contents, multi-part contents, tool-call arguments).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Protocol

from redline.json_bounds import loads as bounded_loads


class Redactor(Protocol):
    """What these functions need of `redactor.Redactor` (which calls them: no import back)."""

    def redact(self, text: str) -> str: ...

    def redact_many(self, texts: list[str]) -> list[str]: ...


def redact_data(redactor: Redactor, value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, strings, ...) with every string redacted
    (dictionary keys too); `value` itself when nothing needed masking."""
    strings: list[str] = []
    _collect(value, strings)
    if not strings:
        return value
    # Scanned once per distinct string: records repeat their keys and values thousands of
    # times (a 2,000-file review's unit index: 38k strings, 8k distinct).
    distinct = list(dict.fromkeys(strings))
    masked = dict(zip(distinct, redactor.redact_many(distinct), strict=True))
    if all(masked[s] == s for s in distinct):
        return value
    return _rebuild(value, iter([masked[s] for s in strings]))


def redact_messages(redactor: Redactor, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of chat messages with every text field redacted (the originals untouched).

    Covers string contents, multi-part contents (`{"type": "text", "text": ...}`) and the
    arguments of assistant tool calls — a model can echo a secret it saw earlier.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        m = dict(message)
        content = m.get("content")
        if isinstance(content, str):
            m["content"] = redactor.redact(content)
        elif isinstance(content, list):
            m["content"] = [
                {**part, "text": redactor.redact(part["text"])}
                if isinstance(part, dict) and isinstance(part.get("text"), str)
                else part
                for part in content
            ]
        if m.get("tool_calls"):
            m["tool_calls"] = [_redact_tool_call(redactor, c) for c in m["tool_calls"]]
        out.append(m)
    return out


def _redact_tool_call(redactor: Redactor, call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    fn = call.get("function")
    if not (isinstance(fn, dict) and isinstance(fn.get("arguments"), str)):
        return call
    args = fn["arguments"]
    redacted = redactor.redact(args)
    if redacted != args:
        # Redact the decoded values, so the arguments stay valid JSON whatever was masked.
        with contextlib.suppress(ValueError):
            redacted = json.dumps(redact_data(redactor, bounded_loads(args)), ensure_ascii=False)
    return {**call, "function": {**fn, "arguments": redacted}}


def _collect(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                out.append(k)
            _collect(v, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _collect(v, out)


def _rebuild(value: Any, strings: Any) -> Any:
    if isinstance(value, str):
        return next(strings)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = next(strings) if isinstance(k, str) else k
            out[key] = _rebuild(v, strings)
        return out
    if isinstance(value, list | tuple):
        items = [_rebuild(v, strings) for v in value]
        return items if isinstance(value, list) else type(value)(items)
    return value
