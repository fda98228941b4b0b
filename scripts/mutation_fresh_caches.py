"""A pytest plugin for mutation runs (scripts/mutation.py loads it with `-p`): before each test,
every function cache in redline's modules (`functools.cache`, `lru_cache`) is emptied.

mutmut tests each mutant in a process forked from the one that ran the tests on the original
code, so the caches that run filled are inherited: `sanitize_markdown("…")` answered from its
cache never calls the mutated `_clean`, and `detection.all_rules()` hands out the rules the
original rule builders made. A mutant behind a cache then survives whatever the tests assert.
Emptied before each test, every call computes its answer with the code under test.
"""

from __future__ import annotations

import sys

import pytest


def _clear_caches() -> None:
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "redline" or name.startswith("redline.")):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and hasattr(value, "__wrapped__"):
                clear()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _clear_caches()
