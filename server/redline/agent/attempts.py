"""One model's attempts at one call, for `agent/llm.py` (which picks the models, in order):

- its own retries (exponential backoff with jitter, `Retry-After` honoured) for rate limits,
  5xx, connection errors, timeouts and garbage bodies; none once streamed text reached the
  caller, which would see it twice;
- a truncated answer (`finish_reason == "length"`) is asked again once with more room, and
  raises `LLMTruncated` if still cut: a caller never parses half an answer as a whole one;
- the budget and the request cap checked before each attempt (`agent/spend_limits.py`), and
  the request counted just before it leaves; a request over `llm.max_request_bytes` is not
  sent at all (`RequestTooLarge`, here: every request passes `_call_once`);
- the concurrency limit shared by everything using the client, halved on each 429 and raised
  again as calls succeed (`agent/limiter.py`);
- tokens, cost and latency of every request in the `UsageLedger`, failed ones included.

The messages a `Call` carries are already redacted (`LLMClient.complete`); their contents are
never logged here, nor is the key.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from redline.agent.limiter import AdaptiveLimit
from redline.agent.litellm_loader import load_litellm_async
from redline.agent.model_info import ModelInfo
from redline.agent.outcomes import (
    KIND_TEXT,
    CallFailed,
    DeltaCallback,
    LLMResponse,
    LLMTruncated,
    classify,
)
from redline.agent.spend_limits import SpendLimits
from redline.agent.transport import parse_response, send
from redline.agent.usage import CallRecord, UsageLedger
from redline.config_models import Settings

log = logging.getLogger(__name__)

# Said to the model when its answer hit the output limit and is asked again. One sentence, so
# it stays here rather than in prompts/.
TRUNCATION_NOTE = (
    "Your previous answer was cut off because it exceeded the output limit. Answer again, "
    "complete and more concise: keep only what matters."
)


@dataclass
class Call:
    """Everything one request needs (internal), so the retry layers pass one thing around."""

    role: str
    model: str
    api_base: str | None
    api_key: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    max_tokens: int | None
    response_format: dict[str, Any] | None
    on_delta: DeltaCallback | None
    placeholder: bool = False  # api_key is the stand-in for a keyless local server (keys.py)
    answer_no: int = 0  # 1 for the re-ask after a truncated answer
    streamed: bool = False  # set once any text reached `on_delta` in the current attempt


def request_bytes(kwargs: dict[str, Any]) -> int:
    """The bytes of what a request carries — its messages, tools and response format — as
    the JSON body a provider is sent (UTF-8, compact)."""
    body = {k: kwargs[k] for k in ("messages", "tools", "response_format") if k in kwargs}
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
    return len(text.encode("utf-8", errors="surrogatepass"))


class Exhausted(Exception):
    """All attempts on one model failed (internal: the caller moves to the next fallback)."""

    def __init__(self, failure: CallFailed, attempts: int) -> None:
        super().__init__(failure.detail)
        self.failure = failure
        self.attempts = attempts


class Attempts:
    """Sends calls to one model at a time for a client; `run` raises `Exhausted` when every
    attempt failed (the knobs after `info` are `LLMClient`'s, for tests and benchmarks)."""

    def __init__(
        self,
        settings: Settings,
        ledger: UsageLedger,
        limits: SpendLimits,
        info: ModelInfo,
        *,
        sleep: Callable[[float], Awaitable[Any]],
        backoff_base: float,
        backoff_max: float,
        retry_after_cap: float,
        max_output_cap: int,
    ) -> None:
        self.settings = settings
        self.ledger = ledger
        self.limits = limits
        self.info = info
        self._sleep = sleep
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_cap = retry_after_cap
        self.max_output_cap = max_output_cap
        # Fewer requests at once after a 429, more again as calls succeed (agent/limiter.py).
        self._limit = AdaptiveLimit(settings.llm.max_concurrency)

    async def run(self, call: Call) -> LLMResponse:
        """One model: retries, and one re-ask if the answer was cut off."""
        first = await self._with_retries(call)
        if first.finish_reason != "length":
            return first
        # Cut off: ask once more with room to finish and a request to be brief.
        bigger = self._larger_max_tokens(call.model, call.max_tokens, first.usage.completion_tokens)
        log.info(
            "answer from %s was truncated; asking again with max_tokens=%d", call.model, bigger
        )
        again = [*call.messages, {"role": "user", "content": TRUNCATION_NOTE}]
        second = await self._with_retries(
            replace(call, messages=again, max_tokens=bigger, answer_no=1)
        )
        second.usage = first.usage + second.usage
        if second.finish_reason == "length":
            raise LLMTruncated(
                f"the answer from {call.model} was cut off at the output limit twice "
                f"(last max_tokens={bigger}); it was not used",
                second,
                model=call.model,
            )
        return second

    def _larger_max_tokens(self, model: str, asked: int | None, produced: int) -> int:
        cap = self.info.limit(model, "max_output_tokens", self.max_output_cap)
        base = asked or produced or 1024
        return max(min(2 * base, cap), min(base + 1, cap))

    def _backoff(self, attempt: int) -> float:
        # Full jitter in [0.5, 1] × the exponential step: spreads parallel reviewers apart.
        step = min(self.backoff_max, self.backoff_base * (2**attempt))
        return step * random.uniform(0.5, 1.0)

    async def _with_retries(self, call: Call) -> LLMResponse:
        attempts = self.settings.llm.max_retries + 1
        for attempt in range(attempts):
            self.limits.check_budget()
            self.limits.check_request_cap()
            call.streamed = False
            try:
                return await self._call_once(call)
            except CallFailed as failure:
                # Once text reached a stream consumer a retry would show it twice: give up here.
                limit = attempts - 1
                if failure.max_retries is not None:
                    limit = min(limit, failure.max_retries)
                if not failure.retryable or call.streamed or attempt >= limit:
                    raise Exhausted(failure, attempt + 1) from None
                wait = failure.retry_after
                if wait is None:
                    wait = self._backoff(attempt)
                # A refused connection's one retry is not news: its outcome is (one line).
                log.log(
                    logging.INFO if failure.unusable else logging.WARNING,
                    "model %s %s (attempt %d of %d); retrying in %.1f s: %s",
                    call.model,
                    KIND_TEXT[failure.kind],
                    attempt + 1,
                    limit + 1,
                    wait,
                    failure.detail,
                )
                await self._sleep(wait)
        raise AssertionError("unreachable")  # the loop returns or raises

    async def _call_once(self, call: Call) -> LLMResponse:
        """One HTTP request, recorded in the ledger whatever happens."""
        litellm = await load_litellm_async()
        timeout = self.settings.llm.timeout
        kwargs: dict[str, Any] = {
            "model": call.model,
            "messages": call.messages,
            "timeout": timeout,
            "num_retries": 0,  # retries are ours: they respect Retry-After, budget and fallbacks
            "temperature": self.settings.llm.temperature,
            "drop_params": True,  # e.g. reasoning models that refuse `temperature`
        }
        if call.api_base:
            kwargs["api_base"] = call.api_base
        if call.api_key:
            kwargs["api_key"] = call.api_key
        if call.tools:
            kwargs["tools"] = call.tools
        if call.max_tokens:
            kwargs["max_tokens"] = call.max_tokens
        if call.response_format:
            kwargs["response_format"] = call.response_format
        if call.on_delta is not None:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}

        # The one place every request passes (retries, re-asks, fallbacks, every role): one
        # over llm.max_request_bytes is not sent, whatever built it.
        self.limits.check_request_size(request_bytes(kwargs))
        await self._limit.acquire()
        throttled = False
        try:
            # Counted here, once a slot is free and just before the request leaves: calls
            # queued on the limit when the cap is reached are refused, not sent.
            self.limits.reserve_request()
            start = time.monotonic()
            try:
                raw = await self._request(litellm, kwargs, call)
                response = self._parse(litellm, raw, call.model)
            except Exception as exc:
                failure = classify(exc, litellm, self.retry_after_cap)
                throttled = failure.kind == "rate_limit"
                latency = time.monotonic() - start
                self.ledger.record(
                    CallRecord(call.role, call.model, 0, 0, 0.0, latency, None, failure.kind)
                )
                raise failure from None
            response.latency_s = time.monotonic() - start
        finally:
            self._limit.release(throttled=throttled)
        u = response.usage
        self.ledger.record(
            CallRecord(
                call.role,
                call.model,
                u.prompt_tokens,
                u.completion_tokens,
                u.cost_usd,
                response.latency_s,
                response.finish_reason,
                cached_tokens=u.cached_tokens,
            )
        )
        log.debug(
            "model %s (%s): %d+%d tokens, %.2f s, finish=%s",
            call.model,
            call.role,
            u.prompt_tokens,
            u.completion_tokens,
            response.latency_s,
            response.finish_reason,
        )
        return response

    async def _request(self, litellm: Any, kwargs: dict[str, Any], call: Call) -> Any:
        if call.on_delta is None:
            return await send(litellm, kwargs, None)
        on_delta, answer_no = call.on_delta, call.answer_no

        def on_text(text: str) -> Any:
            call.streamed = True  # from now on a retry would show the text twice
            return on_delta(text, answer_no)

        return await send(litellm, kwargs, on_text)

    def _parse(self, litellm: Any, raw: Any, model: str) -> LLMResponse:
        return parse_response(raw, model, lambda: self.info.cost(litellm, raw, model))
