"""How many model requests one client keeps in flight: up to `llm.max_concurrency`, halved each
time the provider answers 429 (rate limited), and raised again by one after each full round
(as many successes as the current limit) without one — additive increase, multiplicative
decrease, as TCP does. Retries already honour Retry-After; this keeps the other calls from
hitting the same wall meanwhile.
"""

from __future__ import annotations

import asyncio
from collections import deque


class AdaptiveLimit:
    """A semaphore whose size moves between 1 and `ceiling`. Release is synchronous (safe in a
    `finally` of a cancelled task); waiters are woken in arrival order."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self.limit = ceiling
        self.active = 0
        self._successes = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        while self.active >= self.limit:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self._wake()  # it was handed a slot it will not use: pass it on
                raise
        self.active += 1

    def release(self, *, throttled: bool = False) -> None:
        self.active -= 1
        if throttled:
            self.limit = max(1, self.limit // 2)
            self._successes = 0
        else:
            self._successes += 1
            if self.limit < self.ceiling and self._successes >= self.limit:
                self.limit += 1
                self._successes = 0
        self._wake()

    def _wake(self) -> None:
        free = self.limit - self.active
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1
