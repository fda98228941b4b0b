"""Mask secrets in text before it reaches the model, a log, or the editor.

Patterns are deliberately broad: a false positive costs the reviewer a few characters of
context, a false negative sends someone's key to a third party. The prefix of a key kind is
kept (``sk-…``, ``AKIA…``) so a reviewer can still tell *what* was there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MASK = "[REDACTED]"

_Replacement = str | Callable[[re.Match[str]], str]

_PATTERNS: list[tuple[re.Pattern[str], _Replacement]] = [
    # PEM private keys, whole block (RSA, EC, OPENSSH, ENCRYPTED, PGP ...).
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        "-----BEGIN PRIVATE KEY----- " + MASK + " -----END PRIVATE KEY-----",
    ),
    # Generic assignments: API_KEY=..., "client_secret": "...", password: ... (before the prefixed
    # keys, so a value is masked once). The name may carry prefixes/suffixes (DB_PASSWORD).
    # Only literal-looking values are masked — quoted strings, or bare values of 6+ characters
    # that are not plain numbers or calls — so
    # code such as `token = get_token()` or `max_tokens = 100` stays readable for the reviewer.
    (
        re.compile(
            r"""(?ix)
            (\b[\w.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|credential|private[_\-]?key)
             [\w.\-]*["']?\s*[:=]\s*)
            (?:"([^"\n]+)"|'([^'\n]+)'|(?!\d+\b)([^\s,;'"(){}\[\]<>]{6,})(?![(\w]))
            """
        ),
        lambda m: (
            m.group(1)
            + ('"' + MASK + '"' if m.group(2) else "'" + MASK + "'" if m.group(3) else MASK)
        ),
    ),
    # Provider keys with recognisable prefixes.
    (re.compile(r"\b(sk-(?:proj-|ant-|or-)?)[A-Za-z0-9_\-]{16,}"), r"\1" + MASK),
    (re.compile(r"\b((?:AKIA|ASIA)[A-Z0-9]{4})[A-Z0-9]{12}\b"), r"\1" + MASK),
    (re.compile(r"\b(gh[pousr]_)[A-Za-z0-9]{30,}"), r"\1" + MASK),
    (re.compile(r"\b(github_pat_)[A-Za-z0-9_]{30,}"), r"\1" + MASK),
    (re.compile(r"\b(xox[abposr]-)[A-Za-z0-9\-]{10,}"), r"\1" + MASK),
    (re.compile(r"\b(glpat-)[A-Za-z0-9_\-]{20,}"), r"\1" + MASK),
    (re.compile(r"\b(AIza)[A-Za-z0-9_\-]{35}\b"), r"\1" + MASK),
    (re.compile(r"\b(hf_)[A-Za-z0-9]{30,}\b"), r"\1" + MASK),
    # JSON Web Tokens.
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), MASK),
    # Credentials embedded in URLs: scheme://user:password@host.
    (
        re.compile(r"\b([a-z][a-z0-9+.\-]*://[^/\s:@]+:)[^@\s/]+@", re.IGNORECASE),
        r"\1" + MASK + "@",
    ),
    # Authorization headers.
    (re.compile(r"(?i)\b(authorization\s*[:=]\s*(?:bearer|basic|token)\s+)\S+"), r"\1" + MASK),
]


def redact(text: str) -> str:
    """`text` with anything that looks like a secret replaced by ``[REDACTED]``."""
    if not text:
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of chat messages with every text field redacted (the originals are untouched).

    Covers string contents, multi-part contents (``{"type": "text", "text": ...}``) and the
    arguments of assistant tool calls — a model can echo a secret it saw earlier.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        m = dict(message)
        content = m.get("content")
        if isinstance(content, str):
            m["content"] = redact(content)
        elif isinstance(content, list):
            m["content"] = [
                {**part, "text": redact(part["text"])}
                if isinstance(part, dict) and isinstance(part.get("text"), str)
                else part
                for part in content
            ]
        if m.get("tool_calls"):
            m["tool_calls"] = [_redact_tool_call(c) for c in m["tool_calls"]]
        out.append(m)
    return out


def _redact_tool_call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    fn = call.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
        return {**call, "function": {**fn, "arguments": redact(fn["arguments"])}}
    return call
