"""The PostgreSQL store's tables, its connection and the statements one file's rows take
(pg_store.py uses them): connecting (errors without the password), dropping a schema, meta
values, deleting and inserting a file, a vector's and a lexeme's literal, reading a symbol back.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

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
from redline.memory.url import host_of, password_of

if TYPE_CHECKING:
    import psycopg

    from redline.config_models import MemorySettings

SCHEMA_NAME: Final = re.compile(r"redline_[0-9a-f]{16}")

TABLES: Final = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, blob TEXT NOT NULL, language TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS symbols (
    id BIGSERIAL PRIMARY KEY, path TEXT NOT NULL, qualname TEXT NOT NULL, name TEXT NOT NULL,
    kind TEXT NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, language TEXT NOT NULL,
    signature TEXT NOT NULL, docstring TEXT NOT NULL, body TEXT NOT NULL,
    dim INTEGER, vector vector, lex tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_path ON symbols(path);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name);
CREATE INDEX IF NOT EXISTS symbols_lex ON symbols USING gin(lex);
CREATE TABLE IF NOT EXISTS edges (
    id BIGSERIAL PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL, kind TEXT NOT NULL,
    source TEXT NOT NULL, target TEXT NOT NULL, text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_target ON edges(target, kind);
CREATE INDEX IF NOT EXISTS edges_path ON edges(path);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS refused (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
"""

SYMBOL_COLUMNS: Final = (
    'id, path, qualname, kind, start, "end", language, signature, docstring, body'
)


# -- connecting ------------------------------------------------------------------------------


def connect(url: str, settings: MemorySettings) -> psycopg.Connection[Any]:
    """A connection, or MemoryStoreError naming the host (never the password)."""
    import psycopg

    try:
        return psycopg.connect(
            url,
            connect_timeout=max(1, round(settings.connect_timeout)),
            application_name="redline-memory",
            autocommit=True,  # every statement runs in an explicit transaction() block
        )
    except psycopg.Error as exc:
        raise MemoryStoreError(
            f"cannot connect to the memory database at {host_of(url)}: {scrub(str(exc), url)}",
            hint="check [memory] url in your user file (or REDLINE_MEMORY_URL)",
        ) from None


def drop_schema(url: str, schema: str, settings: MemorySettings) -> bool:
    """Drop a repository's schema; whether it existed."""
    from psycopg import sql

    if not SCHEMA_NAME.fullmatch(schema):
        raise ValueError(f"not a memory schema name: {schema!r}")
    conn = connect(url, settings)
    try:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
            existed = cur.fetchone() is not None
            cur.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        return existed
    finally:
        conn.close()


def scrub(message: str, url: str) -> str:
    """A driver's error text, first line, without the URL or its password."""
    line = message.strip().splitlines()[0] if message.strip() else "unknown error"
    for secret in (url, password_of(url)):
        if secret:
            line = line.replace(secret, "***")
    return line[:300]


# -- helpers -------------------------------------------------------------------------------


def lock_key(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


def get_value(cur: psycopg.Cursor[Any], key: str) -> str | None:
    cur.execute("SELECT value FROM meta WHERE key = %s", (key,))
    row = cur.fetchone()
    return None if row is None else str(row[0])


def put_value(cur: psycopg.Cursor[Any], key: str, value: str) -> None:
    cur.execute(
        "INSERT INTO meta(key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        (key, value),
    )


def refused_counts(cur: psycopg.Cursor[Any]) -> list[tuple[str, int]]:
    cur.execute("SELECT reason, count(*) FROM refused GROUP BY reason ORDER BY reason")
    return [(str(r), int(n)) for r, n in cur.fetchall()]


def symbol_count(cur: psycopg.Cursor[Any]) -> int:
    """The symbols stored, kept in `meta` by every write (a count(*) per put_file would make
    a build quadratic)."""
    kept = get_value(cur, "symbol_count")
    if kept is not None:
        return int(kept)
    cur.execute("SELECT count(*) FROM symbols")
    return int((cur.fetchone() or (0,))[0])


def delete_path(cur: psycopg.Cursor[Any], path: str) -> int:
    """Delete a file's rows; how many symbols it had."""
    path = clean_text(path)
    cur.execute("DELETE FROM symbols WHERE path = %s", (path,))
    deleted = max(cur.rowcount, 0)
    cur.execute("DELETE FROM edges WHERE path = %s", (path,))
    cur.execute("DELETE FROM files WHERE path = %s", (path,))
    return deleted


# The lexical vector: lexemes as lexical.py made them (never PostgreSQL's parser), weighted.
LEX: Final = " || ".join(f"setweight(array_to_tsvector(%s::text[]), '{w}')" for w in "ABCD")


def insert_file(
    cur: psycopg.Cursor[Any], graph: FileGraph, blob: str, rows: Vectors | None
) -> None:
    c = clean_text
    path = c(graph.path)
    cur.execute(
        "INSERT INTO files(path, blob, language) VALUES (%s, %s, %s)",
        (path, c(blob), c(graph.language)),
    )
    params = []
    for i, s in enumerate(graph.symbols):
        qualname, signature, docstring = c(s.qualname), c(s.signature), c(s.docstring)
        vector = None if rows is None else vector_literal(rows[i])
        params.append(
            (
                path,
                qualname,
                c(s.name),
                s.kind,
                s.start,
                s.end,
                c(s.language),
                signature,
                docstring,
                c(s.body),
                None if rows is None else int(rows.shape[1]),
                vector,
                lexical.symbol_words(qualname).split(),
                lexical.identifier_words(qualname),
                lexical.identifier_words(signature),
                lexical.identifier_words(docstring),
            )
        )
    if params:
        cur.executemany(
            'INSERT INTO symbols(path, qualname, name, kind, start, "end", language, signature, '
            "docstring, body, dim, vector, lex) VALUES "
            f"(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector, {LEX})",
            params,
        )
    if graph.edges:
        cur.executemany(
            "INSERT INTO edges(path, line, kind, source, target, text) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            [(path, e.line, e.kind, c(e.source), c(e.target), c(e.text)) for e in graph.edges],
        )


def vector_literal(row: Vectors) -> str:
    values = np.nan_to_num(np.asarray(row, dtype=np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    return "[" + ",".join(map(str, values.tolist())) + "]"


def lexeme(word: str) -> str:
    """A tsquery operand for one word, quoted: the word is only ever a lexeme."""
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def estimate_bytes(graph: FileGraph, rows: Vectors | None) -> int:
    texts = sum(
        len(s.body) + 2 * (len(s.signature) + len(s.docstring) + len(s.qualname)) + 96
        for s in graph.symbols
    )
    edges = sum(len(e.text) + len(e.source) + len(e.target) + 48 for e in graph.edges)
    return texts + edges + (0 if rows is None else rows.nbytes)


def stored_symbol(row: Sequence[Any]) -> StoredSymbol:
    sid, path, qualname, kind, start, end, language, signature, docstring, body = row
    return StoredSymbol(
        int(sid), Symbol(path, qualname, kind, start, end, language, signature, docstring, body)
    )
