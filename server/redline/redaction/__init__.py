"""One choke point for secrets: everything that leaves Redline passes through here.

Model requests (`agent/llm.py` redacts every message before litellm sees it), task records and
cached answers (`store/`), log records (a filter on Redline's handlers, `logfilter.py`) and the
editor's messages and diagnostics (`lsp/`) all call this package, never a pattern list of their
own. Detection is Redline's own fast patterns plus detect-secrets' maintained plugins
(`detection.py`: `provider_rules.py`, `context_rules.py`, `code_filter.py`, `plugins.py`); a
secret becomes `[REDACTED:<kind>:<keyed digest>]`, the same placeholder wherever the same value
appears (`redactor.py`, `placeholder.py`; data and chat messages: `structures.py`).

Importing this package is cheap: detect-secrets is loaded on the first text that could hold a
secret.
"""

from __future__ import annotations

from typing import Any

from redline.redaction.placeholder import MASK, PLACEHOLDER
from redline.redaction.redactor import Redactor, get_redactor
from redline.redaction.spans import Span


def redact(text: str) -> str:
    """`text` with every secret replaced by a `[REDACTED:<kind>:<digest>]` placeholder."""
    return get_redactor().redact(text)


def redact_many(texts: list[str]) -> list[str]:
    """Each text redacted, scanned together (fast for many small strings)."""
    return get_redactor().redact_many(texts)


def redact_data(value: Any) -> Any:
    """JSON-like data with every string (and dictionary key) redacted."""
    return get_redactor().redact_data(value)


def redact_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of chat messages with every text field and tool-call argument redacted."""
    return get_redactor().redact_messages(messages)


def register_secret(value: str, kind: str = "secret") -> None:
    """Mask `value` wherever it appears from now on (a configured API key, say)."""
    get_redactor().register(value, kind)


__all__ = [
    "MASK",
    "PLACEHOLDER",
    "Redactor",
    "Span",
    "get_redactor",
    "redact",
    "redact_data",
    "redact_many",
    "redact_messages",
    "register_secret",
]
