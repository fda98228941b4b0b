"""What a model call can end in, for `agent/llm.py` and its callers: the errors a caller
sees (`LLMError` and its kinds), the response types (`LLMResponse`, `ToolCall`), and how a
provider's exception is classified — retry, with what `Retry-After`, or fall back.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redline.agent.redact import redact
from redline.agent.usage import Usage
from redline.errors import RedlineError

# -- errors ------------------------------------------------------------------------------------


class LLMError(RedlineError):
    """A model call failed in a way the caller should report (and usually skip the work)."""

    def __init__(self, message: str, hint: str | None = None, *, model: str | None = None) -> None:
        super().__init__(message, hint)
        self.model = model


class LLMNotConfigured(LLMError):
    """No model is configured for the role."""


class LLMTimeout(LLMError):
    """The model did not answer within `llm.timeout` (after retries and fallbacks)."""


class LLMTruncated(LLMError):
    """The answer hit the output limit twice; `response` is the last (partial) answer."""

    def __init__(self, message: str, response: LLMResponse, *, model: str | None = None) -> None:
        super().__init__(message, "raise the model's output limit or split the work", model=model)
        self.response = response


class BudgetExceeded(LLMError):
    """The token or dollar budget is spent; no request was sent."""

    def __init__(
        self,
        message: str,
        *,
        spent_tokens: int,
        spent_usd: float,
        budget_tokens: int | None,
        budget_usd: float | None,
    ) -> None:
        super().__init__(message, "raise llm.budget_tokens / llm.budget_usd to allow more")
        self.spent_tokens = spent_tokens
        self.spent_usd = spent_usd
        self.budget_tokens = budget_tokens
        self.budget_usd = budget_usd


class RequestCapReached(LLMError):
    """The run's cap on model requests is reached; no request was sent."""

    def __init__(self, cap: int) -> None:
        super().__init__(
            f"model request cap ({cap}) reached",
            "raise llm.max_requests (user config, REDLINE_MAX_REQUESTS or --max-requests)",
        )
        self.cap = cap


# -- responses ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text exactly as the model wrote it (may be invalid)

    def to_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass
class LLMResponse:
    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    model: str  # the model string that answered (a fallback, possibly)
    # What producing this answer cost, including a truncated first attempt that was re-asked.
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0

    def to_message(self) -> dict[str, Any]:
        """The assistant message to append to a conversation."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return msg


# Streaming callback: (text piece, answer number). The answer number starts at 0 and goes up
# when a truncated answer is asked again, so a consumer knows to discard what it showed.
DeltaCallback = Callable[[str, int], Any]


# -- failures ----------------------------------------------------------------------------------


class CallFailed(Exception):
    """One attempt failed; `kind` decides whether to retry and how the final error reads."""

    def __init__(
        self, kind: str, detail: str, *, retryable: bool, retry_after: float | None = None
    ) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.retryable = retryable
        self.retry_after = retry_after


KIND_TEXT = {
    "timeout": "timed out",
    "rate_limit": "was rate limited (HTTP 429)",
    "server": "failed with a server error",
    "connection": "could not be reached",
    "garbage": "returned a response that is not valid JSON",
    "auth": "rejected the credentials",
    "bad_request": "rejected the request",
    "context_window": "said the conversation is longer than its context window",
    "error": "failed",
}


def short_text(text: str, limit: int = 300) -> str:
    text = redact(" ".join(text.split()))
    return text if len(text) <= limit else text[:limit] + "…"


def parse_retry_after(headers: Any, cap: float) -> float | None:
    """Seconds to wait from `retry-after-ms` / `Retry-After` (seconds or an HTTP date), capped."""
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return min(cap, max(0.0, float(ms) / 1000))
        value = headers.get("retry-after")
    except (AttributeError, ValueError):
        return None
    if value is None:
        return None
    value = str(value).strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(cap, max(0.0, seconds))


def classify(exc: BaseException, litellm: Any, retry_after_cap: float) -> CallFailed:
    if isinstance(exc, CallFailed):
        return exc
    msg = short_text(str(exc))
    if isinstance(exc, asyncio.TimeoutError | litellm.Timeout):
        return CallFailed("timeout", msg, retryable=True)
    if isinstance(exc, litellm.RateLimitError):
        headers = getattr(exc, "litellm_response_headers", None) or getattr(
            getattr(exc, "response", None), "headers", None
        )
        return CallFailed(
            "rate_limit",
            msg,
            retryable=True,
            retry_after=parse_retry_after(headers, retry_after_cap),
        )
    if isinstance(exc, litellm.ContextWindowExceededError):
        return CallFailed("context_window", msg, retryable=False)
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return CallFailed("auth", msg, retryable=False)
    if isinstance(exc, json.JSONDecodeError) or "invalid response from llm" in msg.lower():
        # litellm wraps a non-JSON body in a 500 whose
        # message says so. A proxy error page is usually transient, so it is retried.
        return CallFailed("garbage", msg, retryable=True)
    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.APIConnectionError) and not isinstance(status, int):
        return CallFailed("connection", msg, retryable=True)
    if isinstance(status, int):
        if status == 408:
            return CallFailed("timeout", msg, retryable=True)
        if status == 429:
            return CallFailed("rate_limit", msg, retryable=True)
        if status >= 500:
            return CallFailed("server", msg, retryable=True)
        if status in (401, 403):
            return CallFailed("auth", msg, retryable=False)
        if 400 <= status < 500:
            return CallFailed("bad_request", msg, retryable=False)
    if isinstance(exc, litellm.APIConnectionError):
        return CallFailed("connection", msg, retryable=True)
    return CallFailed("error", f"{type(exc).__name__}: {msg}", retryable=False)


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""
