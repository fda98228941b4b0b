"""Redline's own files: task records and caches (on disk, private, never inside .git)."""

from redline.files import CACHE_ENV, cache_root
from redline.store.cache import AnswerCache, ReviewCache
from redline.store.tasks import (
    STATUSES,
    Pruned,
    RetentionPolicy,
    TaskRecord,
    TaskStore,
    TaskStoreError,
    TaskSummary,
    validate_task_id,
)

__all__ = [
    "CACHE_ENV",
    "STATUSES",
    "AnswerCache",
    "Pruned",
    "RetentionPolicy",
    "ReviewCache",
    "TaskRecord",
    "TaskStore",
    "TaskStoreError",
    "TaskSummary",
    "cache_root",
    "validate_task_id",
]
