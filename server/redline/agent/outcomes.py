"""What a model call can end in, for `agent/llm.py` and its callers: the errors a caller
sees (`LLMError` and its kinds), the response types (`LLMResponse`, `ToolCall`), and how a
provider's exception is classified — retry, with what `Retry-After`, or fall back.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

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


class ModelUnusable(LLMError):
    """The model cannot be used as configured — no key, a refused key, a model the server does
    not know, or nothing reachable at its address — so no retry or wait would help. The message
    is the one line a user sees (`unusable_line`); `kind` is the CallFailed kind behind it."""

    def __init__(
        self, message: str, hint: str | None, *, kind: str, model: str, api_base: str | None
    ) -> None:
        super().__init__(message, hint, model=model)
        self.kind = kind
        self.api_base = api_base


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


class RequestTooLarge(LLMError):
    """One request is over `llm.max_request_bytes`; it was not sent."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(
            f"model request of {size:,} bytes is over the {cap:,}-byte limit "
            "(llm.max_request_bytes); it was not sent",
            "raise llm.max_request_bytes (user config or REDLINE_MAX_REQUEST_BYTES), or review "
            "a smaller change",
        )
        self.size = size
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
        self,
        kind: str,
        detail: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        max_retries: int | None = None,
        status: int | None = None,
        cause: str = "",
    ) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.retryable = retryable
        self.retry_after = retry_after
        self.max_retries = max_retries  # fewer retries than llm.max_retries for this kind
        self.status = status  # the HTTP status, when the server answered
        self.cause = cause  # "refused" | "dns" for an unreachable server

    @property
    def unusable(self) -> bool:
        return self.kind in UNUSABLE_KINDS


KIND_TEXT = {
    "timeout": "timed out",
    "rate_limit": "was rate limited (HTTP 429)",
    "server": "failed with a server error",
    "connection": "could not be reached",
    "garbage": "returned a response that is not valid JSON",
    "too_deep": "returned an answer nested too deep to read",
    "auth": "rejected the credentials",
    "no_key": "has no API key",
    "unknown_model": "is not known to the server",
    "unreachable": "could not be reached",
    "bad_request": "rejected the request",
    "context_window": "said the conversation is longer than its context window",
    "error": "failed",
}


# Failures that say the model cannot be used as configured: retrying or waiting cannot help
# (a refused connection still gets one retry: a local server may be starting up).
UNUSABLE_KINDS = frozenset({"auth", "no_key", "unknown_model", "unreachable"})

# How litellm and the OpenAI client say no key was given: litellm raises the OpenAI client's
# "Missing credentials" wrapped as a 500, Anthropic's path an AuthenticationError "Missing
# Anthropic API Key"; older OpenAI clients said "The api_key client option must be set".
_NO_KEY = re.compile(
    r"missing credentials|missing [\w ]*api key|no key is set|api_key client option must be set",
    re.IGNORECASE,
)
# A 400/404 that is about the model's name rather than the request.
_UNKNOWN_MODEL = re.compile(
    r"model[^.]{0,80}(not found|does not exist|not exist)|invalid model|unknown model|"
    r"model_not_found|llm provider not provided",
    re.IGNORECASE,
)


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


def _unreachable_cause(exc: BaseException) -> str | None:
    """ "refused" or "dns" when the chain of causes ends in a refused connection or a host name
    that does not resolve (litellm reports both as a 500 "Connection error." for OpenAI-style
    providers, and as an APIConnectionError for Ollama)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "refused"
        if isinstance(current, socket.gaierror):
            return "dns"
        current = current.__cause__ or current.__context__
    return None


def _recursion_in_chain(exc: BaseException) -> bool:
    """Whether reading the answer ran out of stack: litellm decodes tool-call arguments with
    json.loads as it builds its response object, so arguments nested 100,000 deep end there
    in a RecursionError, reported as an "Invalid response object" 500 with its traceback."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, RecursionError):
            return True
        current = current.__cause__ or current.__context__
    return "maximum recursion depth exceeded" in str(exc)


def classify(exc: BaseException, litellm: Any, retry_after_cap: float) -> CallFailed:
    if isinstance(exc, CallFailed):
        return exc
    if _recursion_in_chain(exc):
        # Malformed output like any other: asked once more, then the call fails. Said in
        # Redline's words: litellm's message holds a traceback.
        return CallFailed(
            "too_deep", "its answer nests too deep to decode", retryable=True, max_retries=1
        )
    msg = short_text(str(exc))
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    # Before the status checks: litellm reports a missing key and an unreachable server as
    # 500s, which would otherwise be retried as if the server were having a bad moment.
    if _NO_KEY.search(str(exc)):
        return CallFailed("no_key", msg, retryable=False)
    cause = _unreachable_cause(exc)
    if cause == "refused":
        return CallFailed("unreachable", msg, retryable=True, max_retries=1, cause=cause)
    if cause == "dns":
        return CallFailed("unreachable", msg, retryable=False, cause=cause)
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
    if isinstance(exc, litellm.NotFoundError) or (
        status in (400, 404) and _UNKNOWN_MODEL.search(str(exc))
    ):
        return CallFailed("unknown_model", msg, retryable=False, status=status)
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return CallFailed("auth", msg, retryable=False, status=status)
    if isinstance(exc, json.JSONDecodeError) or "invalid response from llm" in msg.lower():
        # litellm wraps a non-JSON body in a 500 whose
        # message says so. A proxy error page is usually transient, so it is retried.
        return CallFailed("garbage", msg, retryable=True)
    if isinstance(exc, litellm.APIConnectionError) and status is None:
        return CallFailed("connection", msg, retryable=True)
    if status is not None:
        if status == 408:
            return CallFailed("timeout", msg, retryable=True)
        if status == 429:
            return CallFailed("rate_limit", msg, retryable=True)
        if status >= 500:
            return CallFailed("server", msg, retryable=True)
        if status in (401, 403):
            return CallFailed("auth", msg, retryable=False, status=status)
        if 400 <= status < 500:
            return CallFailed("bad_request", msg, retryable=False)
    if isinstance(exc, litellm.APIConnectionError):
        return CallFailed("connection", msg, retryable=True)
    return CallFailed("error", f"{type(exc).__name__}: {msg}", retryable=False)


def final_error(
    role: str,
    failures: list[tuple[str, CallFailed, int]],
    timeout: float,
    *,
    api_base_setting: str | None = None,
) -> LLMError:
    """The error after every candidate of a call failed (some not for lack of a usable model):
    each model, what happened to it and how often it was tried, and a hint for the last.
    `api_base_setting`: the setting that gave the role its address, when it is not
    `models.api_base` (a debater's own), so the hint sends the user to the right one."""
    parts = []
    for model, f, attempts in failures:
        what = KIND_TEXT[f.kind]
        if f.kind == "timeout":
            what += f" after {timeout:g} s"
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        detail = "" if f.kind == "timeout" else f": {f.detail}"
        parts.append(f"{model} {what}{tries}{detail}")
    message = f"model call for role {role!r} failed: " + "; ".join(parts)
    last_model, last, _ = failures[-1]
    base = api_base_setting or "models.api_base"
    hint = {
        "timeout": "raise llm.timeout or use a faster model",
        "garbage": f"check {base}: it must point at an OpenAI-compatible /v1 endpoint",
        "auth": "check the API key (models.api_key or the provider's environment variable)",
        "connection": f"check that the model server is running and {base} is right",
    }.get(last.kind)
    cls = LLMTimeout if all(f.kind == "timeout" for _, f, _ in failures) else LLMError
    return cls(message, hint, model=last_model)


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


# -- a model that cannot be used, in one line --------------------------------------------------


def unusable_line(
    failure: CallFailed,
    model: str,
    api_base: str | None,
    *,
    key_vars: list[str],
    key_given: bool,
    placeholder: bool,
    api_base_setting: str | None = None,
) -> tuple[str, str]:
    """The one line (and a hint) saying why `model` cannot be used, e.g. "model gpt-4o-mini:
    no OPENAI_API_KEY set — set it or REDLINE_API_KEY". `key_vars` are the provider's key
    variables (litellm's `validate_environment`), `key_given` whether any key was sent,
    `placeholder` whether that key was Redline's stand-in for a local server;
    `api_base_setting` the setting that gave this model its address when it is not the flag or
    variable (a debater's `debate.reviewers.<name>.api_base`)."""
    base = api_base_setting or "--api-base / REDLINE_API_BASE"
    where = f"model {model} at {api_base}" if api_base else f"model {model}"
    status = f" ({failure.status})" if failure.status else ""
    if failure.kind == "no_key" or (failure.kind == "auth" and not key_given and key_vars):
        names = " or ".join(key_vars) if key_vars else "API key"
        fix = "set it" if len(key_vars) <= 1 else "set one"
        return (
            f"{where}: no {names} set — {fix} or REDLINE_API_KEY",
            "a server that needs no key accepts any value: REDLINE_API_KEY=none",
        )
    if failure.kind == "auth" and placeholder:
        return (
            f"{where}: the server asks for an API key{status} — set REDLINE_API_KEY",
            "no key was configured, so Redline sent a placeholder a keyless local server accepts",
        )
    if failure.kind == "auth":
        return (
            f"{where}: the key was refused{status}",
            "check REDLINE_API_KEY (or models.api_key, or the provider's key variable)",
        )
    if failure.kind == "unknown_model":
        return (
            f"{where}: the server does not know this model{status}: {_server_said(failure)}",
            "check the model name (and that "
            f"{api_base_setting or 'api_base'} is the server's API root, often …/v1)",
        )
    if failure.cause == "dns":
        host = _host(api_base) or "the provider's host"
        return (
            f"{where}: the host name {host} does not resolve",
            f"check {base}, or the network",
        )
    if api_base:
        return (
            f"{where}: nothing is listening there",
            f"start the model server, or fix {base}",
        )
    return (
        f"{where}: the provider's server refused the connection",
        "check the network (a proxy or firewall)",
    )


def _server_said(failure: CallFailed) -> str:
    """The server's own words, without litellm's "litellm.NotFoundError: …Exception - " prefix."""
    text = failure.detail
    cut = text.rfind("Exception - ")
    return short_text(text[cut + len("Exception - ") :] if cut >= 0 else text, 160)


def _host(api_base: str | None) -> str | None:
    return urlsplit(api_base).hostname if api_base else None
