"""A content-addressed cache of model answers, so re-reviewing unchanged code costs nothing.

The key is a sha256 over everything that decides the answer (model, prompt version, the unit's
patch, the context text); an entry lives in `<cache root>/answers/<key[:2]>/<key>.json`.
Entries are pydantic models: `put` stores one, `lookup(key, Schema)` reads one back as that
type. The cache is best effort: a missing, unreadable, corrupt or stale (no longer valid for
its schema) entry is a miss — decided in `lookup` alone, so callers never guard a read — and
a corrupt or stale entry is removed; a failed write is logged and forgotten; nothing here ever
fails a review. Its size is bounded: every `check_every` writes (and on an instance's first
write) the directory is scanned and the least recently used entries are removed until it is
under 90% of both `max_entries` and `max_bytes` (a read refreshes an entry's mtime, which is
what "used" means).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from redline.files import atomic_write, cache_root, private_dir
from redline.redaction import redact_data

log = logging.getLogger(__name__)

FORMAT = 1
_KEY = re.compile(r"[0-9a-f]{64}")
# Temp files older than this are left over from a crashed write.
_STALE_TMP_SECONDS = 3600.0

M = TypeVar("M", bound=BaseModel)


class AnswerCache(Protocol):
    """What the review stages need of a cache: `ReviewCache`, or a stand-in in a test."""

    def key(self, *parts: str) -> str: ...
    def lookup(self, key: str, schema: type[M]) -> M | None: ...
    def put(self, key: str, entry: BaseModel) -> None: ...


class _Envelope(BaseModel):
    """The file around an entry. The key is repeated inside so a file copied or renamed to
    another key's place reads as a miss, not as that key's answer."""

    format: int = FORMAT
    key: str
    value: dict[str, Any]


class ReviewCache:
    def __init__(
        self,
        root: Path | None = None,
        *,
        max_entries: int = 5000,
        max_bytes: int = 256 * 1024 * 1024,
        check_every: int = 64,
    ) -> None:
        self.dir = (root if root is not None else cache_root()) / "answers"
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.check_every = max(1, check_every)
        self._writes = 0
        self._ready: set[Path] = set()  # shard directories known to exist (skip the mkdir)

    @staticmethod
    def key(*parts: str) -> str:
        """sha256 over `parts`; each is length-prefixed, so ("ab", "c") ≠ ("a", "bc")."""
        h = hashlib.sha256()
        for part in parts:
            # surrogatepass: file text decoded with surrogateescape must still hash.
            data = part.encode("utf-8", "surrogatepass")
            h.update(f"{len(data)}:".encode())
            h.update(data)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.dir / key[:2] / f"{key}.json"

    def lookup(self, key: str, schema: type[M]) -> M | None:
        """The entry under `key` as a `schema`, or None (a miss) when there is none or it is
        bad: unreadable, not JSON, not an entry for this key, or invalid for `schema` (written
        by an older Redline, or damaged). A corrupt or stale entry is removed."""
        path = self._path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:  # left in place: the file may be fine, the reader not
            log.warning("review cache: cannot read %s: %s", path, err)
            return None
        try:
            # pydantic reports bad JSON (and bad UTF-8), a bad envelope and a stale schema alike
            # as a ValidationError: catching only that hides nothing else that goes wrong.
            envelope = _Envelope.model_validate_json(raw)
            if envelope.key != key:
                log.debug("review cache: removing %s: written under another key", path)
                return self._drop(path)
            value = schema.model_validate(envelope.value)
        except ValidationError as err:
            log.debug("review cache: removing bad entry %s: %s", path, err)
            return self._drop(path)
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: last to be evicted
        return value

    @staticmethod
    def _drop(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()

    def put(self, key: str, entry: BaseModel) -> None:
        """Store `entry`, secrets redacted (I/O errors are logged, not raised)."""
        path = self._path(key)
        value = redact_data(entry.model_dump(mode="json"))
        data = json.dumps({"format": FORMAT, "key": key, "value": value}, ensure_ascii=False)
        try:
            if path.parent not in self._ready:
                private_dir(path.parent)
                self._ready.add(path.parent)
            atomic_write(path, data.encode("utf-8"))
        except OSError as err:
            self._ready.discard(path.parent)  # maybe the cache was deleted under us
            log.warning("review cache: cannot write %s: %s", path, err)
            return
        self._writes += 1
        if self._writes == 1 or self._writes % self.check_every == 0:
            self.prune()

    def prune(self) -> int:
        """Evict least recently used entries beyond the bounds; returns how many went."""
        entries: list[tuple[float, int, Path]] = []
        now = time.time()
        try:
            shards = list(os.scandir(self.dir))
        except OSError:
            return 0
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            try:
                files = list(os.scandir(shard.path))
            except OSError:
                continue
            for entry in files:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if entry.name.endswith(".tmp"):
                    if now - st.st_mtime > _STALE_TMP_SECONDS:
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
                    continue
                if entry.name.endswith(".json"):
                    entries.append((st.st_mtime, st.st_size, Path(entry.path)))
        total = sum(size for _, size, _ in entries)
        if len(entries) <= self.max_entries and total <= self.max_bytes:
            return 0
        # Evict to 90% so a full cache is not rescanned on every write.
        keep_entries, keep_bytes = int(self.max_entries * 0.9), int(self.max_bytes * 0.9)
        entries.sort()
        count, removed = len(entries), 0
        for _, size, path in entries:
            if count <= keep_entries and total <= keep_bytes:
                break
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            count, total, removed = count - 1, total - size, removed + 1
        return removed
