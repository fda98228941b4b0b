"""Task records on disk: a directory per task, its content written once, each stage in its own file.

    <root>/<task_id>.task/          0700
        content.json                {"content": ...}: what was reviewed (scope, units index,
                                    settings summary); written once, when the task starts
        task.json                   {"task_id", "created_at", "format", "scope_label", "repo"};
                                    written right after content.json: a directory without it is
                                    a start that was interrupted, not a record
        stage-<key>.json            {"key", "updated_at", "value"}: one stage's latest result
                                    (review, verification, attempts, status, error, ...)

Every file is written whole via `atomic_write` (temp file + fsync + rename, 0600), so a crash
leaves each file either as it was or complete: a reader sees the last complete state of every
stage and never a half-written file. A stage's write never touches content.json, so a review's
diff index is written once instead of once per stage. `read` merges the files into the record
readers have always had (`content`, `review`, `verification`, `attempts`, `status`, the id and
timestamps, then the other stages' keys by name).

Records written before (format 1) are one file, `<task_id>_content.json`, holding that merged
record; they are still listed, read, updated in place (rewritten whole) and pruned.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import re
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from redline.errors import RedlineError
from redline.files import atomic_write

log = logging.getLogger(__name__)

TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
STAGE_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
FORMAT = 2
DIR_SUFFIX = ".task"
LEGACY_SUFFIX = "_content.json"  # format 1: the whole record in one file
CONTENT = "content.json"
HEAD = "task.json"
_STAGE_PREFIX, _STAGE_SUFFIX = "stage-", ".json"
# The keys every merged record has, in this order, and their value before a stage writes them.
_BASE: tuple[tuple[str, Any], ...] = (
    ("review", None),
    ("verification", None),
    ("attempts", []),
    ("status", "running"),
)


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
    models: tuple[str, ...] = ()  # the models that ran; empty: an offline or a cached review
    cached_models: tuple[str, ...] = ()  # the models whose cached answers it reused
    tokens: int = 0
    cost_usd: float | None = None  # None: no model ran, or its price is unknown

    @property
    def findings(self) -> int:
        return sum(self.counts.values())


@dataclasses.dataclass(frozen=True)
class Entry:
    """One record in the store's directory, known by its name and mtime only (nothing read)."""

    task_id: str
    path: Path
    legacy: bool
    mtime: float  # a directory's changes with every file renamed into it: the last write


def record_dir(root: Path, task_id: str) -> Path:
    return root / f"{task_id}{DIR_SUFFIX}"


def legacy_file(root: Path, task_id: str) -> Path:
    return root / f"{task_id}{LEGACY_SUFFIX}"


def _stage_file(path: Path, key: str) -> Path:
    return path / f"{_STAGE_PREFIX}{key}{_STAGE_SUFFIX}"


def _dump(data: object, *, compact: bool = False) -> bytes:
    if compact:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")


# -- writing -----------------------------------------------------------------------------------


def write_start(path: Path, content: object, head: dict[str, Any]) -> None:
    """The content, then the head that makes the directory a record."""
    atomic_write(path / CONTENT, _dump({"content": content}, compact=True))
    atomic_write(path / HEAD, _dump(head))


def write_stage(path: Path, key: str, value: object, updated_at: str) -> None:
    atomic_write(
        _stage_file(path, key), _dump({"key": key, "updated_at": updated_at, "value": value})
    )


def write_legacy(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, _dump(data))


# -- reading -----------------------------------------------------------------------------------


def _json_object(path: Path) -> dict[str, Any]:
    """A file's JSON object; TaskStoreError if it is not one (FileNotFoundError passes)."""
    raw = path.read_bytes()
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TaskStoreError(f"task record {path} is corrupt: {err}") from err
    if not isinstance(data, dict):
        raise TaskStoreError(f"task record {path} is corrupt: not a JSON object")
    return data


def read(root: Path, task_id: str) -> tuple[dict[str, Any], Path, bool]:
    """The merged record of `task_id`, its path and whether it is a format-1 file."""
    for path, legacy in ((record_dir(root, task_id), False), (legacy_file(root, task_id), True)):
        try:
            return (_json_object(path) if legacy else _merged(path)), path, legacy
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as err:
            raise TaskStoreError(f"cannot read task {task_id!r}: {err}") from err
    raise TaskStoreError(
        f"no review task {task_id!r}",
        hint=f"the id may be mistyped, or the record was removed from {root}",
    )


def _merged(path: Path) -> dict[str, Any]:
    head = _json_object(path / HEAD)
    content = _json_object(path / CONTENT)
    created = str(head.get("created_at") or "")
    data: dict[str, Any] = {"content": content.get("content"), **dict(_BASE)}
    data["attempts"] = []
    data.update(task_id=head.get("task_id"), created_at=created, updated_at=created)
    data["format"] = FORMAT
    extra: dict[str, Any] = {}
    updated = created
    for stage in sorted(path.glob(f"{_STAGE_PREFIX}*{_STAGE_SUFFIX}")):
        try:
            item = _json_object(stage)
        except FileNotFoundError:  # pruned while read
            continue
        key = item.get("key")
        if not isinstance(key, str) or stage.name != _stage_file(path, key).name:
            raise TaskStoreError(f"task record {stage} is corrupt: its key does not match")
        (data if key in data else extra)[key] = item.get("value")
        updated = max(updated, str(item.get("updated_at") or ""))
    data["updated_at"] = updated
    data.update(sorted(extra.items()))
    return data


def scan(root: Path) -> list[Entry]:
    """Every record in `root` with its mtime: one stat per record, nothing read."""
    found: list[Entry] = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for item in os.scandir(root):
            entry = _entry(item)
            if entry is not None:
                found.append(entry)
    return found


def count(root: Path) -> int:
    """How many records `root` holds, from the names alone."""
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        return sum(1 for name in os.listdir(root) if _task_id(name) is not None)
    return 0


def _task_id(name: str) -> tuple[str, bool] | None:
    for suffix, legacy in ((DIR_SUFFIX, False), (LEGACY_SUFFIX, True)):
        if name.endswith(suffix) and TASK_ID.fullmatch(name[: -len(suffix)]):
            return name[: -len(suffix)], legacy
    return None


def _entry(item: os.DirEntry[str]) -> Entry | None:
    parsed = _task_id(item.name)
    if parsed is None:
        return None
    task_id, legacy = parsed
    try:
        if legacy and not item.is_file(follow_symlinks=False):
            return None
        if not legacy and not item.is_dir(follow_symlinks=False):
            return None
        return Entry(task_id, Path(item.path), legacy, item.stat(follow_symlinks=False).st_mtime)
    except OSError:
        return None


def status(entry: Entry) -> str:
    """The record's status ("running" when none was written yet); a format-1 record is read
    whole, a current one only its small status file."""
    if entry.legacy:
        return str(_json_object(entry.path).get("status") or "running")
    try:
        return str(_json_object(_stage_file(entry.path, "status")).get("value") or "running")
    except FileNotFoundError:
        return "running"


def summary(entry: Entry) -> TaskSummary | None:
    """The list line of a record, from its head, status and review (never its content)."""
    try:
        if entry.legacy:
            data = _json_object(entry.path)
            head = {**head_fields(data.get("content")), "created_at": data["created_at"]}
            head["task_id"] = data.get("task_id") or entry.task_id
            state, review = data.get("status"), data.get("review")
        else:
            head = _json_object(entry.path / HEAD)
            state, review = status(entry), _stage_value(entry.path, "review")
        created = datetime.fromisoformat(str(head["created_at"]))
        if created.tzinfo is None:
            created = created.replace(tzinfo=UTC)
        coverage = review.get("coverage") if isinstance(review, dict) else None
        coverage = coverage if isinstance(coverage, dict) else {}
        cost = coverage.get("cost_usd")
        return TaskSummary(
            str(head.get("task_id") or entry.task_id),
            created,
            str(state or "unknown"),
            str(head.get("scope_label") or ""),
            _counts(review),
            repo=str(head.get("repo") or ""),
            models=tuple(str(m) for m in coverage.get("models") or ()),
            cached_models=tuple(str(m) for m in coverage.get("cached_models") or ()),
            tokens=int(coverage.get("tokens") or 0),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )
    except (OSError, ValueError, KeyError, TypeError, RedlineError) as err:
        log.warning("skipping unreadable task record %s: %s", entry.path, err)
        return None


def _stage_value(path: Path, key: str) -> Any:
    try:
        return _json_object(_stage_file(path, key)).get("value")
    except FileNotFoundError:
        return None


def head_fields(content: object) -> dict[str, str]:
    """What `list` shows of a record's content, kept in its head so listing never reads it."""
    repo = content.get("repo") if isinstance(content, dict) else None
    return {"scope_label": _scope_label(content), "repo": str(repo or "")}


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


# -- removing ----------------------------------------------------------------------------------


def size(entry: Entry) -> int:
    """Bytes on disk of a record (its files' sizes)."""
    if entry.legacy:
        with contextlib.suppress(OSError):
            return entry.path.stat().st_size
        return 0
    total = 0
    with contextlib.suppress(OSError):
        for item in os.scandir(entry.path):
            with contextlib.suppress(OSError):
                total += item.stat(follow_symlinks=False).st_size
    return total


def remove(entry: Entry) -> bool:
    """Delete a record; False if it was already gone (another process pruned it).

    A directory is first renamed out of the store's names (one atomic step), so a reader never
    meets a record with some of its files deleted; only then is it deleted."""
    if entry.legacy:
        try:
            entry.path.unlink()
        except FileNotFoundError:
            return False
        return True
    doomed = entry.path.with_name(f".{entry.path.name}.removing-{uuid.uuid4().hex[:12]}")
    try:
        os.replace(entry.path, doomed)
    except FileNotFoundError:
        return False
    shutil.rmtree(doomed, ignore_errors=True)
    return True


def remove_leftovers(root: Path) -> None:
    """Directories a process renamed to delete and then died before it could."""
    with contextlib.suppress(OSError):
        for item in os.scandir(root):
            if item.name.startswith(".") and ".removing-" in item.name:
                shutil.rmtree(item.path, ignore_errors=True)
