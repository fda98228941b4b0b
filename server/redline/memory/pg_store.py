"""The shared store: PostgreSQL with pgvector, for a team that keeps one index across machines
and CI (`memory.url` in the user's settings; store.py derives the schema).

- One schema per repository key (`redline_<hash of the root commit>`), not a `repo` column in
  shared tables: every statement stays as simple as the SQLite store's, a repository's index is
  dropped whole (`DROP SCHEMA … CASCADE`), its size is the sum of its own relations (the
  `max_index_mb` cap), an index (GIN, HNSW) covers one repository's rows only, and no query can
  read another repository's symbols by a missing `WHERE`.
- Vectors: a `vector` column (pgvector), searched by `<=>` (cosine distance) ordering: an exact
  scan while the store is small, an HNSW index once it holds HNSW_MIN_SYMBOLS (made by
  set_meta, at the end of a build; benchmarks/memory_store.py measured when it pays).
- Lexical: a tsvector of the same identifier words as SQLite's FTS5 (lexical.py), built from
  lexemes directly (`array_to_tsvector`, weights A identifier words, B qualname, C signature,
  D docstring), queried with a tsquery made of quoted lexemes — never parsed from the user's
  text — and ranked by ts_rank.
- PostgreSQL refuses NUL in text: texts are cleaned as in every store (store.clean_text).
- Writers to one repository's schema are serialised by an advisory lock (two machines
  refreshing the same file must not both insert it).
- Errors name the host, never the URL's password (url.py).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, fields
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
from redline.memory.pg_rows import (
    SCHEMA_NAME,
    SYMBOL_COLUMNS,
    TABLES,
    connect,
    delete_path,
    estimate_bytes,
    get_value,
    insert_file,
    lexeme,
    lock_key,
    put_value,
    refused_counts,
    scrub,
    stored_symbol,
    symbol_count,
    vector_literal,
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
from redline.memory.url import host_of

if TYPE_CHECKING:
    import psycopg

    from redline.config_models import MemorySettings

SCHEMA_VERSION: Final = 1
MAX_EDGES_RETURNED: Final = 10_000
LIVE_META: Final = ("symbols", "files", "edges", "size_bytes")
MAX_EF_SEARCH: Final = 1000  # pgvector's upper bound for hnsw.ef_search
EF_SEARCH: Final = 100
# From this many symbols on, set_meta (the end of a build) indexes the vectors with HNSW:
# benchmarks/memory_store.py measured the exact scan at 10,000 symbols ~35× slower than the
# index, whose recall@10 on code-like queries was 1.0, built in seconds.
HNSW_MIN_SYMBOLS: Final = 10_000


class PgStore:
    """A MemoryStore in one PostgreSQL schema. One connection; safe between threads (psycopg
    serialises a connection's use)."""

    def __init__(
        self, conn: psycopg.Connection[Any], schema: str, url: str, settings: MemorySettings
    ) -> None:
        self._conn = conn
        self.schema = schema
        self._url = url
        self._settings = settings
        self._lock_key = lock_key(schema)
        self._lock = threading.RLock()  # one transaction at a time on the one connection
        self._ef_search = 40  # the session's (pgvector's default)
        # The HNSW candidate list searched; more is slower and closer to exact
        # (benchmarks/memory_store.py: recall@10 at 100,000 symbols, 40 vs 100).
        self.ef_search = EF_SEARCH

    @classmethod
    def open(cls, url: str, schema: str, settings: MemorySettings) -> PgStore:
        """The store in `schema`, created if absent."""
        store = cls._connect(url, schema, settings)
        store._start(create=True)
        return store

    @classmethod
    def open_existing(cls, url: str, schema: str, settings: MemorySettings) -> PgStore | None:
        """The store in `schema` if it was created, else None (nothing is created)."""
        store = cls._connect(url, schema, settings)
        return store if store._start(create=False) else None

    @classmethod
    def _connect(cls, url: str, schema: str, settings: MemorySettings) -> PgStore:
        if not SCHEMA_NAME.fullmatch(schema):
            raise ValueError(f"not a memory schema name: {schema!r}")
        return cls(connect(url, settings), schema, url, settings)

    def _start(self, *, create: bool) -> bool:
        try:
            with self._errors():
                if not create and not self._exists():
                    self._conn.close()
                    return False
                self._setup()
        except BaseException:
            self._conn.close()
            raise
        return True

    # -- writing ---------------------------------------------------------------------------

    def put_file(self, graph: FileGraph, blob: str, vectors: Vectors) -> None:
        rows = check_vectors(graph, vectors)
        with self._errors(), self._write() as cur:
            count = symbol_count(cur) - delete_path(cur, graph.path)
            reason = self._refusal(cur, graph, rows, count)
            if reason is not None:
                cur.execute(
                    "INSERT INTO refused(path, reason) VALUES (%s, %s) "
                    "ON CONFLICT (path) DO UPDATE SET reason = EXCLUDED.reason",
                    (clean_text(graph.path), reason),
                )
            else:
                cur.execute("DELETE FROM refused WHERE path = %s", (clean_text(graph.path),))
                insert_file(cur, graph, blob, rows)
                count += len(graph.symbols)
            put_value(cur, "symbol_count", str(count))
        if reason is not None:
            raise MemoryFullError(reason, graph.path)

    def remove_files(self, paths: Sequence[str]) -> None:
        with self._errors(), self._write() as cur:
            count = symbol_count(cur)
            for path in paths:
                count -= delete_path(cur, path)
                cur.execute("DELETE FROM refused WHERE path = %s", (clean_text(path),))
            put_value(cur, "symbol_count", str(count))

    def set_meta(self, meta: MemoryMeta) -> None:
        data = asdict(meta)
        for key in LIVE_META:
            data.pop(key)
        with self._errors(), self._write() as cur:
            own = set(refused_notes(refused_counts(cur)))
            data["limits_reached"] = [n for n in meta.limits_reached if n not in own]
            put_value(cur, "meta", json.dumps(data))
            # A build or refresh ends here: the moment to index a store grown large enough.
            if symbol_count(cur) >= HNSW_MIN_SYMBOLS:
                cur.execute(
                    "SELECT dim FROM symbols WHERE dim IS NOT NULL "
                    "GROUP BY dim ORDER BY count(*) DESC LIMIT 1"
                )
                row = cur.fetchone()
                if row is not None:
                    _create_hnsw(cur, int(row[0]))

    def clear(self) -> None:
        with self._errors(), self._write() as cur:
            cur.execute("TRUNCATE files, symbols, edges, refused")
            cur.execute("DELETE FROM meta WHERE key IN ('meta', 'symbol_count')")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def ensure_hnsw(self, dim: int) -> None:
        """An HNSW index (cosine) over the vectors of dimension `dim` now (set_meta makes one
        once the store holds HNSW_MIN_SYMBOLS)."""
        with self._errors(), self._write() as cur:
            _create_hnsw(cur, dim)

    # -- reading ---------------------------------------------------------------------------

    def indexed_files(self) -> dict[str, str]:
        with self._errors(), self._read() as cur:
            cur.execute("SELECT path, blob FROM files")
            return {p: b for p, b in cur.fetchall()}

    def symbols(self, *, path: str | None = None, name: str | None = None) -> list[StoredSymbol]:
        where, args = [], []
        if path is not None:
            where.append("path = %s")
            args.append(clean_text(path))
        if name is not None:
            where.append("name = %s")
            args.append(clean_text(name))
        sql = f"SELECT {SYMBOL_COLUMNS} FROM symbols"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._errors(), self._read() as cur:
            cur.execute(sql + ' ORDER BY path COLLATE "C", start, id', args)
            return [stored_symbol(r) for r in cur.fetchall()]

    def edges_to(self, name: str, *, kinds: Sequence[EdgeKind] = ("call",)) -> list[Edge]:
        if not kinds:
            return []
        with self._errors(), self._read() as cur:
            cur.execute(
                "SELECT path, line, kind, source, target, text FROM edges "
                'WHERE target = %s AND kind = ANY(%s) ORDER BY path COLLATE "C", line, id '
                "LIMIT %s",
                (clean_text(name), list(kinds), MAX_EDGES_RETURNED),
            )
            return [Edge(*r) for r in cur.fetchall()]

    def edges_from(self, path: str) -> list[Edge]:
        with self._errors(), self._read() as cur:
            cur.execute(
                "SELECT path, line, kind, source, target, text FROM edges "
                "WHERE path = %s ORDER BY line, id",
                (clean_text(path),),
            )
            return [Edge(*r) for r in cur.fetchall()]

    def vectors(self, ids: Sequence[int]) -> dict[int, Vectors]:
        wanted = [int(i) for i in dict.fromkeys(ids)]
        if not wanted:
            return {}
        with self._errors(), self._read() as cur:
            # The vector's text form ("[0.1,0.2]"): no pgvector adapter needed on this side.
            cur.execute(
                "SELECT id, vector::text FROM symbols WHERE id = ANY(%s) AND vector IS NOT NULL",
                (wanted,),
            )
            rows = cur.fetchall()
        return {int(sid): _parse_vector(str(text)) for sid, text in rows}

    def nearest(self, vector: Vectors, k: int) -> list[tuple[StoredSymbol, float]]:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        if k <= 0 or norm == 0.0 or not np.isfinite(norm):
            return []
        dim = int(query.shape[0])
        literal = vector_literal(query / norm)
        # The cast matches the HNSW index's expression (ensure_hnsw), which is then used; the
        # index returns at most ef_search rows, so that is raised to k.
        distance = f"(vector::vector({dim}) <=> %s::vector({dim}))"
        ef = min(max(self.ef_search, k), MAX_EF_SEARCH)
        with self._errors(), self._read() as cur:
            if ef != self._ef_search:
                cur.execute(f"SET hnsw.ef_search = {ef}")  # for the session: set once
                self._ef_search = ef
            cur.execute(
                # `dim` inline, not a parameter: a generic plan (psycopg prepares a statement
                # run 5 times) cannot prove `dim = $1` implies the HNSW index's `dim = 384`.
                f"SELECT {SYMBOL_COLUMNS}, {distance} AS d FROM symbols "
                f"WHERE dim = {dim} ORDER BY d LIMIT %s",
                (literal, k),
            )
            rows = cur.fetchall()
        out = []
        for row in rows:
            d = float(row[-1])
            out.append((stored_symbol(row[:-1]), 1.0 - d if np.isfinite(d) else 0.0))
        return out

    def lexical(self, query: str, k: int) -> list[tuple[StoredSymbol, float]]:
        words = lexical.query_words(query)
        if not words or k <= 0:
            return []
        tsquery = " | ".join(lexeme(w) for w in words)
        with self._errors(), self._read() as cur:
            cur.execute(
                f"SELECT {SYMBOL_COLUMNS}, ts_rank(lex, q) AS r "
                "FROM symbols, CAST(%s AS tsquery) AS q WHERE lex @@ q "
                "ORDER BY r DESC, id LIMIT %s",
                (tsquery, k),
            )
            return [(stored_symbol(r[:-1]), float(r[-1])) for r in cur.fetchall()]

    def meta(self) -> MemoryMeta:
        with self._errors(), self._read() as cur:
            raw = get_value(cur, "meta")
            data: dict[str, Any] = json.loads(raw) if raw else {}
            known = {f.name for f in fields(MemoryMeta)} - set(LIVE_META)
            meta = MemoryMeta(**{k: v for k, v in data.items() if k in known})
            cur.execute(
                "SELECT (SELECT count(*) FROM symbols), (SELECT count(*) FROM files), "
                "(SELECT count(*) FROM edges)"
            )
            meta.symbols, meta.files, meta.edges = (int(x) for x in cur.fetchone() or (0, 0, 0))
            meta.size_bytes = self._size(cur)
            for note in refused_notes(refused_counts(cur)):
                if note not in meta.limits_reached:
                    meta.limits_reached.append(note)
        return meta

    # -- inside ------------------------------------------------------------------------------

    def _exists(self) -> bool:
        with self._read() as cur:
            cur.execute(
                "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'meta'",
                (self.schema,),
            )
            return cur.fetchone() is not None

    def _setup(self) -> None:
        from psycopg import errors, sql

        conn = self._conn
        with conn.transaction(), conn.cursor() as cur:
            # One setup at a time on the whole server: CREATE EXTENSION / SCHEMA race otherwise.
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("redline-setup"),))
            try:
                cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except errors.InsufficientPrivilege:
                raise MemoryStoreError(
                    f"the memory database at {host_of(self._url)} has no pgvector extension, "
                    "and this user may not create it",
                    hint="ask its administrator to run CREATE EXTENSION vector in that database",
                ) from None
            cur.execute(
                "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector'"
            )
            row = cur.fetchone()
            ext_schema = str(row[0]) if row else "public"
            cur.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
            cur.execute(
                sql.SQL("SET search_path = {}, {}").format(
                    sql.Identifier(self.schema), sql.Identifier(ext_schema.strip('"'))
                )
            )
            cur.execute(TABLES)
            version = get_value(cur, "schema_version")
            if version is None:
                put_value(cur, "schema_version", str(SCHEMA_VERSION))
            elif version != str(SCHEMA_VERSION):
                raise MemoryStoreError(
                    f"project memory in schema {self.schema} was written by another version "
                    "of Redline",
                    hint="run `redline memory forget`, then `redline memory build`",
                )
        # SET (not SET LOCAL) outlives the transaction: every later statement uses the schema.

    @contextlib.contextmanager
    def _write(self) -> Iterator[psycopg.Cursor[Any]]:
        with self._lock, self._conn.transaction(), self._conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
            yield cur

    @contextlib.contextmanager
    def _read(self) -> Iterator[psycopg.Cursor[Any]]:
        # No explicit transaction: each read statement is one (autocommit), one round trip
        # instead of three (benchmarks/memory_store.py). Writers' transactions are atomic, so
        # a statement never sees half a file.
        with self._lock, self._conn.cursor() as cur:
            yield cur

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            raise MemoryStoreError(
                f"memory database at {host_of(self._url)}: {scrub(str(exc), self._url)}"
            ) from None

    def _refusal(
        self, cur: psycopg.Cursor[Any], graph: FileGraph, rows: Vectors | None, count: int
    ) -> str | None:
        mem = self._settings
        if count + len(graph.symbols) > mem.max_symbols:
            return symbol_note(mem)
        if self._size(cur) + estimate_bytes(graph, rows) > mem.max_index_mb * MIB:
            return size_note(mem)
        return None

    def _size(self, cur: psycopg.Cursor[Any]) -> int:
        cur.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
            (self.schema,),
        )
        return int((cur.fetchone() or (0,))[0])


def _parse_vector(text: str) -> Vectors:
    """pgvector's text form of a vector, "[0.1,-2e-05,...]", as float32."""
    inner = text.strip().removeprefix("[").removesuffix("]")
    return np.array(inner.split(",") if inner else [], dtype=np.float32)


def _create_hnsw(cur: psycopg.Cursor[Any], dim: int) -> None:
    """The HNSW index over vectors of `dim` (a partial index on an expression: the column
    has no fixed dimension, and vectors of another model are never compared)."""
    dim = int(dim)
    # The graph of 100,000 × 384 takes ~200 MB; pgvector's build slows badly when it spills.
    cur.execute("SET LOCAL maintenance_work_mem = '256MB'")
    cur.execute(
        f"CREATE INDEX IF NOT EXISTS symbols_hnsw_{dim} ON symbols USING hnsw "
        f"((vector::vector({dim})) vector_cosine_ops) WHERE dim = {dim}"
    )
