"""A real PostgreSQL with pgvector for tests and benchmarks, from the `pgserver` package.

Everything it writes is under one temporary directory: the data directory, its log, its Unix
socket, and pgserver's lock file (pgserver keeps that under the user's runtime directory, read
once when it is imported: XDG_RUNTIME_DIR is pointed at the temporary directory first, and the
class attributes that hold it are set too, in case pgserver was imported before). The server
listens on a Unix socket only, never on a TCP port.

One server per test run: the PostgreSQL tests carry `xdist_group("postgres")` (which groups
again since tests/xdist_groups.py), and in case a run splits them anyway, workers of one run
(PYTEST_XDIST_TESTRUNUID) share one directory and one server: pgserver counts the processes
holding it and the last one to leave stops it and deletes its data; that one also removes the
directory. Starting and leaving are serialised by a lock on a file in that directory (checked to
be the current file after locking, since the last one out deletes it).

As root (CI and this machine), pgserver runs postgres as a `pgserver` system user (PostgreSQL
refuses to run as root), creating that user once with `useradd`, and makes the data directory's
ancestors traversable (g+rx, o+rx) for it: hence a directory directly under the system's
temporary root.

pgserver 0.1.4 has wheels for Python 3.11 and 3.12 only (the lock installs it there): on another
version the PostgreSQL tests are skipped, saying why.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Servers this process holds, by directory, with how many callers hold each: the two test
# modules' session fixtures share one, and only the last to leave lets pgserver go.
_HELD: dict[Path, list[Any]] = {}


@contextlib.contextmanager
def running_postgres(shared: str | None = None) -> Iterator[str]:
    """Start (or, with the same `shared` key, join) a private server; yield its URL (user
    postgres, database postgres); leave it, stopping it and deleting everything it wrote when
    this is the last process using it."""
    if importlib.util.find_spec("pgserver") is None:
        import pytest

        pytest.skip("pgserver (PostgreSQL with pgvector) has no wheel for this Python version")
    if shared is None:
        root = Path(tempfile.mkdtemp(prefix="redline-pg-"))
    else:
        root = Path(tempfile.gettempdir()) / f"redline-pg-{_safe(shared)}"
    if root in _HELD:
        _HELD[root][1] += 1
        try:
            yield _HELD[root][0].get_uri()
        finally:
            _HELD[root][1] -= 1
        return
    saved = os.environ.get("XDG_RUNTIME_DIR")
    server = None
    try:
        with _locked(root):
            server = _start(root)
        _HELD[root] = [server, 1]
        yield server.get_uri()
    finally:
        _HELD.pop(root, None)
        with _locked(root):
            if server is not None:
                server.cleanup()  # stops and deletes pgdata when this was the last handle
                # Else pgserver would run it again at exit, re-creating its lock file here.
                atexit.unregister(server._cleanup)
            if not (root / "pgdata").exists():
                shutil.rmtree(root, ignore_errors=True)
        if saved is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved


def _start(root: Path):  # type: ignore[no-untyped-def]
    runtime = root / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    import fasteners
    import pgserver
    from pgserver.postgres_server import PostgresServer

    own = runtime / "python_PostgresServer"
    own.mkdir(mode=0o700, exist_ok=True)
    PostgresServer.runtime_path = own
    PostgresServer.lock_path = own / ".lockfile"
    PostgresServer._lock = fasteners.InterProcessLock(PostgresServer.lock_path)
    return pgserver.get_server(root / "pgdata", cleanup_mode="delete")


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """An exclusive lock on root/start.lock, creating root if needed; retried when the file
    locked was deleted meanwhile (by the last process out)."""
    while True:
        root.mkdir(mode=0o700, exist_ok=True)
        path = root / "start.lock"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:
            continue  # root was removed between mkdir and open
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(fd).st_ino:
            break
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)


def _safe(key: str) -> str:
    return "".join(c for c in key if c.isalnum())[:24] or "run"
