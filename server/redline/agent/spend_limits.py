"""What one client (one review or ask run) may still spend, checked before every request: the
token and dollar budget (`llm.budget_tokens`, `llm.budget_usd`, against the client's
`UsageLedger`) and the cap on HTTP requests (`max_requests`: every attempt counts — retries,
fallbacks, truncation re-asks). Past either, nothing more is sent. And the size of each
request (`llm.max_request_bytes`): one over it is not sent, the others go on.
"""

from __future__ import annotations

import threading

from redline.agent.outcomes import BudgetExceeded, RequestCapReached, RequestTooLarge
from redline.agent.usage import UsageLedger
from redline.config_models import Settings


class SpendLimits:
    """The budget and the request cap of one client, and the requests it sent or refused."""

    def __init__(self, settings: Settings, ledger: UsageLedger) -> None:
        self.settings = settings
        self.ledger = ledger
        self.max_requests: int | None = settings.llm.max_requests
        self.requests_sent = 0  # HTTP requests that left (or were about to leave) the process
        self.requests_refused = 0  # calls refused because the cap was reached
        self.max_request_bytes = settings.llm.max_request_bytes
        self.requests_too_large = 0  # requests not sent for their size
        self._lock = threading.Lock()

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
        with self._lock:
            self._refuse_if_capped()

    def reserve_request(self) -> None:
        """Count one request about to be sent, or raise `RequestCapReached` (a refusal)."""
        with self._lock:
            self._refuse_if_capped()
            self.requests_sent += 1

    def _refuse_if_capped(self) -> None:
        if self.max_requests is not None and self.requests_sent >= self.max_requests:
            self.requests_refused += 1
            raise RequestCapReached(self.max_requests)

    # -- request size --------------------------------------------------------------------------

    def check_request_size(self, size: int) -> None:
        """Raise `RequestTooLarge` (counted) when a request of `size` bytes may not be sent."""
        if size > self.max_request_bytes:
            with self._lock:
                self.requests_too_large += 1
            raise RequestTooLarge(size, self.max_request_bytes)
