"""The PostgreSQL store's own promises: one schema per repository (shared by its clones),
errors that name the host and never the password, and the HNSW index answering like the scan."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from pg_server import running_postgres
from redline.config_models import MemorySettings
from redline.memory import pg_store
from redline.memory.model import FileGraph, MemoryMeta, Symbol
from redline.memory.pg_store import PgStore
from redline.memory.store import (
    MemoryStoreError,
    forget_store,
    open_existing_store,
    open_store,
    pg_schema,
)

from gitrepo import GitRepo

pytestmark = pytest.mark.xdist_group("postgres")


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    # Workers of one xdist run share the server (tests/pg_server.py says why).
    with running_postgres(os.environ.get("PYTEST_XDIST_TESTRUNUID")) as url:
        yield url


def put(store, path: str, vectors: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    syms = tuple(
        Symbol(path, f"f{i}", "function", i * 3 + 1, i * 3 + 2, "python")
        for i in range(len(vectors))
    )
    store.put_file(FileGraph(path, "python", syms), "blob", vectors.astype(np.float32))


def test_clones_share_a_schema_and_other_repositories_do_not(tmp_path: Path, pg_url: str) -> None:
    a = GitRepo(tmp_path / "a")
    a.write("x.py", "def f(): pass\n")
    a.commit()
    clone = tmp_path / "clone-elsewhere"
    subprocess.run(["git", "clone", "-q", str(a.root), str(clone)], check=True)
    other = GitRepo(tmp_path / "b")
    other.write("y.py", "def g(): pass\n")
    other.commit("another history")
    unborn = GitRepo(tmp_path / "unborn")

    assert pg_schema(a.root) == pg_schema(clone)
    assert pg_schema(a.root) != pg_schema(other.root)
    assert pg_schema(unborn.root).startswith("redline_")  # by its path, until a first commit

    settings = MemorySettings(url=pg_url)
    store_a = open_store(a.root, settings)
    put(store_a, "x.py", np.eye(1, 4))
    store_clone = open_store(clone, settings)
    assert store_clone.indexed_files() == {"x.py": "blob"}  # a teammate's build, shared
    store_b = open_store(other.root, settings)
    assert store_b.indexed_files() == {}
    assert store_b.nearest(np.eye(1, 4)[0], 5) == []
    for s in (store_a, store_clone, store_b):
        s.close()
    assert forget_store(a.root, settings) is True
    assert open_existing_store(clone, settings) is None
    assert forget_store(other.root, settings) is True


def test_reading_never_creates_a_schema(tmp_path: Path, pg_url: str) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.commit("first")
    settings = MemorySettings(url=pg_url)
    assert open_existing_store(repo.root, settings) is None
    assert forget_store(repo.root, settings) is False
    open_store(repo.root, settings).close()
    existing = open_existing_store(repo.root, settings)
    assert existing is not None
    existing.close()
    assert forget_store(repo.root, settings) is True


def test_a_database_that_cannot_be_reached_is_named_without_the_password(tmp_path: Path) -> None:
    settings = MemorySettings(
        url="postgresql://team:hunter2pw@127.0.0.1:9/redline", connect_timeout=2
    )
    with pytest.raises(MemoryStoreError) as info:
        open_store(tmp_path, settings)
    text = str(info.value)
    assert text.startswith("cannot connect to the memory database at 127.0.0.1:9: ")
    assert "hunter2pw" not in text
    assert "REDLINE_MEMORY_URL" in text


def test_a_missing_database_is_named_without_the_password(tmp_path: Path, pg_url: str) -> None:
    socket_dir = pg_url.split("host=", 1)[1]
    url = f"postgresql://postgres:hunter2pw@/no_such_db?host={socket_dir}"
    with pytest.raises(MemoryStoreError) as info:
        open_store(tmp_path, MemorySettings(url=url))
    text = str(info.value)
    assert f"memory database at {socket_dir}" in text and "no_such_db" in text
    assert "hunter2pw" not in text


def test_the_hnsw_index_answers_like_the_exact_scan(tmp_path: Path, pg_url: str) -> None:
    store = open_store(tmp_path, MemorySettings(url=pg_url))
    assert isinstance(store, PgStore)
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for i in range(0, 300, 50):
        put(store, f"m{i}.py", vectors[i : i + 50])
    query = vectors[17] + 0.1 * vectors[3]
    exact = [(s.symbol.path, s.symbol.qualname) for s, _ in store.nearest(query, 60)]
    store.ensure_hnsw(16)
    approx = store.nearest(query, 60)
    assert len(approx) == 60  # more than hnsw.ef_search's default of 40
    assert [(s.symbol.path, s.symbol.qualname) for s, _ in approx][:5] == exact[:5]
    scores = [score for _, score in approx]
    assert scores == sorted(scores, reverse=True)
    store.clear()
    store.close()


def test_a_build_that_grows_the_store_past_the_threshold_gets_an_hnsw_index(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_store, "HNSW_MIN_SYMBOLS", 40)
    store = open_store(tmp_path, MemorySettings(url=pg_url))
    assert isinstance(store, PgStore)
    vectors = np.random.default_rng(3).normal(size=(60, 8)).astype(np.float32)

    def indexes() -> list[str]:
        with store._read() as cur:
            cur.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (store.schema,))
            return sorted(r[0] for r in cur.fetchall() if "hnsw" in r[0])

    put(store, "a.py", vectors[:30])
    store.set_meta(MemoryMeta(built_at=1.0))
    assert indexes() == []  # 30 symbols: an exact scan
    put(store, "b.py", vectors[30:])
    store.set_meta(MemoryMeta(built_at=2.0))
    assert indexes() == ["symbols_hnsw_8"]
    assert len(store.nearest(vectors[0], 5)) == 5
    store.clear()
    store.close()
