"""How long task records are kept: the newest `keep_records`, none older than `keep_days`.

Applied when a task starts, cheaply: the store's names are counted (no stat, nothing read), and
the records are only looked at when the count is 10% over the limit (so a sweep runs once per
that many reviews, and the store holds up to 10% more records between sweeps) or the last age
sweep (a marker file's mtime) is a day old. A sweep stats every record once; it reads nothing
but the status of the records it would remove, and never removes one that is running: a record
this process is still writing, or one whose status is "running" and that was written in the
last week (older than that, its process is gone: a crashed or killed review). `redline history
--prune` runs the same sweep on demand, down to exactly `keep_records`.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from redline.errors import RedlineError
from redline.files import atomic_write
from redline.store import records

log = logging.getLogger(__name__)

DAY = 86400.0
ABANDONED_AFTER = 7 * DAY  # a "running" record unwritten this long has no process behind it
_MARKER = ".last-prune"  # its mtime: when the store was last swept

# Records a process of ours is writing now: (root, task id). Kept whatever their age.
_live: set[tuple[str, str]] = set()
_live_lock = threading.Lock()


def mark_live(root: Path, task_id: str, live: bool) -> None:
    with _live_lock:
        (_live.add if live else _live.discard)((str(root), task_id))


def _is_live(root: Path, task_id: str) -> bool:
    with _live_lock:
        return (str(root), task_id) in _live


@dataclasses.dataclass(frozen=True)
class RetentionPolicy:
    keep_records: int = 200  # 0: no limit by count
    keep_days: float = 30.0  # 0: no limit by age


@dataclasses.dataclass(frozen=True)
class Pruned:
    removed: builtins.list[str]  # task ids, oldest last
    bytes: int
    kept: int


def policy_from_settings() -> RetentionPolicy:
    """The `[store]` settings of the user file and environment (a repository has no say)."""
    from redline.config import load_settings

    store = load_settings(None).settings.store
    return RetentionPolicy(keep_records=store.keep_records, keep_days=store.keep_days)


def slack(policy: RetentionPolicy) -> int:
    """Records let past `keep_records` before a task's start sweeps (10%): one sweep per that
    many reviews, not one per review. `history --prune` keeps exactly `keep_records`."""
    return policy.keep_records // 10


def due(root: Path, policy: RetentionPolicy, now: float) -> bool:
    """Whether a sweep may remove something: more records than kept (plus the slack), or a day
    since the last age sweep. Costs a listing of names and one stat."""
    if policy.keep_records and records.count(root) > policy.keep_records + slack(policy):
        return True
    if not policy.keep_days:
        return False
    try:
        last = (root / _MARKER).stat().st_mtime
    except OSError:
        return True
    return now - last >= min(DAY, policy.keep_days * DAY)


def prune(
    root: Path,
    policy: RetentionPolicy,
    now: float,
    *,
    keep: Callable[[str], bool] = lambda _task_id: False,
) -> Pruned:
    """Remove the records the policy does not keep, newest kept first; `keep(task_id)` spares
    more (the record a caller just created)."""
    records.remove_leftovers(root)
    entries = sorted(records.scan(root), key=lambda e: (e.mtime, e.task_id), reverse=True)
    max_age = policy.keep_days * DAY if policy.keep_days else None
    removed: builtins.list[str] = []
    freed = kept = 0
    for entry in entries:
        fresh = max_age is None or now - entry.mtime <= max_age
        if fresh and (not policy.keep_records or kept < policy.keep_records):
            kept += 1
            continue
        if keep(entry.task_id) or _running(root, entry, now):
            continue
        size = records.size(entry)
        if records.remove(entry):
            removed.append(entry.task_id)
            freed += size
    if policy.keep_days:
        with contextlib.suppress(OSError):
            atomic_write(root / _MARKER, b"")
    return Pruned(removed=removed, bytes=freed, kept=len(entries) - len(removed))


def _running(root: Path, entry: records.Entry, now: float) -> bool:
    if _is_live(root, entry.task_id):
        return True
    if now - entry.mtime > ABANDONED_AFTER:
        return False
    try:
        return records.status(entry) == "running"
    except (OSError, RedlineError):
        return False  # unreadable: nothing running writes it
