"""Secrets redaction for the agent: the one implementation lives in `redline.redaction`.

Kept so `from redline.agent.redact import redact, redact_messages, MASK` goes on working.
"""

from __future__ import annotations

from redline.redaction import MASK, redact, redact_messages

__all__ = ["MASK", "redact", "redact_messages"]
