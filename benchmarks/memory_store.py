"""Project memory's two stores side by side (memory/sqlite_store.py, memory/pg_store.py):
what "a vector extension or a plain matrix" costs at the sizes memory holds.

For each size (10,000 and 100,000 symbols × 384 dimensions, 20 symbols a file, texts of a
realistic length) and each store — SQLite with the numpy matrix; PostgreSQL with pgvector, exact
(`<=>` ordering over every row) and with an HNSW index — through the MemoryStore API:
- put: the time to store every file (one put_file each, as a build does) and the size on disk
  (SQLite: the file after a checkpoint; PostgreSQL: the schema's relations, indexes included);
- nearest(k=10): the median over 50 queries, and SQLite's first query (it reads the matrix);
  HNSW: the index's build time, and its recall@10 against the exact answer;
- lexical(k=10): the median over 50 queries of two or three identifier or docstring words.

The PostgreSQL server is a private pgserver instance in a temporary directory (tests/pg_server.py).

    python benchmarks/memory_store.py [--sizes 10000,100000] [--dim 384] [--no-postgres]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redline.config_models import MemorySettings
from redline.memory.model import FileGraph, MemoryStore, Symbol
from redline.memory.pg_store import PgStore
from redline.memory.sqlite_store import SqliteStore

PER_FILE = 20
QUERIES = 50
_VOCABULARY = (
    "user account session token retry request client server cache index parse header config "
    "load save write read open close send receive buffer stream queue worker task schedule "
    "timeout error handle validate check render format encode decode hash sign verify path "
    "file directory commit branch review finding model prompt budget limit "
)
WORDS = tuple(_VOCABULARY.split())
Clock = Callable[[], float]
CAPS = {"max_symbols": 10_000_000, "max_index_mb": 100_000}


def corpus(n: int, dim: int, seed: int = 1) -> Iterator[tuple[FileGraph, np.ndarray]]:
    """Files of PER_FILE symbols: camelCase and snake_case names, a docstring, a ~600-char
    body, and unit vectors around 64 centres (code is clustered, not uniform)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(64, dim)).astype(np.float32)
    for f in range(0, n, PER_FILE):
        path = f"pkg{f // 2000}/mod{f}.py"
        syms = []
        count = min(PER_FILE, n - f)
        for i in range(count):
            a, b, c = rng.choice(WORDS, 3)
            name = f"{a}{b.title()}{c.title()}" if i % 2 else f"{a}_{b}_{c}"
            doc = " ".join(rng.choice(WORDS, 12)).capitalize() + "."
            body = f"def {name}(self, {a}, {b}):\n" + f"    {c} = {a}.{b}({c})\n" * 24
            syms.append(
                Symbol(
                    path,
                    f"C{f}.{name}",
                    "method",
                    i * 30 + 1,
                    i * 30 + 28,
                    "python",
                    f"def {name}(self, {a}, {b}):",
                    doc,
                    body,
                )
            )
        which = rng.integers(0, 64, size=count)
        v = centres[which] + 0.6 * rng.normal(size=(count, dim)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        yield FileGraph(path, "python", tuple(syms)), v.astype(np.float32)


def queries(dim: int, seed: int = 2) -> tuple[np.ndarray, list[str]]:
    """Queries like the indexed code (a changed function asking for similar ones): drawn
    around the same centres as the corpus, not uniformly (a query far from everything makes
    the top 10 near-ties, which no approximate index is built for)."""
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(1).normal(size=(64, dim)).astype(np.float32)
    which = rng.integers(0, 64, size=QUERIES)
    vectors = centres[which] + 0.6 * rng.normal(size=(QUERIES, dim)).astype(np.float32)
    texts = [" ".join(rng.choice(WORDS, int(rng.integers(2, 4)))) for _ in range(QUERIES)]
    return vectors, texts


def median_ms(
    fn: Callable[[Any], object], inputs: list[Any], clock: Clock = time.perf_counter
) -> float:
    times = []
    for x in inputs:
        t = clock()
        fn(x)
        times.append(clock() - t)
    return statistics.median(times) * 1000


def fill(store: MemoryStore, n: int, dim: int) -> float:
    t = time.perf_counter()
    for g, v in corpus(n, dim):
        store.put_file(g, "blob", v)
    return time.perf_counter() - t


def bench_sqlite(root: Path, n: int, dim: int) -> dict[str, float]:
    path = root / f"bench-{n}.sqlite3"
    store = SqliteStore.open(path, MemorySettings(**CAPS))
    put = fill(store, n, dim)
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = sum(p.stat().st_size for p in root.glob(f"bench-{n}.sqlite3*"))
    qv, qt = queries(dim)
    t = time.perf_counter()
    store.nearest(qv[0], 10)
    first = (time.perf_counter() - t) * 1000
    out = {
        "put_s": put,
        "size_mb": size / 1e6,
        "nearest_first_ms": first,
        "nearest_ms": median_ms(lambda q: store.nearest(q, 10), list(qv)),
        # CPU time of this process: what the search costs without the machine's other load.
        "nearest_cpu_ms": median_ms(lambda q: store.nearest(q, 10), list(qv), time.process_time),
        "lexical_ms": median_ms(lambda q: store.lexical(q, 10), qt),
        "lexical_cpu_ms": median_ms(lambda q: store.lexical(q, 10), qt, time.process_time),
    }
    store.close()
    return out


def bench_pg(url: str, n: int, dim: int) -> dict[str, float]:
    schema = f"redline_{n:016x}"
    store = PgStore.open(url, schema, MemorySettings(url=url, **CAPS))
    store.clear()
    put = fill(store, n, dim)
    with store._read() as cur:
        cur.execute("ANALYZE")
    meta = store.meta()
    qv, qt = queries(dim)
    exact = [[s.id for s, _ in store.nearest(q, 10)] for q in qv]
    out = {
        "put_s": put,
        "size_mb": meta.size_bytes / 1e6,
        "nearest_ms": median_ms(lambda q: store.nearest(q, 10), list(qv)),
        "lexical_ms": median_ms(lambda q: store.lexical(q, 10), qt),
    }
    t = time.perf_counter()
    store.ensure_hnsw(dim)
    out["hnsw_build_s"] = time.perf_counter() - t
    out["hnsw_size_mb"] = store.meta().size_bytes / 1e6
    for ef in (40, 100):  # pgvector's default ef_search, and the store's
        store.ef_search = ef
        out[f"hnsw{ef}_nearest_ms"] = median_ms(lambda q: store.nearest(q, 10), list(qv))
        approx = [[s.id for s, _ in store.nearest(q, 10)] for q in qv]
        out[f"hnsw{ef}_recall"] = statistics.mean(
            len(set(a) & set(e)) / 10 for a, e in zip(approx, exact, strict=True)
        )
    store.clear()
    store.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[tuple[str, int], dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="redline-bench-memory-") as tmp:
        for n in sizes:
            results[("sqlite", n)] = bench_sqlite(Path(tmp), n, args.dim)
            print(f"sqlite {n:,}: {results[('sqlite', n)]}", file=sys.stderr, flush=True)
        if not args.no_postgres:
            from pg_server import running_postgres

            with running_postgres() as url:
                for n in sizes:
                    results[("pg", n)] = bench_pg(url, n, args.dim)
                    print(f"pg {n:,}: {results[('pg', n)]}", file=sys.stderr, flush=True)
    report(results, sizes, args.dim, not args.no_postgres)
    return 0


def report(
    results: dict[tuple[str, int], dict[str, float]], sizes: list[int], dim: int, pg: bool
) -> None:
    print(f"Project memory stores, {dim} dimensions, {PER_FILE} symbols a file (one put_file each)")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"(load average at the end: {load}, on {os.cpu_count()} CPUs: wall times grow with it)")
    cols = ["SQLite + numpy matrix"] + (
        ["PostgreSQL pgvector exact", "PostgreSQL + HNSW"] if pg else []
    )
    w = 30
    for n in sizes:
        s = results[("sqlite", n)]
        p = results.get(("pg", n), {})
        print(f"\n{n:,} symbols".ljust(34) + "".join(c.rjust(w) for c in cols))
        rows: list[tuple[str, list[str]]] = [
            (
                "put, all files",
                [
                    f"{s['put_s']:.1f} s",
                    f"{p.get('put_s', 0):.1f} s",
                    f"+ {p.get('hnsw_build_s', 0):.1f} s index build",
                ],
            ),
            (
                "size",
                [
                    f"{s['size_mb']:.0f} MB",
                    f"{p.get('size_mb', 0):.0f} MB",
                    f"{p.get('hnsw_size_mb', 0):.0f} MB",
                ],
            ),
            (
                "nearest(k=10), median",
                [
                    f"{s['nearest_ms']:.1f} ms",
                    f"{p.get('nearest_ms', 0):.1f} ms",
                    f"{p.get('hnsw100_nearest_ms', 0):.1f} ms (ef_search 100)",
                ],
            ),
            ("", ["", "", f"{p.get('hnsw40_nearest_ms', 0):.1f} ms (ef_search 40)"]),
            (
                "  CPU time, this process",
                [f"{s['nearest_cpu_ms']:.1f} ms", "(server)", "(server)"],
            ),
            ("nearest, first (reads matrix)", [f"{s['nearest_first_ms']:.0f} ms", "-", "-"]),
            (
                "nearest recall@10 vs exact",
                ["1.00", "1.00", f"{p.get('hnsw100_recall', 0):.2f} (ef_search 100)"],
            ),
            ("", ["", "", f"{p.get('hnsw40_recall', 0):.2f} (ef_search 40)"]),
            (
                "lexical(k=10), median",
                [f"{s['lexical_ms']:.1f} ms", f"{p.get('lexical_ms', 0):.1f} ms", "(same)"],
            ),
            ("  CPU time, this process", [f"{s['lexical_cpu_ms']:.1f} ms", "(server)", "-"]),
        ]
        for label, values in rows:
            print(label.ljust(34) + "".join(v.rjust(w) for v in values[: len(cols)]))


if __name__ == "__main__":
    sys.exit(main())
