"""How memory's state reads: humanised ages and the status line (memory/status.py)."""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from redline.memory.model import MemoryMeta
from redline.memory.status import NOT_BUILT, age_text, status_line

_AGE = re.compile(r"just now|(\d+) (min|h|days?) ago")
_UNIT_SECONDS = {"min": 60, "h": 3600, "day": 86400, "days": 86400}


def _seconds_floor(text: str) -> float:
    """The least number of seconds an age text can stand for."""
    match = _AGE.fullmatch(text)
    assert match is not None, text
    if text == "just now":
        return -math.inf
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2)]


@given(st.floats(min_value=-1e9, max_value=1e10, allow_nan=False))
def test_every_age_reads_as_a_whole_number_of_a_unit_or_just_now(seconds: float) -> None:
    text = age_text(seconds)
    match = _AGE.fullmatch(text)
    assert match is not None, text
    if match.group(1) is not None:
        n = int(match.group(1))
        assert n >= 1
        # Never more than the time that passed, never a whole unit less.
        floor = n * _UNIT_SECONDS[match.group(2)]
        assert floor <= seconds < floor + _UNIT_SECONDS[match.group(2)]
        if match.group(2).startswith("day"):
            assert match.group(2) == ("day" if n == 1 else "days")


@given(
    st.floats(min_value=0, max_value=1e10, allow_nan=False),
    st.floats(min_value=0, max_value=1e10, allow_nan=False),
)
def test_older_never_reads_younger(a: float, b: float) -> None:
    young, old = sorted((a, b))
    assert _seconds_floor(age_text(young)) <= _seconds_floor(age_text(old))


def test_examples_and_odd_clocks() -> None:
    assert age_text(0) == "just now"
    assert age_text(-30) == "just now"  # a shared index built by a machine whose clock is ahead
    assert age_text(59.9) == "just now"
    assert age_text(180) == "3 min ago"
    assert age_text(3 * 3600) == "3 h ago"
    assert age_text(86400 * 2) == "2 days ago"
    assert age_text(math.nan) == "at an unknown time"
    assert age_text(math.inf) == "long ago"


@given(
    st.integers(min_value=0, max_value=10**9),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
    st.lists(st.text(min_size=1, max_size=30), max_size=3),
)
def test_status_line_says_count_age_and_limits(symbols: int, age: float, limits: list[str]) -> None:
    now = 2_000_000_000.0
    meta = MemoryMeta(symbols=symbols, built_at=now - age, limits_reached=limits)
    line = status_line(meta, now=now)
    noun = "symbol" if symbols == 1 else "symbols"
    assert line.startswith(f"memory: {symbols:,} {noun}, built {age_text(age)}")
    if limits:
        assert line.endswith(", limits reached: " + "; ".join(limits))
    else:
        assert "limits" not in line


def test_not_built() -> None:
    assert status_line(None) == NOT_BUILT == "memory: not built"
    assert status_line(MemoryMeta(symbols=1234, built_at=1000.0), now=1180.0) == (
        "memory: 1,234 symbols, built 3 min ago"
    )
