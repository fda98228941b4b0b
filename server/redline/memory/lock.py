"""One builder at a time per repository: the language server's background refresh and a
`redline memory build` in a terminal must never write the same index at once.

An advisory lock (flock) on a file in Redline's cache, named after the repository's real path,
so it holds whichever store the index lives in. The kernel drops it when the process dies, so
a crashed build never leaves the index locked. (Two machines sharing one PostgreSQL index are
not serialised by it: CI and a developer building the same shared index at once each write
whole files, last one wins.)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from redline.errors import RedlineError
from redline.files import FILE_MODE, cache_root, private_dir

_POLL: Final = 0.05


class MemoryBusyError(RedlineError):
    """Another process is building this repository's memory."""


def lock_path(repo_root: Path) -> Path:
    key = hashlib.sha256(os.fsencode(os.path.realpath(repo_root))).hexdigest()[:24]
    return private_dir(cache_root() / "memory" / "locks") / f"{key}.lock"


@contextlib.contextmanager
def build_lock(
    repo_root: Path, *, timeout: float | None = None, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the repository's build lock for the block. `timeout`: seconds to wait for another
    builder (None: as long as it takes, 0: not at all), then MemoryBusyError; `waiting` is
    called once when the lock is held by someone else (to say so)."""
    path = lock_path(repo_root)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        said = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise MemoryBusyError(
                        "another process is building this repository's memory",
                        hint="wait for it to finish (the language server refreshes it in the "
                        "background), then try again",
                    ) from None
                if not said and waiting is not None:
                    waiting()
                    said = True
                time.sleep(_POLL)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


__all__ = ["MemoryBusyError", "build_lock", "lock_path"]
