"""Building and reading project memory in-process (memory/build.py, memory/query.py) on real git
repositories: what is indexed, what is reused, what leaves, what a hostile tree cannot do, and
the caps. The embedder is a small deterministic stand-in (words hashed into a unit vector) so
these run in milliseconds; tests/test_memory_cli.py runs the real model end to end."""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from pg_server import running_postgres
from redline.config_models import Settings
from redline.memory import build
from redline.memory.build import BuildReport, build_memory
from redline.memory.lock import MemoryBusyError, build_lock
from redline.memory.model import Vectors
from redline.memory.query import ProjectMemory, memory_status_line
from redline.memory.store import forget_store, store_path

from gitrepo import GitRepo

_WORD = re.compile(r"[A-Za-z]+")


class HashEmbedder:
    """Bag of words, each word hashed to one of `dim` buckets; rows L2-normalised."""

    def __init__(self, name: str = "hash-test", dim: int = 384) -> None:
        self.name = name
        self.dim = dim
        self.calls = 0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            norm = float(np.linalg.norm(out[i]))
            out[i] = out[i] / norm if norm else out[i]
        return out


@pytest.fixture(autouse=True)
def _no_vectors_from_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's in-process vector cache starts empty: what is embedded is this test's."""
    monkeypatch.setattr(build, "_VECTORS", build._VectorCache(build._CACHED_VECTORS))


NET = '''\
import time


def send_with_retry(request, attempts=3):
    """Send a request, retrying with exponential backoff when the server is busy."""
    for attempt in range(attempts):
        try:
            return request.send()
        except TimeoutError:
            time.sleep(2**attempt)
    raise TimeoutError("gave up")
'''

API = '''\
from pkg.net import send_with_retry


class Client:
    def fetch_user(self, user_id):
        """Load one user record."""
        return send_with_retry(self.request_for(user_id))

    def request_for(self, user_id):
        return {"user": user_id}


def parse_config(text):
    """Read the INI configuration text into a dictionary of sections."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
'''


# send_with_retry, Client, Client.fetch_user, Client.request_for, parse_config
SYMBOLS = 5


# The PostgreSQL URL while a test runs against PostgreSQL (the `on` fixture), else None.
_URL: str | None = None
BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.xdist_group("postgres")),
]


def _settings(**memory: object) -> Settings:
    if _URL is not None:
        memory = {"url": _URL, **memory}
    return Settings.model_validate({"memory": memory} if memory else {})


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    with running_postgres(os.environ.get("PYTEST_XDIST_TESTRUNUID")) as url:
        yield url


@pytest.fixture
def on(request: pytest.FixtureRequest, project: GitRepo) -> Iterator[str]:
    """The store the test builds into: parametrize with `each_backend`."""
    global _URL
    _URL = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    try:
        yield request.param
    finally:
        if _URL is not None:
            forget_store(project.root, _settings())  # the schema goes with the test
        _URL = None


each_backend = pytest.mark.parametrize("on", BACKENDS, indirect=True)


def _build(
    repo: GitRepo, embedder: HashEmbedder, settings: Settings | None = None, **kw: object
) -> BuildReport:
    return build_memory(repo.root, settings or _settings(), embedder=embedder, **kw)  # type: ignore[arg-type]


def _open(repo: GitRepo, embedder: HashEmbedder, settings: Settings | None = None) -> ProjectMemory:
    memory = ProjectMemory.open(repo.root, settings or _settings(), embedder=embedder)
    assert memory is not None
    return memory


@pytest.fixture
def project(repo: GitRepo) -> GitRepo:
    # A root commit of its own: PostgreSQL keys a repository's schema by its root commit.
    repo.write("SEED", uuid.uuid4().hex)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/net.py", NET)
    repo.write("pkg/api.py", API)
    repo.write("README.md", "# a project\n")
    repo.commit("start")
    return repo


@each_backend
def test_build_then_definitions_callers_uses_similar_and_search(on: str, project: GitRepo) -> None:
    embedder = HashEmbedder()
    assert ProjectMemory.open(project.root, _settings(), embedder=embedder) is None
    assert memory_status_line(project.root, _settings()) == "memory: not built"
    if on == "sqlite":
        assert not store_path(project.root, create_dir=False).exists()  # open built nothing

    report = _build(project, embedder)
    # pkg/__init__.py too: indexed with no symbols, so it is not read again next time.
    assert (report.parsed, report.reused, report.removed, report.files) == (3, 0, 0, 3)
    assert report.symbols == SYMBOLS

    with _open(project, embedder) as memory:
        assert memory.status_line() == f"memory: {SYMBOLS} symbols, built just now"
        [send] = memory.definitions("send_with_retry")
        assert (send.symbol.path, send.symbol.start) == ("pkg/net.py", 4)
        [caller] = memory.callers("send_with_retry")
        assert caller.stored.symbol.qualname == "Client.fetch_user"
        assert caller.why.startswith("calls send_with_retry")
        kinds = {(e.path, e.kind) for e in memory.uses("send_with_retry")}
        assert ("pkg/api.py", "call") in kinds and ("pkg/api.py", "import") in kinds
        similar = memory.similar(send.symbol.body, exclude=send.symbol)
        assert all(h.stored.symbol.qualname != "send_with_retry" for h in similar)
        top = memory.search("exponential backoff retrying")
        assert top[0].stored.symbol.qualname == "send_with_retry", top
        assert "backoff" in top[0].why
        # The graph brings the caller of the best hit along.
        assert "Client.fetch_user" in [h.stored.symbol.qualname for h in top]


@each_backend
def test_only_changed_files_are_parsed_and_removed_ones_leave(on: str, project: GitRepo) -> None:
    embedder = HashEmbedder()
    _build(project, embedder)
    again = _build(project, embedder)
    assert (again.parsed, again.reused, again.removed) == (0, 3, 0)
    assert embedder.calls == 1  # the second build embedded nothing

    project.write("pkg/net.py", NET.replace("gave up", "gave up waiting"))  # not committed
    project.write("pkg/api.py", API + "\n\ndef one_more():\n    return 1\n")
    texts = embedder.texts
    changed = _build(project, embedder)
    assert (changed.parsed, changed.reused, changed.removed) == (2, 1, 0)
    # Only what changed was embedded: send_with_retry, the new function (and no other of
    # pkg/api.py's symbols, unchanged in a changed file).
    assert embedder.texts - texts == 2
    project.git("checkout", "pkg/api.py")
    assert _build(project, embedder).parsed == 1

    project.git("rm", "-q", "pkg/api.py")
    project.commit("drop the client")
    removed = _build(project, embedder)
    assert (removed.parsed, removed.reused, removed.removed) == (0, 2, 1)
    with _open(project, embedder) as memory:
        assert memory.definitions("fetch_user") == []
        assert memory.callers("send_with_retry") == []
        assert memory.meta.symbols == 1


@each_backend
def test_a_refresh_of_paths_reads_only_those(on: str, project: GitRepo) -> None:
    embedder = HashEmbedder()
    _build(project, embedder)
    project.write("pkg/api.py", API + "\n\ndef added_later():\n    return parse_config('')\n")
    project.write("pkg/net.py", NET + "\n\ndef not_refreshed():\n    pass\n")
    report = _build(project, embedder, paths=["pkg/api.py"])
    assert (report.parsed, report.reused, report.removed) == (1, 0, 0)
    with _open(project, embedder) as memory:
        assert [h.stored.symbol.qualname for h in memory.callers("parse_config")] == ["added_later"]
        assert memory.definitions("not_refreshed") == []  # not asked for
    # A path that is no longer tracked leaves; one that never was is ignored.
    project.git("rm", "-q", "--cached", "pkg/api.py")
    gone = _build(project, embedder, paths=["pkg/api.py", "nowhere.py"])
    assert (gone.parsed, gone.removed) == (0, 1)


def _store_bytes(repo: GitRepo) -> bytes:
    path = store_path(repo.root, create_dir=False)
    return b"".join(
        p.read_bytes() for p in (path, path.with_name(path.name + "-wal")) if p.exists()
    )


def test_a_hostile_tree_cannot_make_memory_read_outside_or_keep_a_secret(
    project: GitRepo, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "stolen.py").write_text("def stolen_outside_function():\n    return 'OUTSIDE'\n")
    # A tracked file swapped for a link out of the tree after it was committed; a tracked
    # directory swapped for a link to a directory outside.
    project.write("pkg/swapped.py", "def innocent():\n    pass\n")
    project.write("lib/mod.py", "def in_lib():\n    pass\n")
    # A secret file by its name: never read, whatever it holds.
    project.write(
        "tools/id_rsa_helper.py", "def private_key_material():\n    return 'PRIVKEYMARK'\n"
    )
    # A key in a function's body, and a `.env` value used in code.
    aws = "AKIAZ3MNQ7PLX4RT2VWB"
    secret = "wJalrXUtnFEMIK7MDENGbPxRfiCYzq8Bv3Tk1Lm"
    project.write(
        "pkg/cloud.py",
        "def connect():\n"
        f'    key_id = "{aws}"\n'
        f'    aws_secret_access_key = "{secret}"\n'
        "    return key_id, aws_secret_access_key\n",
    )
    project.write(".env", "SERVICE_PASSPHRASE=correct-horse-battery-staple-9\n")
    project.write(
        "pkg/env_use.py",
        'def passphrase():\n    return "correct-horse-battery-staple-9"\n',
    )
    # Over the per-file cap: not read.
    project.write("pkg/huge.py", "def huge():\n    pass\n" + "x = 1\n" * 400_000)
    project.commit("hostile")
    os.remove(project.root / "pkg/swapped.py")
    os.symlink(outside / "stolen.py", project.root / "pkg/swapped.py")
    (project.root / "lib/mod.py").unlink()
    (project.root / "lib").rmdir()
    os.symlink(outside, project.root / "lib")
    (outside / "mod.py").write_text("def from_linked_dir():\n    return 'LINKEDDIR'\n")

    embedder = HashEmbedder()
    report = _build(project, embedder)
    assert "symbolic link" in report.skipped["lib/mod.py"] or "link" in report.skipped["lib/mod.py"]
    assert "regular file" in report.skipped["pkg/swapped.py"]
    assert report.skipped["tools/id_rsa_helper.py"].startswith("a secret file")
    assert "over" in report.skipped["pkg/huge.py"]
    # The per-file cap is said where caps are said.
    [cut] = [x for x in report.limits_reached if x.startswith("per-file caps reached: 1 file")]
    assert cut.endswith("e.g. pkg/huge.py")
    with _open(project, embedder) as memory:
        for name in ("stolen_outside_function", "from_linked_dir", "private_key_material", "huge"):
            assert memory.definitions(name) == [], name
        [connect] = memory.definitions("connect")
        assert aws not in connect.symbol.body and secret not in connect.symbol.body
        assert "REDACTED" in connect.symbol.body
    stored = _store_bytes(project)
    for leaked in (
        aws,
        secret,
        "correct-horse-battery-staple-9",
        "OUTSIDE",
        "LINKEDDIR",
        "PRIVKEYMARK",
    ):
        assert leaked.encode() not in stored, leaked


@each_backend
def test_caps_stop_adding_and_are_said(on: str, project: GitRepo) -> None:
    settings = _settings(max_symbols=3)
    report = build_memory(project.root, settings, embedder=HashEmbedder())
    assert report.symbols <= 3
    assert any("symbol cap 3 reached" in x for x in report.limits_reached), report
    line = memory_status_line(project.root, settings)
    said = r", limits reached: symbol cap 3 reached \(memory\.max_symbols\): \d+ files? not indexed"
    assert re.search(said, line), line
    # With room again, a full build indexes everything and the limit is no longer said.
    full = build_memory(project.root, _settings(), embedder=HashEmbedder())
    assert full.symbols == SYMBOLS and full.limits_reached == []


def test_one_builder_at_a_time(project: GitRepo) -> None:
    with build_lock(project.root), pytest.raises(MemoryBusyError, match="another process"):
        _build(project, HashEmbedder(), lock_timeout=0)
    assert _build(project, HashEmbedder(), lock_timeout=0).parsed == 3


def test_another_model_rebuilds_everything(project: GitRepo) -> None:
    _build(project, HashEmbedder("model-a"))
    report = _build(project, HashEmbedder("model-b"), paths=["pkg/net.py"])
    assert report.parsed == 3 and report.model == "model-b"
    with _open(project, HashEmbedder("model-a")) as memory:
        # Vectors of another model are never compared: no similar code, lexical search only.
        assert memory.similar("retry backoff") == []
        assert memory.search("backoff")[0].stored.symbol.qualname == "send_with_retry"


def test_callees_follow_what_the_spelling_allows(repo: GitRepo) -> None:
    repo.write(
        "cache.py",
        "class Cache:\n"
        "    def get(self, key):\n"
        "        return self.lookup(key)\n\n"
        "    def lookup(self, key):\n"
        "        return key\n",
    )
    repo.write(
        "app.py",
        "import cache\n\n\n"
        "def handle(options):\n"
        "    timeout = options.get('timeout')\n"  # some dict's get: not Cache.get
        "    store = cache.Cache()\n"  # module.Class(): the class
        "    return helper(timeout, store)\n\n\n"
        "def helper(a, b):\n"
        "    return a, b\n",
    )
    repo.commit("calls")
    embedder = HashEmbedder()
    _build(repo, embedder)
    with _open(repo, embedder) as memory:
        [handle] = memory.definitions("handle")
        assert sorted(h.stored.symbol.qualname for h in memory.callees(handle.symbol)) == [
            "Cache",
            "helper",
        ]
        [get] = memory.definitions("Cache.get")
        assert [h.stored.symbol.qualname for h in memory.callees(get.symbol)] == ["Cache.lookup"]


def test_a_review_never_waits_for_a_slow_store(
    project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    from redline.memory import probe, query

    assert probe.MemoryProbe(project.root, _settings()).state(wait=0) == "not built"
    _build(project, HashEmbedder())
    release = threading.Event()

    def slow(repo_root: Path, settings: Settings) -> str:
        release.wait(10)
        return "memory: 5 symbols, built just now"

    monkeypatch.setattr(query, "memory_status_line", slow)
    started = time.monotonic()
    assert probe.MemoryProbe(project.root, _settings()).state(wait=0.2) == probe.NO_ANSWER
    assert time.monotonic() - started < 2
    release.set()
