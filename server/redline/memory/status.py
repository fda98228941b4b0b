"""How memory's state reads to a person: "memory: 1,234 symbols, built 3 min ago".

One wording for every place that shows it (`redline memory status`, a review's coverage, the
language server), from a store's `MemoryMeta` and the clock. Pure: no store is opened here.
"""

from __future__ import annotations

import math
import time
from typing import Final

from redline.memory.model import MemoryMeta
from redline.plural import plural

NOT_BUILT: Final = "memory: not built"


def age_text(seconds: float) -> str:
    """How long ago something happened, for a person: "just now", "3 min ago", "5 h ago",
    "2 days ago". A time in the future (another machine's clock, a shared index) is "just
    now"; an unknown one (NaN) is "at an unknown time"."""
    if math.isnan(seconds):
        return "at an unknown time"
    if seconds < 60:
        return "just now"
    if math.isinf(seconds):
        return "long ago"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min ago"
    hours = int(seconds // 3600)
    if hours < 48:
        return f"{hours} h ago"
    return f"{plural(int(seconds // 86400), 'day')} ago"


def state_text(meta: MemoryMeta, *, now: float | None = None) -> str:
    """What memory holds, without the "memory: " prefix: "1,234 symbols, built 3 min ago"
    (+ ", limits reached: …")."""
    count = f"{meta.symbols:,} symbol{'s' if meta.symbols != 1 else ''}"
    if meta.built_at is None:
        when = "never finished building"
    else:
        when = "built " + age_text((time.time() if now is None else now) - meta.built_at)
    text = f"{count}, {when}"
    if meta.limits_reached:
        text += ", limits reached: " + "; ".join(meta.limits_reached)
    return text


def status_line(meta: MemoryMeta | None, *, now: float | None = None) -> str:
    """ "memory: 1,234 symbols, built 3 min ago", or "memory: not built" for None."""
    if meta is None:
        return NOT_BUILT
    return "memory: " + state_text(meta, now=now)


__all__ = ["NOT_BUILT", "age_text", "state_text", "status_line"]
