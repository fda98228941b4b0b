"""A real PostgreSQL with pgvector for tests and benchmarks, from the `pgserver` package.

Everything it writes is under one temporary directory: the data directory, its log, its Unix
socket, and pgserver's lock file (pgserver keeps that under the user's runtime directory, read
once when it is imported: XDG_RUNTIME_DIR is pointed at the temporary directory first, and the
class attributes that hold it are set too, in case pgserver was imported before). The server
listens on a Unix socket only, never on a TCP port.

As root (CI and this machine), pgserver runs postgres as a `pgserver` system user (PostgreSQL
refuses to run as root), creating that user once with `useradd`, and makes the data directory's
ancestors traversable (g+rx, o+rx) for it: hence a directory under the system's temporary root,
not a deep private one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def running_postgres() -> Iterator[str]:
    """Start a private server; yield its URL (user postgres, database postgres); stop it and
    delete everything it wrote."""
    root = Path(tempfile.mkdtemp(prefix="redline-pg-"))
    runtime = root / "runtime"
    runtime.mkdir(mode=0o700)
    saved = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    server = None
    try:
        import fasteners
        import pgserver
        from pgserver.postgres_server import PostgresServer

        own = runtime / "python_PostgresServer"
        own.mkdir(mode=0o700)
        PostgresServer.runtime_path = own
        PostgresServer.lock_path = own / ".lockfile"
        PostgresServer._lock = fasteners.InterProcessLock(PostgresServer.lock_path)
        server = pgserver.get_server(root / "pgdata", cleanup_mode="delete")
        yield server.get_uri()
    finally:
        if server is not None:
            server.cleanup()
        if saved is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved
        shutil.rmtree(root, ignore_errors=True)
