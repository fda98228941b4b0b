"""The SQLite store's own promises: where it is, that it is private, and that a reader in
another process works while a writer writes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from redline.config_models import MemorySettings
from redline.errors import RedlineError
from redline.memory.model import FileGraph, Symbol
from redline.memory.store import (
    MemoryStoreError,
    forget_store,
    open_existing_store,
    open_store,
    store_path,
)


def put(store, path: str, n: int = 1, dim: int = 4) -> None:  # type: ignore[no-untyped-def]
    syms = tuple(
        Symbol(path, f"f{i}", "function", i * 3 + 1, i * 3 + 2, "python", docstring="hello")
        for i in range(n)
    )
    store.put_file(FileGraph(path, "python", syms), "blob", np.ones((n, dim), dtype=np.float32))


def test_one_private_file_per_repository_in_the_cache(tmp_path: Path) -> None:
    repo = tmp_path / "My Repo!"
    repo.mkdir()
    path = store_path(repo)
    cache = Path(os.environ["REDLINE_CACHE_DIR"])
    assert path.parent == cache.resolve() / "memory"
    assert path.name.startswith("My_Repo-") and path.name.endswith(".sqlite3")
    # Another checkout with the same name is another store; a link to this one is this one.
    other = tmp_path / "elsewhere" / "My Repo!"
    other.mkdir(parents=True)
    assert store_path(other) != path
    (tmp_path / "link").symlink_to(repo)
    assert store_path(tmp_path / "link") == path

    old = os.umask(0)  # the modes must not depend on the umask
    try:
        store = open_store(repo, MemorySettings())
        put(store, "a.py")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for f in path.parent.iterdir():  # the database and its -wal / -shm
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    store.close()


def test_a_store_file_loosened_by_hand_is_made_private_again(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    open_store(repo, MemorySettings()).close()
    path = store_path(repo)
    path.chmod(0o644)
    open_store(repo, MemorySettings()).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_link_in_place_of_the_store_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"")
    store_path(repo).symlink_to(target)
    with pytest.raises(MemoryStoreError, match="cannot open project memory"):
        open_store(repo, MemorySettings())
    assert target.read_bytes() == b""


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    store_path(repo).write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(RedlineError, match="not a usable SQLite database") as info:
        open_store(repo, MemorySettings())
    assert "memory forget" in str(info.value)


def test_reading_never_creates_and_forget_deletes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    assert open_existing_store(repo, MemorySettings()) is None
    assert not store_path(repo).exists()
    store = open_store(repo, MemorySettings())
    put(store, "a.py")
    store.close()
    existing = open_existing_store(repo, MemorySettings())
    assert existing is not None and existing.indexed_files() == {"a.py": "blob"}
    existing.close()
    assert forget_store(repo, MemorySettings()) is True
    assert list(store_path(repo).parent.iterdir()) == []
    assert forget_store(repo, MemorySettings()) is False


_WRITER = textwrap.dedent(
    """
    import sys, numpy as np
    from pathlib import Path
    from redline.config_models import MemorySettings
    from redline.memory.model import FileGraph, Symbol
    from redline.memory.store import open_store

    store = open_store(Path(sys.argv[1]), MemorySettings())
    print("open", flush=True)
    sys.stdin.readline()
    for n in range(200):
        s = Symbol(f"w{n}.py", f"w{n}", "function", 1, 2, "python", docstring="written")
        store.put_file(FileGraph(f"w{n}.py", "python", (s,)), "b", np.ones((1, 4), np.float32))
    store.close()
    print("done", flush=True)
    """
)


def test_another_process_reads_while_one_writes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    reader = open_store(repo, MemorySettings())
    put(reader, "a.py", 3)
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None and writer.stdin is not None
    assert writer.stdout.readline().strip() == "open"
    writer.stdin.write("go\n")
    writer.stdin.flush()
    seen = []
    while writer.poll() is None:
        # Every read sees whole writes only, never an error ("database is locked").
        before = reader.indexed_files()
        found = reader.nearest(np.ones(4, np.float32), 500)
        after = reader.indexed_files()
        assert "a.py" in before
        # a.py has 3 symbols, each other file 1.
        assert len(before) + 2 <= len(found) <= len(after) + 2
        assert {s.symbol.path for s, _ in found} <= set(after)
        seen.append(len(found))
    assert writer.wait(timeout=60) == 0
    assert len(reader.indexed_files()) == 201
    assert len(reader.nearest(np.ones(4, np.float32), 500)) == 203  # the new generation is read
    assert len(set(seen)) > 1  # the reader saw the store grow while it was written
    reader.close()
