"""The one way Redline calls a model: `LLMClient.complete`, over litellm.

What it adds around `litellm.acompletion`:

- per-role model, api_base and fallbacks from settings (`ModelSettings.for_role`);
- secrets redacted from every message before it leaves the process;
- its own retries (exponential backoff with jitter, `Retry-After` honoured) for rate limits,
  5xx, connection errors, timeouts and garbage bodies — then the fallbacks, in order;
- a truncated answer (`finish_reason == "length"`) is asked again once with more room, and
  raises `LLMTruncated` if still cut: a caller never parses half an answer as a whole one;
- tokens, cost and latency of every call in a `UsageLedger`, budgets checked before each call;
- a hard cap on the HTTP requests one client (one review or ask run) may send, retries and
  re-asks included (`max_requests`): past it nothing is sent and `RequestCapReached` is raised;
- a concurrency limit shared by everything using the client, halved on each 429 and raised
  again as calls succeed (`agent/limiter.py`).

litellm is imported on first use only (`agent/litellm_loader.py`: it costs seconds and ~200 MB,
and the language server must start instantly); a model review starts that import in the
background as it begins. Message contents are never logged.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from redline.agent.keys import key_variables, placeholder_key
from redline.agent.limiter import AdaptiveLimit
from redline.agent.litellm_loader import litellm_loaded, load_litellm
from redline.agent.outcomes import (
    KIND_TEXT,
    BudgetExceeded,
    CallFailed,
    DeltaCallback,
    LLMError,
    LLMNotConfigured,
    LLMResponse,
    LLMTimeout,
    LLMTruncated,
    ModelUnusable,
    RequestCapReached,
    ToolCall,
    classify,
    final_error,
    parse_retry_after,
    provider_of,
    unusable_line,
)
from redline.agent.redact import redact_messages
from redline.agent.transport import parse_response, send
from redline.agent.usage import CallRecord, UsageLedger
from redline.config_models import Settings
from redline.redaction import register_secret

log = logging.getLogger(__name__)

# Re-exported: the loader and the call's outcomes live in their own modules.
__all__ = [
    "BudgetExceeded",
    "LLMError",
    "LLMNotConfigured",
    "LLMResponse",
    "LLMTimeout",
    "LLMTruncated",
    "ModelUnusable",
    "RequestCapReached",
    "ToolCall",
    "litellm_loaded",
    "load_litellm",
    "parse_retry_after",
]

# Said to the model when its answer hit the output limit and is asked again. One sentence, so
# it stays here rather than in prompts/.
TRUNCATION_NOTE = (
    "Your previous answer was cut off because it exceeded the output limit. Answer again, "
    "complete and more concise: keep only what matters."
)

DEFAULT_CONTEXT_LIMIT = 128_000
DEFAULT_MAX_OUTPUT_CAP = 16_384


# -- the client --------------------------------------------------------------------------------


class LLMClient:
    """Calls models for roles (planner, reviewer, verifier, summarizer, ask, debater).

    The knobs after `settings` exist for tests and benchmarks: shorter backoffs, an injected
    sleep to observe waits, a shared ledger.

    `max_requests` caps the HTTP requests this client sends (every attempt counts: retries,
    fallbacks, truncation re-asks). It starts as `llm.max_requests`; a caller that knows the
    plan sets a derived cap when the user set none (`review/estimate.py` `request_cap`).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        ledger: UsageLedger | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        retry_after_cap: float = 60.0,
        default_context_limit: int = DEFAULT_CONTEXT_LIMIT,
        max_output_cap: int = DEFAULT_MAX_OUTPUT_CAP,
    ) -> None:
        self.settings = settings
        if settings.models.api_key:
            register_secret(settings.models.api_key, "api-key")  # masked wherever it shows up
        self.ledger = ledger if ledger is not None else UsageLedger()
        self._sleep = sleep
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_cap = retry_after_cap
        self.default_context_limit = default_context_limit
        self.max_output_cap = max_output_cap
        # Fewer requests at once after a 429, more again as calls succeed (agent/limiter.py).
        self._limit = AdaptiveLimit(settings.llm.max_concurrency)
        self._model_info: dict[str, dict[str, Any]] = {}
        self._assigned: dict[str, tuple[str, str | None]] = {}
        self.max_requests: int | None = settings.llm.max_requests
        self.requests_sent = 0  # HTTP requests that left (or were about to leave) the process
        self.requests_refused = 0  # calls refused because the cap was reached
        self._requests_lock = threading.Lock()
        # (model, api_base) → why it cannot be used: later calls fail at once, sending nothing
        # (parallel reviewers would each learn again that the key is wrong).
        self._unusable: dict[tuple[str, str | None], ModelUnusable] = {}
        self.unusable: ModelUnusable | None = None  # the first model found unusable this run

    # -- configuration -------------------------------------------------------------------------

    def assign(self, role: str, model: str, api_base: str | None = None) -> None:
        """Give a role of this run its own model (a debater's `[debate.reviewers.<name>]`):
        it is called with that model and api_base, no fallbacks; the key is shared only when
        the provider is the default model's. Budget, cap and ledger stay the client's."""
        self._assigned[role] = (model, api_base)

    def models_for(self, role: str) -> list[tuple[str, str | None]]:
        """(model, api_base) to try, in order: the role's model, then its fallbacks."""
        return [(model, base) for model, base, _ in self._targets(role)]

    def _targets(self, role: str) -> list[tuple[str, str | None, str | None]]:
        """(model, api_base, api_key) per candidate.

        A fallback shares the role's api_base and configured key only when it is on the same
        provider prefix: `openai/a` → `openai/b` stays on the local server, but `ollama/x` →
        `anthropic/y` must neither go to the Ollama address nor carry another provider's key
        (litellm then reads the provider's own environment variable).
        """
        key = self.settings.models.api_key
        if role in self._assigned:
            mine, base = self._assigned[role]
            # As for fallbacks: the shared api_base and key go only to the default model's
            # provider (with no default model, [models] describes the one endpoint there is).
            default = self.settings.models.model
            same = default is None or provider_of(default) == provider_of(mine)
            shared_base = self.settings.models.api_base if same else None
            return [(mine, base or shared_base, key if same else None)]
        model, api_base, fallbacks = self.settings.models.for_role(role)
        if not model:
            return []
        out = [(model, api_base, key)]
        for fb in fallbacks:
            same = provider_of(fb) == provider_of(model)
            out.append((fb, api_base if same else None, key if same else None))
        return out

    def is_configured(self, role: str) -> bool:
        return bool(self.models_for(role))

    def _info(self, model: str) -> dict[str, Any]:
        if model not in self._model_info:
            try:
                self._model_info[model] = dict(load_litellm().get_model_info(model))
            except Exception:  # litellm raises for models not in its map
                self._model_info[model] = {}
        return self._model_info[model]

    def context_limit(self, role: str) -> int:
        """Input tokens the role's model accepts (litellm's map; a default when unknown)."""
        models = self.models_for(role)
        if not models:
            return self.default_context_limit
        limit = self._info(models[0][0]).get("max_input_tokens")
        return int(limit) if isinstance(limit, int) and limit > 0 else self.default_context_limit

    # -- budget --------------------------------------------------------------------------------

    def check_budget(self) -> None:
        """Raise `BudgetExceeded` if the token or dollar budget is already spent."""
        llm = self.settings.llm
        tokens, usd = self.ledger.total_tokens, self.ledger.cost_usd
        over = []
        if llm.budget_tokens is not None and tokens >= llm.budget_tokens:
            over.append(f"{tokens:,} of {llm.budget_tokens:,} tokens")
        if llm.budget_usd is not None and usd >= llm.budget_usd:
            over.append(f"${usd:.4f} of ${llm.budget_usd:.4f}")
        if over:
            raise BudgetExceeded(
                "model budget exhausted: spent " + " and ".join(over),
                spent_tokens=tokens,
                spent_usd=usd,
                budget_tokens=llm.budget_tokens,
                budget_usd=llm.budget_usd,
            )

    # -- request cap ---------------------------------------------------------------------------

    @property
    def request_cap_reached(self) -> bool:
        """True once no further request may be sent."""
        return self.max_requests is not None and self.requests_sent >= self.max_requests

    def check_request_cap(self) -> None:
        """Raise `RequestCapReached` (counted as a refusal) if no request may be sent."""
        with self._requests_lock:
            self._refuse_if_capped()

    def _reserve_request(self) -> None:
        with self._requests_lock:
            self._refuse_if_capped()
            self.requests_sent += 1

    def _refuse_if_capped(self) -> None:
        if self.max_requests is not None and self.requests_sent >= self.max_requests:
            self.requests_refused += 1
            raise RequestCapReached(self.max_requests)

    # -- calls ---------------------------------------------------------------------------------

    async def complete(
        self,
        role: str,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        response_format: dict[str, Any] | None = None,
        on_delta: DeltaCallback | None = None,
    ) -> LLMResponse:
        """One answer from the role's model (or a fallback).

        With `on_delta` the answer is streamed: the callback gets each content piece and the
        answer number (see `DeltaCallback`); the full `LLMResponse` is still returned.
        Raises `LLMNotConfigured`, `BudgetExceeded`, `RequestCapReached`, `LLMTruncated`,
        `LLMTimeout` or `LLMError`.
        """
        candidates = self._targets(role)
        if not candidates:
            raise LLMNotConfigured(
                f"no model configured for role {role!r}",
                "set [models] model in the user config or REDLINE_MODEL",
            )
        safe = redact_messages(messages)
        failures: list[tuple[str, CallFailed, int]] = []
        unusable: list[ModelUnusable] = []
        for model, api_base, api_key in candidates:
            known = self._unusable.get((model, api_base))
            if known is not None:
                unusable.append(known)
                continue
            if any(_shares_the_fault(u, model, api_base) for u in unusable):
                continue
            placeholder = None if api_key else placeholder_key(model, api_base)
            call = _Call(
                role,
                model,
                api_base,
                api_key or placeholder,
                safe,
                tools,
                max_tokens,
                response_format,
                on_delta,
                placeholder=placeholder is not None,
            )
            try:
                return await self._complete_on(call)
            except _Exhausted as e:
                failures.append((model, e.failure, e.attempts))
                if e.failure.unusable:
                    unusable.append(self._mark_unusable(call, e.failure))
                if len(failures) < len(candidates):
                    log.info(
                        "model %s %s; trying the next fallback", model, KIND_TEXT[e.failure.kind]
                    )
        if not failures or all(f.unusable for _, f, _ in failures):
            # Every candidate is unusable as configured: one line per model, the first first.
            lines = list(dict.fromkeys(u.message for u in unusable))
            first = unusable[0]
            raise ModelUnusable(
                "; ".join(lines),
                first.hint,
                kind=first.kind,
                model=first.model or "",
                api_base=first.api_base,
            )
        raise final_error(role, failures, self.settings.llm.timeout)

    def _mark_unusable(self, call: _Call, failure: CallFailed) -> ModelUnusable:
        """Remember that (model, api_base) cannot be used this run, with its one line."""
        litellm = load_litellm()
        vars_ = key_variables(litellm, call.model) if failure.kind in ("no_key", "auth") else []
        line, hint = unusable_line(
            failure,
            call.model,
            call.api_base,
            key_vars=vars_,
            key_given=call.api_key is not None,
            placeholder=call.placeholder,
        )
        exc = ModelUnusable(line, hint, kind=failure.kind, model=call.model, api_base=call.api_base)
        self._unusable[(call.model, call.api_base)] = exc
        if self.unusable is None:
            self.unusable = exc
        return exc

    async def _complete_on(self, call: _Call) -> LLMResponse:
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
        cap = self._info(model).get("max_output_tokens")
        cap = int(cap) if isinstance(cap, int) and cap > 0 else self.max_output_cap
        base = asked or produced or 1024
        return max(min(2 * base, cap), min(base + 1, cap))

    def _backoff(self, attempt: int) -> float:
        # Full jitter in [0.5, 1] × the exponential step: spreads parallel reviewers apart.
        step = min(self.backoff_max, self.backoff_base * (2**attempt))
        return step * random.uniform(0.5, 1.0)

    async def _with_retries(self, call: _Call) -> LLMResponse:
        attempts = self.settings.llm.max_retries + 1
        for attempt in range(attempts):
            self.check_budget()
            self.check_request_cap()
            call.streamed = False
            try:
                return await self._call_once(call)
            except CallFailed as failure:
                # Once text reached a stream consumer a retry would show it twice: give up here.
                limit = attempts - 1
                if failure.max_retries is not None:
                    limit = min(limit, failure.max_retries)
                if not failure.retryable or call.streamed or attempt >= limit:
                    raise _Exhausted(failure, attempt + 1) from None
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
                    attempts,
                    wait,
                    failure.detail,
                )
                await self._sleep(wait)
        raise AssertionError("unreachable")  # the loop returns or raises

    async def _call_once(self, call: _Call) -> LLMResponse:
        """One HTTP request, recorded in the ledger whatever happens."""
        litellm = load_litellm()
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

        await self._limit.acquire()
        throttled = False
        try:
            # Counted here, once a slot is free and just before the request leaves: calls
            # queued on the limit when the cap is reached are refused, not sent.
            self._reserve_request()
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

    async def _request(self, litellm: Any, kwargs: dict[str, Any], call: _Call) -> Any:
        if call.on_delta is None:
            return await send(litellm, kwargs, None)
        on_delta, answer_no = call.on_delta, call.answer_no

        def on_text(text: str) -> Any:
            call.streamed = True  # from now on a retry would show the text twice
            return on_delta(text, answer_no)

        return await send(litellm, kwargs, on_text)

    def _parse(self, litellm: Any, raw: Any, model: str) -> LLMResponse:
        return parse_response(raw, model, lambda: self._cost(litellm, raw, model))

    def _cost(self, litellm: Any, raw: Any, model: str) -> float | None:
        # Priced from litellm's local map; None (not 0) for models it does not know, so totals
        # can say the cost is incomplete instead of under-reporting it.
        if not self._info(model):
            return None
        try:
            return float(litellm.completion_cost(completion_response=raw, model=model))
        except Exception:
            return None


@dataclass
class _Call:
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


def _shares_the_fault(known: ModelUnusable, model: str, api_base: str | None) -> bool:
    """Whether a fallback would fail for the reason `known` did, so it is not tried: a missing
    or refused key is the provider's (a fallback on the same provider carries the same key),
    an unreachable server is the address's (the same provider at the same api_base). A model
    the server does not know says nothing about the server's other models: those are tried."""
    if known.kind == "unknown_model" or known.model is None:
        return False
    return provider_of(known.model) == provider_of(model) and (
        known.kind != "unreachable" or known.api_base == api_base
    )


class _Exhausted(Exception):
    """All attempts on one model failed (internal: the caller moves to the next fallback)."""

    def __init__(self, failure: CallFailed, attempts: int) -> None:
        super().__init__(failure.detail)
        self.failure = failure
        self.attempts = attempts
