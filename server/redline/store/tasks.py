"""Task records: what each review (or ask, or debate) was, and what each of its stages found.

A record holds `content` (what was reviewed: scope label, units index, settings summary),
`review` (the result), `verification`, `attempts` (one entry per reviewer/verifier round),
`status` (running | done | failed | cancelled), the task id and timestamps, then any other
stage's key. On disk (`records.py`) the content is written once, when the task starts, and each
stage's result to a file of its own, atomically (temp file + fsync + rename): a crash at any
moment leaves the last complete state of every stage readable, and a half-written file is never
read back. `TaskStore.load` returns the merged record, as readers have always had it; records of
the old one-file format are still read (and updated whole).

Records contain the code under review: the directory is 0700 and files 0600, and every value is
redacted (`redline.redaction`) before it is kept, so no secret from the reviewed code reaches
the disk. Task ids are validated against a strict pattern before they touch a path (no `../x`,
no separators). Old records are pruned when a task starts (`retention.py`).
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from redline.errors import RedlineError
from redline.files import cache_root, private_dir
from redline.redaction import redact_data
from redline.store import records, retention
from redline.store.records import TASK_ID, TaskStoreError, TaskSummary
from redline.store.retention import Pruned, RetentionPolicy

if TYPE_CHECKING:
    from redline.config_models import Settings

__all__ = [
    "STATUSES",
    "TASK_ID",
    "Pruned",
    "RetentionPolicy",
    "TaskRecord",
    "TaskStore",
    "TaskStoreError",
    "TaskSummary",
    "validate_task_id",
]

log = logging.getLogger(__name__)

STATUSES = ("running", "done", "failed", "cancelled")
# Keys the store maintains itself; a stage cannot overwrite them by accident.
_MANAGED = frozenset({"content", "task_id", "created_at", "updated_at", "format"})
# Filesystems with coarse timestamps (FAT: 2 s) may store an mtime slightly before the
# `created_at` written into the file; `list` allows for it when it stops reading early.
_MTIME_SLACK = 2.0


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _default(value: object) -> object:
    """JSON for the types stages hand over besides plain data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return value.as_posix()
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"cannot store a {type(value).__name__} in a task record")


def _to_json(value: object) -> Any:
    """A plain-JSON copy of `value`, secrets redacted, so the record in memory is exactly what
    is on disk. Every value a record stores passes here."""
    return redact_data(_plain(value))


def _plain(value: object) -> Any:
    """What `json.loads(json.dumps(value, default=_default))` gives, walked in Python: the C
    encoder and decoder hold the GIL for a whole review's record (~45 ms for 1,200 findings under
    load), which stalls the language server's event loop in the middle of its answers; this
    walk lets other threads run between its steps."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, dict):
        return {_plain_key(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    # Subclasses of the JSON types are written as their base type (an Enum of str: its value).
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__add__("", value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return _plain(_default(value))


def _plain_key(key: object) -> str:
    """A key as json.dumps writes it."""
    if isinstance(key, str):
        return str.__add__("", key)
    if key is None or isinstance(key, bool | int | float):
        return json.dumps(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def validate_task_id(task_id: str) -> str:
    if not isinstance(task_id, str) or not TASK_ID.fullmatch(task_id):
        raise TaskStoreError(
            f"invalid task id {task_id!r}",
            hint="task ids are 1-128 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit",
        )
    return task_id


class TaskRecord:
    """A task's record on disk. Every change is written before it is visible in memory.

    `path` is the record's directory (a format-1 record opened to update: its one file)."""

    def __init__(
        self,
        path: Path,
        data: dict[str, Any],
        clock: Callable[[], datetime] = _utcnow,
        *,
        legacy: bool = False,
    ) -> None:
        self.path = path
        self._data = data
        self._clock = clock
        self._legacy = legacy
        # Stages may finish on different threads (reviewers run in parallel).
        self._lock = threading.Lock()

    @property
    def task_id(self) -> str:
        return str(self._data["task_id"])

    @property
    def status(self) -> str:
        return str(self._data["status"])

    @property
    def data(self) -> dict[str, Any]:
        """A copy of the record as it is on disk."""
        with self._lock:
            return copy.deepcopy(self._data)

    def update(self, key: str, value: object) -> None:
        """Set `key` to a stage's result and write that stage atomically (the content and the
        other stages are not rewritten).

        Raises TypeError for a value that is not JSON-serializable (nothing is written then),
        ValueError for a managed or malformed key or an unknown status, and OSError if the disk
        write fails (the previous record stays intact, and so does this object).
        """
        if key in _MANAGED:
            raise ValueError(f"{key!r} is maintained by the task store")
        if not isinstance(key, str) or not records.STAGE_KEY.fullmatch(key):
            raise ValueError(f"invalid stage key {key!r}: lowercase letters, digits and '_'")
        if key == "status" and value not in STATUSES:
            raise ValueError(f"unknown status {value!r}; expected one of {STATUSES}")
        if key == "attempts" and not isinstance(value, list):
            raise ValueError("attempts must be a list")
        plain = _to_json(value)
        with self._lock:
            self._commit(key, plain)

    def append_attempt(self, attempt: dict[str, Any]) -> None:
        """Add one attempt (reviewer/verifier round) to `attempts`."""
        plain = _to_json(attempt)
        with self._lock:
            self._commit("attempts", [*self._data.get("attempts", []), plain])

    def set_status(self, status: str) -> None:
        self.update("status", status)

    def _commit(self, key: str, value: Any) -> None:
        now = self._clock().isoformat()
        new = dict(self._data)
        new[key] = value
        new["updated_at"] = now
        if self._legacy:
            records.write_legacy(self.path, new)
        else:
            records.write_stage(self.path, key, value, now)
        self._data = new
        if key == "status":
            retention.mark_live(self.path.parent, self.task_id, value == "running")


class TaskStore:
    """All task records under one directory (default: `<cache root>/review_content`).

    `retention`: how many records to keep, and how long (None: the user's `[store]` settings,
    read when first needed)."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        clock: Callable[[], datetime] = _utcnow,
        retention: RetentionPolicy | None = None,
    ) -> None:
        self._root = root if root is not None else cache_root() / "review_content"
        self._clock = clock
        self._retention = retention

    @classmethod
    def for_settings(cls, settings: Settings) -> TaskStore:
        """The store with the retention policy of these settings' `[store]` (user file and
        environment only: config.py refuses it from a repository), so a review does not load
        the settings a second time when its record starts."""
        store = settings.store
        return cls(retention=RetentionPolicy(store.keep_records, store.keep_days))

    @property
    def root(self) -> Path:
        return self._root

    def path_for(self, task_id: str) -> Path:
        """The directory of a task's record."""
        return records.record_dir(self._root, validate_task_id(task_id))

    def create(self, task_id: str, content: dict[str, Any]) -> TaskRecord:
        """Start a record for a new task (status "running"); the id must not exist yet. The
        content is written now, once; then old records may be pruned (`retention.py`)."""
        path = self.path_for(task_id)
        private_dir(self._root)
        plain = _to_json(content)
        if records.legacy_file(self._root, task_id).exists():
            raise TaskStoreError(f"task {task_id!r} already exists", hint=str(path))
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            raise TaskStoreError(f"task {task_id!r} already exists", hint=str(path)) from None
        private_dir(path)  # mkdir's mode is filtered by the umask
        now = self._clock().isoformat()
        head = {"task_id": task_id, "created_at": now, "format": records.FORMAT}
        head.update(records.head_fields(plain))
        retention.mark_live(self._root, task_id, True)
        try:
            records.write_start(path, plain, head)
        except BaseException:
            retention.mark_live(self._root, task_id, False)
            records.remove(records.Entry(task_id, path, False, 0.0))
            raise
        data: dict[str, Any] = {"content": plain}
        data.update(review=None, verification=None, attempts=[], status="running")
        data.update(task_id=task_id, created_at=now, updated_at=now, format=records.FORMAT)
        self._prune_if_due()
        return TaskRecord(path, data, self._clock)

    def load(self, task_id: str) -> dict[str, Any]:
        """The record of `task_id` as a dict (the merged view of its files)."""
        data, _, _ = records.read(self._root, validate_task_id(task_id))
        return data

    def open(self, task_id: str) -> TaskRecord:
        """The record of an existing task, to update it (e.g. mark it cancelled)."""
        data, path, legacy = records.read(self._root, validate_task_id(task_id))
        data.setdefault("task_id", task_id)
        data.setdefault("status", "running")
        return TaskRecord(path, data, self._clock, legacy=legacy)

    def list(
        self, limit: int | None = 20, *, repo: Path | None = None
    ) -> builtins.list[TaskSummary]:
        """The newest tasks first (by creation time), at most `limit` (None: all); with `repo`,
        only the tasks of that repository (its root, as the review recorded it).

        Unreadable or corrupt records are skipped with a warning: one bad file must not hide
        the others. Records are read newest-modified first, and reading stops once no
        remaining one can be newer than what was found (a record is modified after it is
        created). A record's content is never read: its head, status and review suffice.
        """
        if limit is not None and limit <= 0:
            return []
        # Records keep the resolved root the review found (git/discovery.py).
        wanted = str(repo.resolve()) if repo is not None else None
        entries = sorted(records.scan(self._root), key=lambda e: (e.mtime, e.task_id))
        found: builtins.list[TaskSummary] = []
        for entry in reversed(entries):
            if limit is not None and len(found) >= limit:
                oldest_kept = found[limit - 1].created.timestamp()
                if entry.mtime + _MTIME_SLACK < oldest_kept:
                    break
            summary = records.summary(entry)
            if summary is None or (wanted is not None and summary.repo != wanted):
                continue
            found.append(summary)
            found.sort(key=lambda s: (s.created, s.task_id), reverse=True)
            if limit is not None:
                del found[limit:]
        return found

    def retention(self) -> RetentionPolicy:
        if self._retention is None:
            self._retention = retention.policy_from_settings()
        return self._retention

    def prune(self) -> Pruned:
        """Remove the records the retention policy does not keep (never a running one)."""
        return retention.prune(self._root, self.retention(), time.time())

    def _prune_if_due(self) -> None:
        """The policy applied when a task starts: a failure is logged, the task goes on."""
        try:
            policy = self.retention()
            now = time.time()  # against the files' mtimes: the real clock
            if retention.due(self._root, policy, now):
                pruned = retention.prune(self._root, policy, now)
                if pruned.removed:
                    log.info("pruned %d task records (%d bytes)", len(pruned.removed), pruned.bytes)
        except (OSError, RedlineError) as exc:
            log.warning("task records not pruned: %s", exc)
