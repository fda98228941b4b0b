"""The default store: one SQLite file per repository in Redline's cache (store.py says where).

- Private: the directory is 0700 and the file is created 0600 by `os.open` before SQLite
  opens it (no moment under the umask; SQLite gives its -wal and -shm files the database
  file's mode). An existing file must be a regular file of ours, not a link.
- WAL: a background builder writes while a review reads, each in its own connection or
  process; a writer waits (busy timeout) rather than failing when another one is writing.
- Vectors are a plain float32 matrix searched with numpy, not a vector extension: this
  Python's sqlite3 cannot load extensions (`enable_load_extension` is not compiled in), so
  sqlite-vec is out; and at the sizes memory holds one exact matrix product is cheap
  (benchmarks/memory_store.py, 384 dimensions: ~5 ms of CPU at 10,000 symbols, ~19 ms at
  100,000; exact, so no recall lost). The matrix is read once and kept
  until the store changes: every write bumps a generation counter in `meta`, which a reader
  compares before each search (another process's writes included). The vectors have a table of
  their own, so reading the matrix reads their pages only, not every symbol's body.
- Lexical search is FTS5 over identifier words (lexical.py), qualname, signature and
  docstring, ranked by bm25; a query is quoted word by word (lexical.fts5_query), so no text
  is an FTS5 syntax error or an injection.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from redline.memory import lexical
from redline.memory.model import (
    Edge,
    EdgeKind,
    FileGraph,
    MemoryMeta,
    StoredSymbol,
    Vectors,
)
from redline.memory.sqlite_rows import (
    SCHEMA,
    SYMBOL_COLUMNS,
    create_private,
    delete_path,
    estimate_bytes,
    get_value,
    insert_file,
    put_value,
    stored_symbol,
    symbol_count,
    transaction,
)
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
    from redline.config_models import MemorySettings

SCHEMA_VERSION: Final = 2
BUSY_TIMEOUT_MS: Final = 10_000
MAX_EDGES_RETURNED: Final = 10_000  # edges_to of a name used everywhere ("get") stays bounded
# bm25 weights of the FTS columns: identifier words, qualname, signature, docstring.
BM25_WEIGHTS: Final = (4.0, 2.0, 1.0, 1.0)
LIVE_META: Final = ("symbols", "files", "edges", "size_bytes")
_ID_CHUNK: Final = 500  # ids per `IN (...)`: below SQLite's parameter limit


class SqliteStore:
    """A MemoryStore in one SQLite file. Safe to share between threads (one lock)."""

    def __init__(self, path: Path, conn: sqlite3.Connection, settings: MemorySettings) -> None:
        self.path = path
        self._conn = conn
        self._settings = settings
        self._lock = threading.RLock()
        # The vector matrix as last read, and the generation it was read at.
        self._matrix: Vectors | None = None
        self._ids: np.ndarray[Any, np.dtype[np.int64]] | None = None
        self._generation = -1

    @classmethod
    def open(cls, path: Path, settings: MemorySettings) -> SqliteStore:
        create_private(path)
        try:
            conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise MemoryStoreError(f"cannot open project memory {path}: {exc}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(
                "PRAGMA synchronous = NORMAL"
            )  # WAL: durable at checkpoints, never corrupt
            conn.executescript(SCHEMA)  # IF NOT EXISTS: a second process opening it races safely
            with transaction(conn):
                conn.execute("BEGIN IMMEDIATE")
                version = get_value(conn, "schema_version")
                if version is None:
                    put_value(conn, "schema_version", str(SCHEMA_VERSION))
                elif version != str(SCHEMA_VERSION):
                    raise MemoryStoreError(
                        f"project memory {path} was written by another Redline version",
                        hint="run `redline memory forget`, then `redline memory build`",
                    )
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise MemoryStoreError(
                f"project memory {path} is not a usable SQLite database: {exc}",
                hint="run `redline memory forget` to start it again",
            ) from None
        return cls(path, conn, settings)

    # -- writing ---------------------------------------------------------------------------

    def put_file(self, graph: FileGraph, blob: str, vectors: Vectors) -> None:
        rows = check_vectors(graph, vectors)
        path = clean_text(graph.path)
        with self._lock, self._write() as conn:
            count = symbol_count(conn) - delete_path(conn, path)
            reason = self._refusal(conn, graph, rows, count)
            if reason is not None:
                conn.execute(
                    "INSERT OR REPLACE INTO refused(path, reason) VALUES (?, ?)", (path, reason)
                )
            else:
                conn.execute("DELETE FROM refused WHERE path = ?", (path,))
                insert_file(conn, graph, blob, rows)
                count += len(graph.symbols)
            put_value(conn, "symbol_count", str(count))
        if reason is not None:
            raise MemoryFullError(reason, graph.path)

    def remove_files(self, paths: Sequence[str]) -> None:
        with self._lock, self._write() as conn:
            count = symbol_count(conn)
            for path in map(clean_text, paths):
                count -= delete_path(conn, path)
                conn.execute("DELETE FROM refused WHERE path = ?", (path,))
            put_value(conn, "symbol_count", str(count))

    def set_meta(self, meta: MemoryMeta) -> None:
        data = asdict(meta)
        for key in LIVE_META:
            data.pop(key)
        # The store's own notes (refused files) are said by meta() from the refused table.
        own = set(refused_notes(self._refused_counts()))
        data["limits_reached"] = [n for n in meta.limits_reached if n not in own]
        with self._lock, self._write(bump=False) as conn:
            put_value(conn, "meta", json.dumps(data))

    def clear(self) -> None:
        with self._lock:
            with self._write() as conn:
                for table in ("files", "symbols", "vectors", "edges", "refused", "lexical"):
                    conn.execute(f"DELETE FROM {table}")
                conn.execute("DELETE FROM meta WHERE key IN ('meta', 'symbol_count')")
            self._conn.execute("VACUUM")  # give the disk back

    def close(self) -> None:
        with self._lock:
            self._matrix = self._ids = None
            self._conn.close()

    # -- reading ---------------------------------------------------------------------------

    def indexed_files(self) -> dict[str, str]:
        with self._lock:
            return dict(self._conn.execute("SELECT path, blob FROM files"))

    def symbols(self, *, path: str | None = None, name: str | None = None) -> list[StoredSymbol]:
        where, args = [], []
        if path is not None:
            where.append("path = ?")
            args.append(clean_text(path))
        if name is not None:
            where.append("name = ?")
            args.append(clean_text(name))
        sql = f"SELECT {SYMBOL_COLUMNS} FROM symbols"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY path, start, id", args).fetchall()
        return [stored_symbol(r) for r in rows]

    def edges_to(self, name: str, *, kinds: Sequence[EdgeKind] = ("call",)) -> list[Edge]:
        if not kinds:
            return []
        marks = ",".join("?" * len(kinds))
        sql = (
            "SELECT path, line, kind, source, target, text FROM edges "
            f"WHERE target = ? AND kind IN ({marks}) ORDER BY path, line LIMIT ?"
        )
        with self._lock:
            rows = self._conn.execute(
                sql, (clean_text(name), *kinds, MAX_EDGES_RETURNED)
            ).fetchall()
        return [Edge(*r) for r in rows]

    def edges_from(self, path: str) -> list[Edge]:
        sql = (
            "SELECT path, line, kind, source, target, text FROM edges "
            "WHERE path = ? ORDER BY line, rowid"
        )
        with self._lock:
            return [Edge(*r) for r in self._conn.execute(sql, (clean_text(path),))]

    def vectors(self, ids: Sequence[int]) -> dict[int, Vectors]:
        out: dict[int, Vectors] = {}
        wanted = [int(i) for i in dict.fromkeys(ids)]
        with self._lock:
            for start in range(0, len(wanted), _ID_CHUNK):  # SQLite's bound on parameters
                chunk = wanted[start : start + _ID_CHUNK]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT id, vector FROM vectors WHERE id IN ({marks})"
                for sid, blob in self._conn.execute(sql, chunk):
                    out[int(sid)] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return out

    def nearest(self, vector: Vectors, k: int) -> list[tuple[StoredSymbol, float]]:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        if k <= 0 or norm == 0.0 or not np.isfinite(norm):
            return []
        with self._lock:
            matrix, ids = self._vectors(query.shape[0])
            if matrix.shape[0] == 0:
                return []
            scores = matrix @ (query / norm)
            k = min(k, scores.shape[0])
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            found = self._by_ids([int(ids[i]) for i in top])
        return [(found[int(ids[i])], float(scores[i])) for i in top if int(ids[i]) in found]

    def lexical(self, query: str, k: int) -> list[tuple[StoredSymbol, float]]:
        match = lexical.fts5_query(query)
        if match is None or k <= 0:
            return []
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        sql = (
            f"SELECT rowid, bm25(lexical, {weights}) AS score FROM lexical "
            "WHERE lexical MATCH ? ORDER BY score, rowid LIMIT ?"
        )
        with self._lock:
            ranked = self._conn.execute(sql, (match, k)).fetchall()
            found = self._by_ids([r[0] for r in ranked])
        # bm25 is lower-is-better (negative); a Hit's score is higher-is-better.
        return [(found[rowid], -float(rank)) for rowid, rank in ranked if rowid in found]

    def meta(self) -> MemoryMeta:
        with self._lock:
            raw = get_value(self._conn, "meta")
            data: dict[str, Any] = json.loads(raw) if raw else {}
            known = {f.name for f in fields(MemoryMeta)} - set(LIVE_META)
            meta = MemoryMeta(**{k: v for k, v in data.items() if k in known})
            conn = self._conn
            meta.symbols = conn.execute("SELECT count(*) FROM symbols").fetchone()[0]
            meta.files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
            meta.edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
            meta.size_bytes = self._size()
            for note in refused_notes(self._refused_counts()):
                if note not in meta.limits_reached:
                    meta.limits_reached.append(note)
        return meta

    # -- inside ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _write(self, *, bump: bool = True) -> Iterator[sqlite3.Connection]:
        with transaction(self._conn):
            self._conn.execute("BEGIN IMMEDIATE")
            yield self._conn
            if bump:
                gen = int(get_value(self._conn, "generation") or 0) + 1
                put_value(self._conn, "generation", str(gen))

    def _refusal(
        self, conn: sqlite3.Connection, graph: FileGraph, rows: Vectors | None, count: int
    ) -> str | None:
        """Why this file may not be added to `count` symbols (its old version already
        deleted), or None."""
        mem = self._settings
        if count + len(graph.symbols) > mem.max_symbols:
            return symbol_note(mem)
        if self._size() + estimate_bytes(graph, rows) > mem.max_index_mb * MIB:
            return size_note(mem)
        return None

    def _size(self) -> int:
        page_count = self._conn.execute("PRAGMA page_count").fetchone()[0]
        page_size = self._conn.execute("PRAGMA page_size").fetchone()[0]
        return int(page_count * page_size)

    def _refused_counts(self) -> list[tuple[str, int]]:
        with self._lock:
            sql = "SELECT reason, count(*) FROM refused GROUP BY reason ORDER BY reason"
            return [(r, int(n)) for r, n in self._conn.execute(sql)]

    def _vectors(self, dim: int) -> tuple[Vectors, np.ndarray[Any, np.dtype[np.int64]]]:
        generation = int(get_value(self._conn, "generation") or 0)
        if (
            self._matrix is None
            or self._ids is None
            or generation != self._generation
            or self._matrix.shape[1] != dim
        ):
            # Only vectors of the query's dimension are compared (another model's are not).
            rows = self._conn.execute(
                "SELECT id, vector FROM vectors WHERE dim = ? ORDER BY id", (dim,)
            ).fetchall()
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            # Stored unit length (store.check_vectors): the rows' bytes are the matrix, with no
            # copy or normalising (at 100,000 × 384 it is 150 MB; each pass over it costs as
            # much as a search).
            blob = b"".join(r[1] for r in rows)
            self._matrix = np.frombuffer(blob, dtype="<f4").reshape(-1, dim)
            self._ids = ids
            self._generation = generation
        return self._matrix, self._ids

    def _by_ids(self, ids: Sequence[int]) -> dict[int, StoredSymbol]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        sql = f"SELECT {SYMBOL_COLUMNS} FROM symbols WHERE id IN ({marks})"
        return {r[0]: stored_symbol(r) for r in self._conn.execute(sql, list(ids))}
