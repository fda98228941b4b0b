"""The one way Redline calls a model: `LLMClient.complete`, over litellm.

What it adds around `litellm.acompletion`, each job in its own module:

- per-role model, api_base and fallbacks from settings (`ModelSettings.for_role`), the
  configured api_base and key only for their own provider (`agent/routing.py`);
- secrets redacted from every message before it leaves the process (here, once per call,
  before any model is tried);
- a model found unusable (no key, key refused, unknown model, unreachable) remembered for the
  run, and its fallbacks that would fail the same way skipped (here and `agent/routing.py`);
- per model (`agent/attempts.py`): its own retries (exponential backoff with jitter,
  `Retry-After` honoured) for rate limits, 5xx, connection errors, timeouts and garbage bodies
  — then the fallbacks, in order; a truncated answer (`finish_reason == "length"`) asked again
  once with more room, `LLMTruncated` if still cut: a caller never parses half an answer as a
  whole one; a concurrency limit shared by everything using the client, halved on each 429 and
  raised again as calls succeed (`agent/limiter.py`);
- tokens, cost and latency of every call in a `UsageLedger` (`agent/attempts.py`, priced by
  `agent/model_info.py`), budgets checked before each call (`agent/spend_limits.py`);
- a hard cap on the HTTP requests one client (one review or ask run) may send, retries and
  re-asks included (`max_requests`): past it nothing is sent and `RequestCapReached` is raised
  (`agent/spend_limits.py`); and on the bytes of any one request (`llm.max_request_bytes`,
  checked in `agent/attempts.py` just before each request leaves): one over it is not sent and
  `RequestTooLarge` is raised.

litellm is imported on first use only (`agent/litellm_loader.py`: it costs seconds and ~200 MB,
and the language server must start instantly); a model review starts that import in the
background as it begins. Message contents are never logged, nor is the key (registered with the
redactor, so it is masked wherever it shows up).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redline.agent.attempts import Attempts, Call, Exhausted
from redline.agent.keys import key_variables, placeholder_key
from redline.agent.litellm_loader import litellm_loaded, load_litellm
from redline.agent.model_info import ModelInfo
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
    RequestTooLarge,
    ToolCall,
    final_error,
    parse_retry_after,
    unusable_line,
)
from redline.agent.redact import redact_messages
from redline.agent.routing import Routes, shares_the_fault
from redline.agent.spend_limits import SpendLimits
from redline.agent.usage import UsageLedger
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
    "RequestTooLarge",
    "ToolCall",
    "litellm_loaded",
    "load_litellm",
    "parse_retry_after",
]

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
        self.default_context_limit = default_context_limit
        self._routes = Routes(settings)
        self._info = ModelInfo()
        self._limits = SpendLimits(settings, self.ledger)
        self._attempts = Attempts(
            settings,
            self.ledger,
            self._limits,
            self._info,
            sleep=sleep,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            retry_after_cap=retry_after_cap,
            max_output_cap=max_output_cap,
        )
        # (model, api_base) → why it cannot be used: later calls fail at once, sending nothing
        # (parallel reviewers would each learn again that the key is wrong).
        self._unusable: dict[tuple[str, str | None], ModelUnusable] = {}
        self.unusable: ModelUnusable | None = None  # the first model found unusable this run

    # -- configuration -------------------------------------------------------------------------

    def assign(
        self, role: str, model: str, api_base: str | None = None, api_base_setting: str = ""
    ) -> None:
        """Give a role of this run its own model (a debater's `[debate.reviewers.<name>]`):
        it is called with that model and api_base, no fallbacks; the key is shared only when
        the provider is the default model's. Budget, cap and ledger stay the client's.
        `api_base_setting`: the setting that address comes from ("debate.reviewers.bob.api_base"),
        named by the hint when the model cannot be reached."""
        self._routes.assign(role, model, api_base, api_base_setting)

    def models_for(self, role: str) -> list[tuple[str, str | None]]:
        """(model, api_base) to try, in order: the role's model, then its fallbacks."""
        return [(model, base) for model, base, _ in self._routes.targets(role)]

    def is_configured(self, role: str) -> bool:
        return bool(self.models_for(role))

    def context_limit(self, role: str) -> int:
        """Input tokens the role's model accepts (litellm's map; a default when unknown)."""
        models = self.models_for(role)
        if not models:
            return self.default_context_limit
        return self._info.limit(models[0][0], "max_input_tokens", self.default_context_limit)

    # -- budget and request cap (agent/spend_limits.py) ----------------------------------------

    def check_budget(self) -> None:
        """Raise `BudgetExceeded` if the token or dollar budget is already spent."""
        self._limits.check_budget()

    @property
    def max_requests(self) -> int | None:
        """The cap on HTTP requests (None: no cap)."""
        return self._limits.max_requests

    @max_requests.setter
    def max_requests(self, cap: int | None) -> None:
        self._limits.max_requests = cap

    @property
    def requests_sent(self) -> int:
        """HTTP requests that left (or were about to leave) the process."""
        return self._limits.requests_sent

    @property
    def requests_refused(self) -> int:
        """Calls refused because the cap was reached."""
        return self._limits.requests_refused

    @property
    def requests_too_large(self) -> int:
        """Requests not sent because they were over `llm.max_request_bytes`."""
        return self._limits.requests_too_large

    @property
    def request_cap_reached(self) -> bool:
        """True once no further request may be sent."""
        return self._limits.request_cap_reached

    def check_request_cap(self) -> None:
        """Raise `RequestCapReached` (counted as a refusal) if no request may be sent."""
        self._limits.check_request_cap()

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
        Raises `LLMNotConfigured`, `BudgetExceeded`, `RequestCapReached`, `RequestTooLarge`,
        `LLMTruncated`,
        `LLMTimeout` or `LLMError`.
        """
        candidates = self._routes.targets(role)
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
            if any(shares_the_fault(u, model, api_base) for u in unusable):
                continue
            placeholder = None if api_key else placeholder_key(model, api_base)
            call = Call(
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
                return await self._attempts.run(call)
            except Exhausted as e:
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
        raise final_error(
            role,
            failures,
            self.settings.llm.timeout,
            api_base_setting=self._routes.api_base_setting(role),
        )

    def _mark_unusable(self, call: Call, failure: CallFailed) -> ModelUnusable:
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
            api_base_setting=self._routes.api_base_setting(call.role),
        )
        exc = ModelUnusable(line, hint, kind=failure.kind, model=call.model, api_base=call.api_base)
        self._unusable[(call.model, call.api_base)] = exc
        if self.unusable is None:
            self.unusable = exc
        return exc
