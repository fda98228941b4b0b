"""Properties of memory's small parsers and rules: which paths are indexed (tree.path_refusal),
git's blob id (tree.blob_id), search's fusion (query.fuse) and a call's resolution."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from redline.memory.model import StoredSymbol, Symbol
from redline.memory.ranking import fuse
from redline.memory.tree import blob_id, path_refusal
from redline.tools.names import is_git_name, is_secret_path

_PART = st.one_of(
    st.sampled_from([".git", ".GIT", "git~1", ".g\u200bit", ".env", "id_rsa.py", "src", "a.py"]),
    st.text(alphabet=st.characters(blacklist_characters="/\0"), min_size=1, max_size=12),
)


@given(st.lists(_PART, min_size=1, max_size=5))
def test_git_and_secret_paths_are_never_indexed(parts: list[str]) -> None:
    path = "/".join(parts)
    reason = path_refusal(path, [])
    if any(is_git_name(p) for p in parts):
        assert reason, path
    if is_secret_path(parts):
        assert reason, path
    if reason is None:  # indexed: a plain path, in a language a grammar parses
        assert all(p not in ("", ".", "..") for p in parts)


@given(st.lists(_PART, min_size=1, max_size=4), st.sampled_from(["*.py", "src/", "**/a.py"]))
def test_an_excluded_path_says_its_glob(parts: list[str], glob: str) -> None:
    path = "/".join(parts)
    plain = path_refusal(path, [])
    excluded = path_refusal(path, [glob])
    if plain is None and excluded is not None:
        assert excluded == f"excluded by configuration: {glob}"


@given(st.binary(max_size=2000))
def test_blob_id_is_gits(data: bytes) -> None:
    out = subprocess.run(
        ["git", "hash-object", "--stdin"], input=data, capture_output=True, check=True
    )
    assert blob_id(data) == out.stdout.decode().strip()


def _stored(i: int) -> StoredSymbol:
    return StoredSymbol(i, Symbol("a.py", f"f{i}", "function", 1, 1, "python"))


@given(
    st.lists(st.integers(0, 30), unique=True, max_size=15),
    st.lists(st.integers(0, 30), unique=True, max_size=15),
)
def test_fusion_ranks_what_both_rank_well_first(a: list[int], b: list[int]) -> None:
    lexical = [(_stored(i), 1.0) for i in a]
    semantic = [(_stored(i), 0.5) for i in b]
    fused = fuse({"lexical": lexical, "semantic": semantic})
    ids = [f.stored.id for f in fused]
    assert sorted(ids) == sorted(set(a) | set(b))  # each candidate once
    score = {f.stored.id: f.score for f in fused}
    assert [f.score for f in fused] == sorted(score.values(), reverse=True)
    # Ranked at least as well by both: never fused below.
    both = [i for i in ids if i in a and i in b]
    for x in both:
        for y in both:
            if a.index(x) <= a.index(y) and b.index(x) <= b.index(y):
                assert score[x] >= score[y]
    # In both beats in one alone at the same rank.
    for x in both:
        for y in set(a) - set(b):
            if a.index(x) <= a.index(y):
                assert score[x] > score[y]


def test_odd_file_names_are_indexed_under_their_names(tmp_path: Path) -> None:
    from redline.config_models import Settings
    from redline.memory.build import build_memory
    from redline.memory.query import ProjectMemory
    from test_memory_build import HashEmbedder

    from gitrepo import GitRepo

    repo = GitRepo(tmp_path / "r")
    names = ["tab\there.py", "new\nline.py", "ünï cödé.py", "-dash.py", "sp ace/x.py"]
    for i, name in enumerate(names):
        repo.write(name, f"def odd_{i}():\n    return {i}\n")
    repo.commit("odd names")
    embedder = HashEmbedder()
    report = build_memory(repo.root, Settings(), embedder=embedder)
    assert report.parsed == len(names), report
    with ProjectMemory.open(repo.root, Settings(), embedder=embedder) as memory:  # type: ignore[union-attr]
        for i, name in enumerate(names):
            [found] = memory.definitions(f"odd_{i}")
            assert found.symbol.path == name
    again = build_memory(repo.root, Settings(), embedder=embedder, paths=names)
    assert (again.parsed, again.reused) == (0, len(names))
