"""Where a repository's memory is stored, and opening it: SQLite by default, PostgreSQL by URL.

- SQLite (sqlite_store.py): one file per repository in Redline's cache,
  `<cache>/memory/<name>-<hash of the repository's real path>.sqlite3` — private (directory
  0700, file 0600), never inside the repository (a review leaves no trace there, and the
  repository's author cannot plant an index).
- PostgreSQL (pg_store.py): when the USER's settings give `memory.url` (never a repository's
  file — config_repo keeps `memory.*` out of it): a team's index shared across machines and CI,
  one schema per repository key. The key must be the same on every machine, so it is not a path:
  it is derived from the repository's root commit (the same in every clone), else the path.

Both stores hold what this module's rules say: texts as valid Unicode without NUL (`clean_text`),
and caps (`memory.max_symbols`, `memory.max_index_mb`) that `put_file` enforces by refusing the
file (`MemoryFullError`), remembering why, and saying so in `meta().limits_reached` (those rules
are in store_rules.py, which the stores build on; their names are re-exported here).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Final

from redline.errors import RedlineError
from redline.files import cache_root, private_dir
from redline.memory.store_rules import (
    MIB,
    MemoryFullError,
    MemoryStoreError,
    check_vectors,
    clean_text,
    refused_notes,
    size_note,
    symbol_note,
)

if TYPE_CHECKING:
    from redline.config_models import MemorySettings, Settings
    from redline.memory.model import MemoryStore

MEMORY_DIR: Final = "memory"
SUFFIX: Final = ".sqlite3"


def memory_settings(settings: MemorySettings | Settings) -> MemorySettings:
    """The `[memory]` section, given either it or the whole settings."""
    from redline.config_models import MemorySettings

    return settings if isinstance(settings, MemorySettings) else settings.memory


def open_store(repo_root: Path, settings: MemorySettings | Settings) -> MemoryStore:
    """The repository's store, created if absent: PostgreSQL when the user's settings give a
    URL, else the SQLite file in the cache. Raises MemoryStoreError (a clear message, never
    the URL's password) when it cannot be opened."""
    mem = memory_settings(settings)
    if mem.url:
        from redline.memory.pg_store import PgStore

        return PgStore.open(mem.url, pg_schema(repo_root), mem)
    from redline.memory.sqlite_store import SqliteStore

    return SqliteStore.open(store_path(repo_root), mem)


def open_existing_store(repo_root: Path, settings: MemorySettings | Settings) -> MemoryStore | None:
    """The repository's store if one was built, else None: reading never creates one."""
    mem = memory_settings(settings)
    if mem.url:
        from redline.memory.pg_store import PgStore

        return PgStore.open_existing(mem.url, pg_schema(repo_root), mem)
    from redline.memory.sqlite_store import SqliteStore

    path = store_path(repo_root, create_dir=False)
    if not path.is_file():
        return None
    return SqliteStore.open(path, mem)


def forget_store(repo_root: Path, settings: MemorySettings | Settings) -> bool:
    """Delete the repository's store entirely (the file, or the schema); whether one existed."""
    mem = memory_settings(settings)
    if mem.url:
        from redline.memory.pg_rows import drop_schema

        return drop_schema(mem.url, pg_schema(repo_root), mem)
    path = store_path(repo_root, create_dir=False)
    existed = path.exists()
    for extra in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{extra}")
    return existed


def store_path(repo_root: Path, *, create_dir: bool = True) -> Path:
    """`<cache>/memory/<readable name>-<hash of the real path>.sqlite3`. The name is for a
    person listing the directory; the hash keeps two checkouts named alike apart."""
    real = os.path.realpath(repo_root)
    directory = cache_root() / MEMORY_DIR
    if create_dir:
        directory = private_dir(directory)
    return directory / f"{readable_name(Path(real).name)}-{_digest(real)}{SUFFIX}"


def readable_name(name: str) -> str:
    """A directory name as a file-name part: letters, digits, `-`, `_`, `.`; at most 40."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "repo"
    return cleaned[:40]


def pg_schema(repo_root: Path) -> str:
    """The PostgreSQL schema of a repository: `redline_` and a hash of its root commit (the
    same in every clone, so every machine of a team shares it), else of its real path."""
    root = root_commit(repo_root)
    basis = f"commit:{root}" if root else f"path:{os.path.realpath(repo_root)}"
    return f"redline_{_digest(basis)}"


def root_commit(repo_root: Path) -> str | None:
    """The smallest id among the root commits reachable from HEAD (git through the hardened
    runner), or None (not a repository, no commit yet)."""
    from redline.git.runner import GitRunner

    runner = GitRunner()
    try:
        out = runner.run_git(
            repo_root,
            "rev-list",
            "--max-parents=0",
            "HEAD",
            "--",
            timeout=30,
            max_output=1 << 20,
        )
    except RedlineError:
        return None
    finally:
        runner.close()
    ids = sorted(re.findall(rb"^[0-9a-f]{40,64}$", out.stdout, re.M)) if out.returncode == 0 else []
    return ids[0].decode() if ids else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


__all__ = [
    "MIB",
    "MemoryFullError",
    "MemoryStoreError",
    "check_vectors",
    "clean_text",
    "forget_store",
    "open_existing_store",
    "open_store",
    "refused_notes",
    "size_note",
    "store_path",
    "symbol_note",
]
