"""Token and cost accounting for model calls.

Every HTTP call to a model — including retries that failed after spending nothing and a
truncated answer that had to be asked again — is one `CallRecord` in a `UsageLedger`. The
ledger is what budgets are enforced against and what a report's "what it cost" line shows.

Cost is known only for models in litellm's (local) price map. When any call's cost is unknown
the total is the sum of the known costs and `cost_complete` is False, so a report can say
"at least $0.12" instead of pretending to know.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from redline.money import usd
from redline.progress import ProgressEvent, Stage


@dataclass
class Usage:
    """Tokens and cost of one or more calls. `cost_usd` is None when any part was unpriced."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    calls: int = 0
    cached_tokens: int = 0  # of the prompt tokens, read from the provider's prompt cache

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        cost = (
            None
            if self.cost_usd is None or other.cost_usd is None
            else self.cost_usd + other.cost_usd
        )
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            cost,
            self.calls + other.calls,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True)
class CallRecord:
    role: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None: the model is not in the price map
    latency_s: float
    finish_reason: str | None
    error: str | None = None  # exception class name when the call failed
    cached_tokens: int = 0  # prompt tokens the provider served from its prompt cache

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class RoleTotals:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0  # known costs only
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class UsageLedger:
    """Everything spent, per call, per role and in total. Safe to share between clients."""

    records: list[CallRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, rec: CallRecord) -> None:
        with self._lock:
            self.records.append(rec)

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.records)

    @property
    def completion_tokens(self) -> int:
        return sum(r.completion_tokens for r in self.records)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cached_tokens(self) -> int:
        """Prompt tokens the providers said they read from their prompt cache."""
        return sum(r.cached_tokens for r in self.records)

    @property
    def cost_usd(self) -> float:
        """Sum of the known costs (see `cost_complete`)."""
        return sum(r.cost_usd for r in self.records if r.cost_usd is not None)

    @property
    def cost_complete(self) -> bool:
        """False when a call that spent tokens could not be priced (model not in the map)."""
        return all(r.cost_usd is not None for r in self.records if r.total_tokens)

    def event(
        self, stage: Stage, text: str, done: int | None = None, total: int | None = None
    ) -> ProgressEvent:
        """A progress event carrying what has been spent so far: the cost None while it is not
        known — before any answer, too (a model without a price is known as such only once it
        answered, and "$0.0000" for it would be false)."""
        known = self.cost_complete and self.total_tokens > 0
        return ProgressEvent(
            stage,
            text,
            done,
            total,
            tokens=self.total_tokens,
            cost_usd=self.cost_usd if known else None,
        )

    @property
    def models(self) -> list[str]:
        """Models that answered, in first-use order."""
        seen: dict[str, None] = {}
        for r in self.records:
            if r.error is None:
                seen.setdefault(r.model, None)
        return list(seen)

    def by_role(self) -> dict[str, RoleTotals]:
        out: dict[str, RoleTotals] = {}
        for r in self.records:
            t = out.setdefault(r.role, RoleTotals())
            t.prompt_tokens += r.prompt_tokens
            t.completion_tokens += r.completion_tokens
            t.cost_usd += r.cost_usd or 0.0
            t.calls += 1
        return out

    def total(self) -> Usage:
        return Usage(
            self.prompt_tokens,
            self.completion_tokens,
            self.cost_usd if self.cost_complete else None,
            len(self.records),
        )

    def describe(self) -> str:
        """One line for reports: '12,345 tokens, $0.0123' / 'at least $0.01' / 'unpriced'."""
        tokens = f"{self.total_tokens:,} tokens"
        if self.cached_tokens:
            tokens += f" ({self.cached_tokens:,} prompt tokens from the provider's cache)"
        if not self.records or (self.cost_complete and self.cost_usd == 0.0):
            return tokens if self.total_tokens else "no model calls"
        if self.cost_complete:
            return f"{tokens}, {usd(self.cost_usd)}"
        if self.cost_usd:
            return f"{tokens}, at least {usd(self.cost_usd)} (some models unpriced)"
        return f"{tokens}, {usd(None)} (model not in litellm's price map)"
