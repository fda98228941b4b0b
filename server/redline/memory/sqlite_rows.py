"""The SQLite store's tables and the statements one file's rows take (sqlite_store.py uses them):
the schema, the private file's creation, transactions, meta values, deleting and inserting a
file, and reading a symbol back.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from redline.files import FILE_MODE
from redline.memory import lexical
from redline.memory.model import (
    FileGraph,
    StoredSymbol,
    Symbol,
    Vectors,
)
from redline.memory.store_rules import (
    MemoryStoreError,
    clean_text,
)

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, blob TEXT NOT NULL, language TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS symbols (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, qualname TEXT NOT NULL, name TEXT NOT NULL,
    kind TEXT NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, language TEXT NOT NULL,
    signature TEXT NOT NULL, docstring TEXT NOT NULL, body TEXT NOT NULL
);
-- Vectors apart from the texts: reading the matrix reads these pages only, not every body.
CREATE TABLE IF NOT EXISTS vectors (
    id INTEGER PRIMARY KEY, dim INTEGER NOT NULL, vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors_dim ON vectors(dim, id);
CREATE INDEX IF NOT EXISTS symbols_path ON symbols(path);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name);
CREATE TABLE IF NOT EXISTS edges (
    path TEXT NOT NULL, line INTEGER NOT NULL, kind TEXT NOT NULL, source TEXT NOT NULL,
    target TEXT NOT NULL, text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_target ON edges(target, kind);
CREATE INDEX IF NOT EXISTS edges_path ON edges(path);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS refused (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical USING fts5(
    words, qualname, signature, docstring, tokenize = 'unicode61 remove_diacritics 2'
);
"""

SYMBOL_COLUMNS: Final = (
    'id, path, qualname, kind, start, "end", language, signature, docstring, body'
)


# -- helpers -------------------------------------------------------------------------------


def create_private(path: Path) -> None:
    """Create the database file 0600 if absent; refuse one that is a link or not ours."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, FILE_MODE)
    except OSError as exc:
        raise MemoryStoreError(
            f"cannot open project memory {path}: {exc.strerror or exc}",
            hint="it must be a regular file (not a symbolic link) in Redline's cache",
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            raise MemoryStoreError(f"project memory {path} is not a regular file of this user")
        if stat.S_IMODE(st.st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)  # an older or copied file: ours again
    finally:
        os.close(fd)


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Commit what the block did, or roll it back on any error."""
    try:
        yield
        if conn.in_transaction:
            conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def get_value(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def put_value(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def symbol_count(conn: sqlite3.Connection) -> int:
    """The symbols stored, kept in `meta` by every write (a count(*) per put_file would make
    a build quadratic)."""
    kept = get_value(conn, "symbol_count")
    if kept is not None:
        return int(kept)
    return int(conn.execute("SELECT count(*) FROM symbols").fetchone()[0])


def delete_path(conn: sqlite3.Connection, path: str) -> int:
    """Delete a file's rows; how many symbols it had."""
    for table, key in (("lexical", "rowid"), ("vectors", "id")):
        conn.execute(
            f"DELETE FROM {table} WHERE {key} IN (SELECT id FROM symbols WHERE path = ?)",
            (path,),
        )
    deleted = conn.execute("DELETE FROM symbols WHERE path = ?", (path,)).rowcount
    conn.execute("DELETE FROM edges WHERE path = ?", (path,))
    conn.execute("DELETE FROM files WHERE path = ?", (path,))
    return max(deleted, 0)


def insert_file(
    conn: sqlite3.Connection, graph: FileGraph, blob: str, rows: Vectors | None
) -> None:
    c = clean_text
    conn.execute(
        "INSERT INTO files(path, blob, language) VALUES (?, ?, ?)",
        (c(graph.path), c(blob), c(graph.language)),
    )
    for i, s in enumerate(graph.symbols):
        qualname, signature, docstring = c(s.qualname), c(s.signature), c(s.docstring)
        cur = conn.execute(
            'INSERT INTO symbols(path, qualname, name, kind, start, "end", language, '
            "signature, docstring, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                c(graph.path),
                qualname,
                c(s.name),
                s.kind,
                s.start,
                s.end,
                c(s.language),
                signature,
                docstring,
                c(s.body),
            ),
        )
        if rows is not None:
            conn.execute(
                "INSERT INTO vectors(id, dim, vector) VALUES (?, ?, ?)",
                (cur.lastrowid, rows.shape[1], np.asarray(rows[i], dtype="<f4").tobytes()),
            )
        conn.execute(
            "INSERT INTO lexical(rowid, words, qualname, signature, docstring) "
            "VALUES (?, ?, ?, ?, ?)",
            (cur.lastrowid, lexical.symbol_words(qualname), qualname, signature, docstring),
        )
    conn.executemany(
        "INSERT INTO edges(path, line, kind, source, target, text) VALUES (?, ?, ?, ?, ?, ?)",
        [(c(graph.path), e.line, e.kind, c(e.source), c(e.target), c(e.text)) for e in graph.edges],
    )


def estimate_bytes(graph: FileGraph, rows: Vectors | None) -> int:
    """Roughly the bytes a file adds: its texts (stored, and indexed by FTS) and vectors."""
    texts = sum(
        len(s.body) + 2 * (len(s.signature) + len(s.docstring) + len(s.qualname)) + 64
        for s in graph.symbols
    )
    edges = sum(len(e.text) + len(e.source) + len(e.target) + 32 for e in graph.edges)
    return texts + edges + (0 if rows is None else rows.nbytes)


def stored_symbol(row: Sequence[Any]) -> StoredSymbol:
    sid, path, qualname, kind, start, end, language, signature, docstring, body = row
    return StoredSymbol(
        sid, Symbol(path, qualname, kind, start, end, language, signature, docstring, body)
    )
