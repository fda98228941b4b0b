"""Task records: one JSON file per review, rewritten atomically after every stage.

`<root>/<task_id>_content.json` holds, in this order: `content` (what was reviewed: scope
label, units index, settings summary), `review` (the result), `verification`, `attempts`
(one entry per reviewer/verifier round), `status` (running | done | failed | cancelled), the
task id and timestamps, then any other stage's key. Each `update` rewrites the whole file via
temp file + fsync + rename, so a crash at any moment leaves the last complete record on disk:
nothing already written is lost and a half-written file is never read back.

Records contain the code under review: the directory is 0700 and files 0600, and every value is
redacted (`redline.redaction`) before it is kept, so no secret from the reviewed code reaches
the disk. Task ids are validated against a strict pattern before they touch a path (no `../x`,
no separators).
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import dataclasses
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from redline.errors import RedlineError
from redline.files import atomic_write, cache_root, private_dir
from redline.redaction import redact_data

log = logging.getLogger(__name__)

TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
STATUSES = ("running", "done", "failed", "cancelled")
FORMAT = 1
_SUFFIX = "_content.json"
# Keys the store maintains itself; a stage cannot overwrite them by accident.
_MANAGED = frozenset({"task_id", "created_at", "updated_at", "format"})
# Filesystems with coarse timestamps (FAT: 2 s) may store an mtime slightly before the
# `created_at` written into the file; `list` allows for it when it stops reading early.
_MTIME_SLACK = 2.0


class TaskStoreError(RedlineError):
    """A task id is malformed or unknown, or its record cannot be read."""


@dataclasses.dataclass(frozen=True)
class TaskSummary:
    task_id: str
    created: datetime
    status: str
    scope_label: str
    counts: dict[str, int]  # findings per severity ("High": 2, ...); only non-zero entries
    repo: str = ""  # the repository's root as recorded; "" in records from before it was kept
    models: tuple[str, ...] = ()  # the models that ran; empty: an offline review
    tokens: int = 0
    cost_usd: float | None = None  # None: no model ran, or its price is unknown

    @property
    def findings(self) -> int:
        return sum(self.counts.values())


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
    return redact_data(json.loads(json.dumps(value, default=_default, ensure_ascii=False)))


def validate_task_id(task_id: str) -> str:
    if not isinstance(task_id, str) or not TASK_ID.fullmatch(task_id):
        raise TaskStoreError(
            f"invalid task id {task_id!r}",
            hint="task ids are 1-128 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit",
        )
    return task_id


class TaskRecord:
    """A task's record on disk. Every change is written before it is visible in memory."""

    def __init__(
        self, path: Path, data: dict[str, Any], clock: Callable[[], datetime] = _utcnow
    ) -> None:
        self.path = path
        self._data = data
        self._clock = clock
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
        """Set `key` to a stage's result and rewrite the record atomically.

        Raises TypeError for a value that is not JSON-serializable (nothing is written then),
        ValueError for a managed key or an unknown status, and OSError if the disk write fails
        (the previous record stays intact, and so does this object).
        """
        if key in _MANAGED:
            raise ValueError(f"{key!r} is maintained by the task store")
        if key == "status" and value not in STATUSES:
            raise ValueError(f"unknown status {value!r}; expected one of {STATUSES}")
        if key == "attempts" and not isinstance(value, list):
            raise ValueError("attempts must be a list")
        plain = _to_json(value)
        with self._lock:
            self._commit({key: plain})

    def append_attempt(self, attempt: dict[str, Any]) -> None:
        """Add one attempt (reviewer/verifier round) to `attempts`."""
        plain = _to_json(attempt)
        with self._lock:
            attempts = [*self._data.get("attempts", []), plain]
            self._commit({"attempts": attempts})

    def set_status(self, status: str) -> None:
        self.update("status", status)

    def _commit(self, changes: dict[str, Any]) -> None:
        new = dict(self._data)
        new.update(changes)
        new["updated_at"] = self._clock().isoformat()
        _write(self.path, new)
        self._data = new


def _write(path: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2)
    atomic_write(path, text.encode("utf-8"))


class TaskStore:
    """All task records under one directory (default: `<cache root>/review_content`)."""

    def __init__(
        self, root: Path | None = None, *, clock: Callable[[], datetime] = _utcnow
    ) -> None:
        self._root = root if root is not None else cache_root() / "review_content"
        self._clock = clock

    @property
    def root(self) -> Path:
        return self._root

    def path_for(self, task_id: str) -> Path:
        return self._root / f"{validate_task_id(task_id)}{_SUFFIX}"

    def create(self, task_id: str, content: dict[str, Any]) -> TaskRecord:
        """Start a record for a new task (status "running"); the id must not exist yet."""
        path = self.path_for(task_id)
        private_dir(self._root)
        if path.exists():
            raise TaskStoreError(f"task {task_id!r} already exists", hint=str(path))
        now = self._clock().isoformat()
        data: dict[str, Any] = {
            "content": _to_json(content),
            "review": None,
            "verification": None,
            "attempts": [],
            "status": "running",
            "task_id": task_id,
            "created_at": now,
            "updated_at": now,
            "format": FORMAT,
        }
        _write(path, data)
        return TaskRecord(path, data, self._clock)

    def load(self, task_id: str) -> dict[str, Any]:
        """The record of `task_id` as a dict."""
        path = self.path_for(task_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise TaskStoreError(
                f"no review task {task_id!r}",
                hint=f"the id may be mistyped, or the record was removed from {self._root}",
            ) from None
        except OSError as err:
            raise TaskStoreError(f"cannot read task {task_id!r}: {err}") from err
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise TaskStoreError(f"task record {path} is corrupt: {err}") from err
        if not isinstance(data, dict):
            raise TaskStoreError(f"task record {path} is corrupt: not a JSON object")
        return data

    def open(self, task_id: str) -> TaskRecord:
        """The record of an existing task, to update it (e.g. mark it cancelled)."""
        data = self.load(task_id)
        data.setdefault("task_id", task_id)
        data.setdefault("status", "running")
        return TaskRecord(self.path_for(task_id), data, self._clock)

    def list(
        self, limit: int | None = 20, *, repo: Path | None = None
    ) -> builtins.list[TaskSummary]:
        """The newest tasks first (by creation time), at most `limit` (None: all); with `repo`,
        only the tasks of that repository (its root, as the review recorded it).

        Unreadable or corrupt records are skipped with a warning: one bad file must not hide
        the others. Files are read newest-modified first, and reading stops once no remaining
        file can be newer than what was found (a record is modified after it is created).
        """
        if limit is not None and limit <= 0:
            return []
        # Records keep the resolved root the review found (git/discovery.py).
        wanted = str(repo.resolve()) if repo is not None else None
        files: builtins.list[tuple[float, str, Path]] = []
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(self._root):
                name = entry.name
                if not name.endswith(_SUFFIX) or not TASK_ID.fullmatch(name[: -len(_SUFFIX)]):
                    continue
                try:
                    if entry.is_file(follow_symlinks=False):
                        files.append((entry.stat().st_mtime, name, Path(entry.path)))
                except OSError:
                    continue
        files.sort(reverse=True)
        found: builtins.list[TaskSummary] = []
        for mtime, _, path in files:
            if limit is not None and len(found) >= limit:
                oldest_kept = found[limit - 1].created.timestamp()
                if mtime + _MTIME_SLACK < oldest_kept:
                    break
            summary = _summary(path)
            if summary is None or (wanted is not None and summary.repo != wanted):
                continue
            found.append(summary)
            found.sort(key=lambda s: (s.created, s.task_id), reverse=True)
            if limit is not None:
                del found[limit:]
        return found


def _summary(path: Path) -> TaskSummary | None:
    try:
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        created = datetime.fromisoformat(str(data["created_at"]))
        if created.tzinfo is None:
            created = created.replace(tzinfo=UTC)
        task_id = str(data.get("task_id") or path.name[: -len(_SUFFIX)])
        status = str(data.get("status") or "unknown")
        content = data.get("content")
        review = data.get("review")
        coverage = review.get("coverage") if isinstance(review, dict) else None
        coverage = coverage if isinstance(coverage, dict) else {}
        cost = coverage.get("cost_usd")
        return TaskSummary(
            task_id,
            created,
            status,
            _scope_label(content),
            _counts(review),
            repo=str(content.get("repo") or "") if isinstance(content, dict) else "",
            models=tuple(str(m) for m in coverage.get("models") or ()),
            tokens=int(coverage.get("tokens") or 0),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )
    except (OSError, ValueError, KeyError, TypeError) as err:  # JSONDecodeError is a ValueError
        log.warning("skipping unreadable task record %s: %s", path, err)
        return None


def _scope_label(content: object) -> str:
    if not isinstance(content, dict):
        return ""
    label = content.get("scope_label")
    if isinstance(label, str):
        return label
    scope = content.get("scope")
    if isinstance(scope, dict) and isinstance(scope.get("label"), str):
        return str(scope["label"])
    return scope if isinstance(scope, str) else ""


def _counts(review: object) -> dict[str, int]:
    counts: dict[str, int] = {}
    findings = review.get("findings") if isinstance(review, dict) else None
    if isinstance(findings, list):
        for f in findings:
            severity = f.get("severity") if isinstance(f, dict) else None
            if isinstance(severity, str):
                counts[severity] = counts.get(severity, 0) + 1
    return counts
