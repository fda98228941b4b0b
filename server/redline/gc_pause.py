"""Automatic garbage collection paused while many long-lived, acyclic objects are built."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Automatic cyclic garbage collection off for the duration (if it was on).

    Planning a large diff allocates tens of thousands of container objects that all live on
    (hunks, their line lists, units), and the analyzers' fix verdicts keep the syntax trees of
    the files they parse; neither makes reference cycles. Collections are triggered by
    allocation counts, so while they are built the collector would traverse them again and
    again, and now and then the whole heap (a full collection: tens of milliseconds), without
    ever finding garbage. Paused, they are looked at once, by the first collection after (or
    never, when they are dropped before it). Only the automatic trigger is paused, and only when
    nothing else paused it: whoever turned collection off keeps it off, and a concurrent pause
    leaves it on at worst (slower, not wrong).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
