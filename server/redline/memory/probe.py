"""Memory's state for a review's coverage, read beside the review and never waited for.

A review starts the probe first thing; the probe reads the store's status in a thread (the
imports and the store's one query overlap git and the analyzers), and the review takes
whatever it has when it assembles the report: "1,234 symbols, built 3 min ago", "not built",
or — when the store has not answered by then (a PostgreSQL server that is slow to connect) —
that it did not answer. Nothing here builds memory or waits for a build.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from redline.config_models import Settings

NO_ANSWER: Final = "status unknown (the memory store did not answer in time)"
NOT_BUILT: Final = "not built"
_PREFIX: Final = "memory: "


def _sqlite_exists(repo_root: Path) -> bool:
    """Whether the repository's SQLite index exists (store.py is light to import: no numpy)."""
    from redline.memory.store import store_path

    try:
        return store_path(repo_root, create_dir=False).is_file()
    except OSError:
        return True  # let the thread find out and say why


class MemoryProbe:
    """The status line of the repository's memory, read in a daemon thread."""

    def __init__(self, repo_root: Path, settings: Settings) -> None:
        self._text: str | None = None
        self._thread: threading.Thread | None = None
        if settings.memory.url is None and not _sqlite_exists(repo_root):
            self._text = NOT_BUILT  # the common case, said at once: nothing to import or read
            return
        self._thread = threading.Thread(
            target=self._read, args=(repo_root, settings), name="redline-memory-probe", daemon=True
        )
        self._thread.start()

    def _read(self, repo_root: Path, settings: Settings) -> None:
        try:
            from redline.memory.query import memory_status_line

            line = memory_status_line(repo_root, settings)
        except Exception as exc:  # a coverage line, never a failed review
            line = f"{_PREFIX}unavailable ({type(exc).__name__})"
        self._text = line.removeprefix(_PREFIX)

    def state(self, wait: float = 0.5) -> str:
        """ "1,234 symbols, built 3 min ago", "not built", or NO_ANSWER after `wait` seconds."""
        if self._thread is not None:
            self._thread.join(wait)
        return self._text if self._text is not None else NO_ANSWER


__all__ = ["NO_ANSWER", "MemoryProbe"]
