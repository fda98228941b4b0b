"""The MemoryStore contract, the same tests against both stores: SQLite in a temporary cache and
PostgreSQL (with pgvector) on a real server started by tests/pg_server.py."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pg_server import running_postgres
from redline.config_models import MemorySettings
from redline.memory.model import Edge, FileGraph, MemoryMeta, MemoryStore, Symbol
from redline.memory.store import MemoryFullError, clean_text, open_store

DIM = 8

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.xdist_group("postgres")),
]


def make_store(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, **caps: int
) -> MemoryStore:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    if backend == "postgres":
        url = request.getfixturevalue("pg_url")
        return open_store(repo, MemorySettings(url=url, **caps))
    return open_store(repo, MemorySettings(**caps))


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """One PostgreSQL server for the session (its tests share one xdist worker)."""
    # Workers of one xdist run share the server (tests/pg_server.py says why).
    with running_postgres(os.environ.get("PYTEST_XDIST_TESTRUNUID")) as url:
        yield url


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    s = make_store(request.param, tmp_path, request)
    yield s
    s.clear()
    s.close()


# Parametrized at the test (not the fixture): only a test's own parameters carry marks that
# pytest-xdist groups by, so every PostgreSQL test runs on the one worker with the server.
each_store = pytest.mark.parametrize("store", BACKENDS, indirect=True)
each_backend = pytest.mark.parametrize("backend", BACKENDS)


def sym(path: str, qualname: str, start: int = 1, doc: str = "", sig: str = "") -> Symbol:
    return Symbol(
        path=path,
        qualname=qualname,
        kind="function",
        start=start,
        end=start + 2,
        language="python",
        signature=sig or f"def {qualname.rsplit('.', 1)[-1]}():",
        docstring=doc,
        body=f"def {qualname}(): pass",
    )


def unit(*hot: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for i in hot:
        v[i] = 1.0
    return v / np.linalg.norm(v)


def graph(path: str, symbols: list[Symbol], edges: list[Edge] | None = None) -> FileGraph:
    return FileGraph(path, "python", tuple(symbols), tuple(edges or ()))


def names(found: list) -> list[str]:
    return [s.symbol.qualname for s, _ in found]


# -- files ----------------------------------------------------------------------------------


@each_store
def test_files_are_put_replaced_and_removed(store: MemoryStore) -> None:
    assert store.indexed_files() == {}
    store.put_file(graph("a.py", [sym("a.py", "old")]), "blob1", np.stack([unit(0)]))
    store.put_file(graph("b.py", [sym("b.py", "other")]), "blob2", np.stack([unit(1)]))
    assert store.indexed_files() == {"a.py": "blob1", "b.py": "blob2"}

    store.put_file(
        graph("a.py", [sym("a.py", "new", 1), sym("a.py", "newer", 5)]),
        "blob3",
        np.stack([unit(2), unit(3)]),
    )
    assert store.indexed_files() == {"a.py": "blob3", "b.py": "blob2"}
    assert [s.symbol.qualname for s in store.symbols(path="a.py")] == ["new", "newer"]
    assert store.symbols(name="old") == []

    store.remove_files(["a.py", "never-indexed.py"])
    assert store.indexed_files() == {"b.py": "blob2"}
    assert store.symbols(path="a.py") == []
    meta = store.meta()
    assert (meta.files, meta.symbols) == (1, 1)


@each_store
def test_symbols_by_path_and_by_name(store: MemoryStore) -> None:
    store.put_file(
        graph("a.py", [sym("a.py", "Client.send", 1), sym("a.py", "helper", 9)]),
        "b1",
        np.stack([unit(0), unit(1)]),
    )
    store.put_file(graph("b.py", [sym("b.py", "send", 3)]), "b2", np.stack([unit(2)]))
    by_name = store.symbols(name="send")
    assert [(s.symbol.path, s.symbol.qualname) for s in by_name] == [
        ("a.py", "Client.send"),
        ("b.py", "send"),
    ]
    assert [s.symbol.qualname for s in store.symbols(path="a.py", name="send")] == ["Client.send"]
    assert len({s.id for s in store.symbols()}) == 3
    got = store.symbols(path="b.py")[0].symbol
    assert got == sym("b.py", "send", 3)


@each_store
def test_edges_to_and_from(store: MemoryStore) -> None:
    edges = [
        Edge("a.py", 4, "call", "main", "send", "client.send(x)"),
        Edge("a.py", 1, "import", "", "client", "import client"),
        Edge("a.py", 7, "reference", "main", "send", "f = send"),
    ]
    store.put_file(graph("a.py", [sym("a.py", "main")], edges), "b1", np.stack([unit(0)]))
    store.put_file(
        graph("b.py", [sym("b.py", "run")], [Edge("b.py", 2, "call", "run", "send", "send()")]),
        "b2",
        np.stack([unit(1)]),
    )
    assert [(e.path, e.line) for e in store.edges_to("send")] == [("a.py", 4), ("b.py", 2)]
    assert [e.line for e in store.edges_to("send", kinds=("call", "reference"))] == [4, 7, 2]
    assert store.edges_to("client", kinds=("import",)) == [edges[1]]
    assert store.edges_from("a.py") == sorted(edges, key=lambda e: e.line)
    store.remove_files(["a.py"])
    assert [e.path for e in store.edges_to("send")] == ["b.py"]
    assert store.edges_from("a.py") == []


# -- search ---------------------------------------------------------------------------------


@each_store
def test_nearest_is_sorted_by_cosine_and_respects_k(store: MemoryStore) -> None:
    syms = [sym("a.py", f"f{i}", i * 3 + 1) for i in range(5)]
    # Cosine to unit(0): 1, 1/√2, 1/√3, 0, -1.
    vectors = np.stack([unit(0), unit(0, 1), unit(0, 1, 2), unit(3), -unit(0)])
    store.put_file(graph("a.py", syms), "b1", vectors)
    found = store.nearest(unit(0), 3)
    assert names(found) == ["f0", "f1", "f2"]
    scores = [score for _, score in found]
    assert scores == pytest.approx([1.0, 2**-0.5, 3**-0.5], abs=1e-5)
    assert names(store.nearest(unit(0), 10)) == ["f0", "f1", "f2", "f3", "f4"]
    assert store.nearest(unit(0), 0) == []
    # A query vector need not be unit length, nor a stored one.
    assert names(store.nearest(5 * unit(3), 1)) == ["f3"]
    store.put_file(graph("b.py", [sym("b.py", "big")]), "b2", np.stack([7 * unit(5)]))
    ((found_big, score),) = store.nearest(unit(5), 1)
    assert found_big.symbol.qualname == "big" and score == pytest.approx(1.0, abs=1e-5)


@each_store
def test_after_a_replacement_the_old_vectors_are_gone(store: MemoryStore) -> None:
    store.put_file(graph("a.py", [sym("a.py", "old")]), "b1", np.stack([unit(0)]))
    assert names(store.nearest(unit(0), 5)) == ["old"]  # (the matrix is loaded now)
    store.put_file(graph("a.py", [sym("a.py", "new")]), "b2", np.stack([unit(1)]))
    found = store.nearest(unit(0), 5)
    assert names(found) == ["new"] and found[0][1] == pytest.approx(0.0, abs=1e-6)
    store.remove_files(["a.py"])
    assert store.nearest(unit(0), 5) == []


@each_store
def test_lexical_finds_a_function_by_a_docstring_word_and_a_camel_case_part(
    store: MemoryStore,
) -> None:
    store.put_file(
        graph(
            "a.py",
            [
                sym("a.py", "getUserName", 1, doc="Look the account up in the directory."),
                sym("a.py", "parse_http_header", 5, doc="Split a header line."),
                sym("a.py", "Client.retryRequest", 9, doc="Send again after a timeout."),
            ],
        ),
        "b1",
        np.stack([unit(0), unit(1), unit(2)]),
    )
    assert names(store.lexical("directory", 5)) == ["getUserName"]
    assert names(store.lexical("UserName", 5))[0] == "getUserName"
    assert names(store.lexical("user", 5)) == ["getUserName"]
    assert names(store.lexical("getusername", 5)) == ["getUserName"]
    assert names(store.lexical("http", 5)) == ["parse_http_header"]
    assert names(store.lexical("retry", 5)) == ["Client.retryRequest"]
    assert names(store.lexical("how is a timeout retried", 5))[0] == "Client.retryRequest"
    assert names(store.lexical("Client", 5)) == ["Client.retryRequest"]
    two = store.lexical("header directory timeout", 2)
    assert len(two) == 2 and two[0][1] >= two[1][1]  # higher is better
    assert store.lexical("nothing-matches-this", 5) == []
    assert store.lexical("", 5) == [] and store.lexical("(*)", 5) == []


@each_store
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=80))
def test_no_query_text_is_a_syntax_error(store: MemoryStore, query: str) -> None:
    if not store.indexed_files():
        store.put_file(
            graph("a.py", [sym("a.py", "near_or_and", doc='NOT "quoted" * col: ^')]),
            "b1",
            np.stack([unit(0)]),
        )
    for q in (query, f'"{query}', f"{query} NEAR(", f"qualname:{query}*", f"{query} OR AND NOT"):
        found = store.lexical(q, 3)
        assert len(found) <= 3


# -- meta, clear ---------------------------------------------------------------------------


@each_store
def test_meta_round_trips_and_counts_are_the_stores_own(store: MemoryStore) -> None:
    assert store.meta().symbols == 0 and store.meta().built_at is None
    store.put_file(
        graph("a.py", [sym("a.py", "f"), sym("a.py", "g", 5)], [Edge("a.py", 2, "call", "f", "g")]),
        "b1",
        np.stack([unit(0), unit(1)]),
    )
    store.set_meta(
        MemoryMeta(
            symbols=999,  # the store counts for itself
            built_at=1_700_000_000.5,
            head="c0ffee" * 6 + "ab",
            model="all-MiniLM-L6-v2",
            limits_reached=["symbol cap per file reached in big.py"],
        )
    )
    meta = store.meta()
    assert meta.built_at == 1_700_000_000.5
    assert meta.head == "c0ffee" * 6 + "ab" and meta.model == "all-MiniLM-L6-v2"
    assert meta.limits_reached == ["symbol cap per file reached in big.py"]
    assert (meta.symbols, meta.files, meta.edges) == (2, 1, 1)
    assert meta.size_bytes > 0


@each_store
def test_clear_forgets_everything(store: MemoryStore) -> None:
    store.put_file(
        graph("a.py", [sym("a.py", "f")], [Edge("a.py", 2, "call", "f", "g")]),
        "b",
        np.stack([unit(0)]),
    )
    store.set_meta(MemoryMeta(built_at=1.0, head="abc"))
    assert store.nearest(unit(0), 1)
    store.clear()
    assert store.indexed_files() == {} and store.symbols() == []
    assert store.edges_to("g") == [] and store.nearest(unit(0), 3) == []
    assert store.lexical("f", 3) == []
    meta = store.meta()
    assert (meta.symbols, meta.built_at, meta.head) == (0, None, "")


@each_store
def test_symbols_may_be_stored_without_vectors(store: MemoryStore) -> None:
    store.put_file(graph("a.py", [sym("a.py", "f")]), "b", np.zeros((0, DIM), dtype=np.float32))
    assert [s.symbol.qualname for s in store.symbols()] == ["f"]
    assert store.nearest(unit(0), 3) == []
    with pytest.raises(ValueError, match="2 symbols"):
        store.put_file(
            graph("b.py", [sym("b.py", "g"), sym("b.py", "h", 5)]), "b", np.stack([unit(0)])
        )


# -- texts -----------------------------------------------------------------------------------

_any_text = st.text(max_size=200)  # NUL and lone surrogates included


@each_store
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    qualname=_any_text.filter(lambda s: s != ""),
    signature=_any_text,
    docstring=_any_text,
    body=st.text(max_size=2000),
    path=st.text(min_size=1, max_size=40),
    target=_any_text,
)
def test_unicode_round_trip(
    store: MemoryStore,
    qualname: str,
    signature: str,
    docstring: str,
    body: str,
    path: str,
    target: str,
) -> None:
    symbol = Symbol(path, qualname, "method", 1, 9, "python", signature, docstring, body)
    edge = Edge(path, 3, "call", qualname, target, docstring)
    store.put_file(FileGraph(path, "python", (symbol,), (edge,)), "blob", np.stack([unit(0)]))
    try:
        (got,) = store.symbols(path=clean_text(path))
        assert got.symbol == Symbol(
            clean_text(path),
            clean_text(qualname),
            "method",
            1,
            9,
            "python",
            clean_text(signature),
            clean_text(docstring),
            clean_text(body),
        )
        assert store.edges_from(clean_text(path)) == [
            Edge(
                clean_text(path),
                3,
                "call",
                clean_text(qualname),
                clean_text(target),
                clean_text(docstring),
            )
        ]
        store.lexical(qualname + " " + docstring, 3)  # never raises
    finally:
        store.remove_files([clean_text(path)])


@each_store
def test_nul_and_surrogates_become_replacement_characters(store: MemoryStore) -> None:
    s = sym("a.py", "f", doc="before\x00after \udcff end")
    store.put_file(graph("a.py", [s]), "b", np.stack([unit(0)]))
    (got,) = store.symbols(path="a.py")
    assert got.symbol.docstring == "before\ufffdafter \ufffd end"
    assert names(store.lexical("after", 3)) == ["f"]


# -- caps ------------------------------------------------------------------------------------


@each_backend
def test_the_symbol_cap_refuses_a_file_and_says_so(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = make_store(backend, tmp_path, request, max_symbols=3)
    one, two = np.stack([unit(0)]), np.stack([unit(0), unit(1)])
    try:
        store.put_file(
            graph("a.py", [sym("a.py", "f"), sym("a.py", "g", 5)]),
            "b1",
            np.stack([unit(0), unit(1)]),
        )
        with pytest.raises(MemoryFullError) as info:
            store.put_file(
                graph("b.py", [sym("b.py", "h"), sym("b.py", "i", 5)]),
                "b2",
                np.stack([unit(0), unit(1)]),
            )
        assert "symbol cap 3 reached (memory.max_symbols)" in str(info.value)
        assert "b.py was not indexed" in str(info.value)
        assert store.indexed_files() == {"a.py": "b1"}
        meta = store.meta()
        assert meta.limits_reached == [
            "symbol cap 3 reached (memory.max_symbols): 1 file not indexed"
        ]
        # A builder writing its own notes does not erase the store's.
        store.set_meta(MemoryMeta(built_at=2.0, limits_reached=["from the builder"]))
        assert store.meta().limits_reached == [
            "from the builder",
            "symbol cap 3 reached (memory.max_symbols): 1 file not indexed",
        ]
        # Replacing a file counts its new symbols only; once it fits, the note is gone.
        store.put_file(graph("b.py", [sym("b.py", "h")]), "b3", np.stack([unit(0)]))
        assert store.indexed_files() == {"a.py": "b1", "b.py": "b3"}
        assert store.meta().limits_reached == ["from the builder"]
        # The count the cap compares follows replacements, removals and clear.
        store.remove_files(["a.py"])
        store.put_file(graph("c.py", [sym("c.py", "j"), sym("c.py", "k", 5)]), "b4", two)
        with pytest.raises(MemoryFullError):
            store.put_file(graph("d.py", [sym("d.py", "l")]), "b5", one)
        store.clear()
        store.put_file(
            graph("e.py", [sym("e.py", f"m{i}", i * 3 + 1) for i in range(3)]),
            "b6",
            np.stack([unit(0)] * 3),
        )
        assert store.meta().symbols == 3
    finally:
        store.clear()
        store.close()


@each_backend
def test_the_index_size_cap_refuses_a_file_and_says_so(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = make_store(backend, tmp_path, request, max_index_mb=1)
    try:
        n = 0
        with pytest.raises(MemoryFullError) as info:
            for n in range(100):
                # ~90 kB of entropy a symbol: PostgreSQL compresses a repetitive text away.
                body = random.Random(n).randbytes(90_000).hex()
                s = Symbol(f"f{n}.py", f"f{n}", "function", 1, 2, "python", body=body)
                store.put_file(graph(f"f{n}.py", [s]), "b", np.stack([unit(0)]))
        assert "index size cap 1 MB reached (memory.max_index_mb)" in str(info.value)
        assert 1 <= n < 20
        assert len(store.indexed_files()) == n
        assert "index size cap 1 MB reached" in store.meta().limits_reached[0]
        assert store.meta().size_bytes <= 2 * 1024 * 1024
    finally:
        store.clear()
        store.close()
