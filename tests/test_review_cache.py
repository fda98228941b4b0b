from __future__ import annotations

import json
import logging
import os
import stat
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from redline.errors import ConfigError
from redline.review.planner import CachedPlan
from redline.review.reviewer import CachedReview
from redline.review.summary import CachedSummary
from redline.review.verifier import CachedVerdict
from redline.store import CACHE_ENV, ReviewCache

from gitrepo import GitRepo
from review_script import ReviewScript, review_branch
from scripted_llm import ScriptedLLM


class Note(BaseModel):
    text: str
    tokens: int = 0


class Blob(BaseModel):
    blob: str = ""
    i: int = 0


def test_key_is_stable_and_unambiguous() -> None:
    k = ReviewCache.key("gpt-4o-mini", "reviewer@3", "@@ -1 +1 @@\n-a\n+b\n", "ctx")
    assert k == ReviewCache.key("gpt-4o-mini", "reviewer@3", "@@ -1 +1 @@\n-a\n+b\n", "ctx")
    assert len(k) == 64 and int(k, 16) >= 0
    assert ReviewCache.key("ab", "c") != ReviewCache.key("a", "bc")
    assert ReviewCache.key("a") != ReviewCache.key("a", "")
    assert ReviewCache.key("x\udcff") != ReviewCache.key("x")  # surrogate-escaped text hashes


def test_round_trip_and_layout(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path)
    key = cache.key("model", "patch")
    assert cache.lookup(key, Note) is None
    cache.put(key, Note(text="naïve ✓", tokens=12))
    assert cache.lookup(key, Note) == Note(text="naïve ✓", tokens=12)
    path = tmp_path / "answers" / key[:2] / f"{key}.json"
    entry = json.loads(path.read_bytes())
    assert entry == {"format": 1, "key": key, "value": {"text": "naïve ✓", "tokens": 12}}


@pytest.mark.parametrize(
    "content",
    [
        b"{oops",  # not JSON
        b'{"format": 1, "key": "',  # truncated
        b"\xff",  # not UTF-8
        b"[]",  # not an entry
        b'{"format": 1, "key": "other", "value": {"text": "x"}}',  # another key's entry
        b"",
    ],
)
def test_corrupt_entry_is_a_miss_and_removed(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ReviewCache(tmp_path)
    key = cache.key("k")
    cache.put(key, Note(text="x"))
    path = tmp_path / "answers" / key[:2] / f"{key}.json"
    path.write_bytes(content)
    with caplog.at_level(logging.DEBUG, logger="redline.store.cache"):
        assert cache.lookup(key, Note) is None
    assert not path.exists()
    assert any("removing" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "value", [{"tokens": 3}, {"text": ["not", "a", "string"]}, {"text": "x", "tokens": "many"}]
)
def test_an_entry_invalid_for_its_schema_is_a_miss_and_removed(
    tmp_path: Path, value: dict[str, Any]
) -> None:
    cache = ReviewCache(tmp_path)
    key = cache.key("k")
    path = tmp_path / "answers" / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": 1, "key": key, "value": value}))
    assert cache.lookup(key, Note) is None
    assert not path.exists()
    cache.put(key, Note(text="x"))
    assert cache.lookup(key, Note) == Note(text="x")


def test_an_unreadable_entry_is_a_miss_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ReviewCache(tmp_path)
    key = cache.key("k")
    cache.put(key, Note(text="x"))
    path = tmp_path / "answers" / key[:2] / f"{key}.json"

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    assert cache.lookup(key, Note) is None
    monkeypatch.undo()
    assert path.exists()  # the reader, not the file, may be at fault
    assert cache.lookup(key, Note) == Note(text="x")


# The values each stage wrote before entries were typed: they must still read (no cold cache
# after an upgrade), and what is written now must have the same shape.
OLD_VALUES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (
        CachedReview,
        {
            "answer": {
                "findings": [
                    {
                        "file": "a.py",
                        "line": 3,
                        "end_line": None,
                        "severity": "High",
                        "category": "Functionality",
                        "title": "t",
                        "comment": "c",
                        "existing_code": "x = 1",
                        "improved_code": None,
                        "confidence": 0.8,
                    }
                ],
                "need_context": [],
                "summary": "s",
            },
            "model": "openai/scripted",
        },
    ),
    (
        CachedPlan,
        {"planned": {"context_level": "function", "requests": [], "skip": False, "reason": ""}},
    ),
    (CachedPlan, {"planned": None}),
    (
        CachedVerdict,
        {
            "verdict": {
                "id": "RL-000000000005",
                "verdict": "CORRECT",
                "evidence": "e",
                "corrected_severity": None,
            },
            "score": 90,
            "model": "openai/scripted",
        },
    ),
    (CachedSummary, {"answer": {"assessment": "a", "priorities": ["p"], "focus": []}}),
]


@pytest.mark.parametrize(("schema", "value"), OLD_VALUES)
def test_entries_written_before_typing_still_hit(
    tmp_path: Path, schema: type[BaseModel], value: dict[str, Any]
) -> None:
    cache = ReviewCache(tmp_path)
    key = cache.key(schema.__name__, json.dumps(value))
    path = tmp_path / "answers" / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": 1, "key": key, "value": value}))
    entry = cache.lookup(key, schema)
    assert entry is not None
    cache.put(key, entry)
    assert json.loads(path.read_bytes())["value"] == value


def test_bad_keys_rejected(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path)
    for bad in ["../../etc/passwd", "ab", "G" * 64]:
        with pytest.raises(ValueError):
            cache.lookup(bad, Note)


def test_size_bound_evicts_least_recently_used(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path, max_entries=10, check_every=1)
    keys = [cache.key(str(i)) for i in range(10)]
    for i, key in enumerate(keys):
        cache.put(key, Blob(i=i))
        os.utime(tmp_path / "answers" / key[:2] / f"{key}.json", (1000 + i, 1000 + i))
    assert cache.lookup(keys[0], Blob) == Blob(i=0)  # a read makes the oldest entry the newest
    cache.put(cache.key("new"), Blob(i=10))  # 11 entries > 10: prune to 9
    remaining = [k for k in keys if cache.lookup(k, Blob) is not None]
    assert len(remaining) == 8 and keys[0] in remaining
    assert keys[1] not in remaining and keys[2] not in remaining


def test_byte_bound(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path, max_bytes=4000, check_every=1)
    for i in range(20):
        cache.put(cache.key(str(i)), Blob(blob="x" * 500))
    total = sum(p.stat().st_size for p in (tmp_path / "answers").rglob("*.json"))
    assert total <= 4000


def test_write_failure_is_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReviewCache(tmp_path)
    key = cache.key("k")

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    cache.put(key, Note(text="1"))  # logged, not raised
    monkeypatch.undo()
    assert cache.lookup(key, Note) is None
    assert list((tmp_path / "answers").rglob("*.tmp")) == []
    cache.put(key, Note(text="2"))
    assert cache.lookup(key, Note) == Note(text="2")


def test_default_root_and_never_in_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    assert ReviewCache().dir == tmp_path / "c" / "answers"
    with pytest.raises(ConfigError):
        ReviewCache(tmp_path / "repo" / ".git").put(ReviewCache.key("k"), Note(text=""))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_private_permissions(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path / "c")
    key = cache.key("k")
    cache.put(key, Note(text="secret"))
    for d in (tmp_path / "c", tmp_path / "c" / "answers", tmp_path / "c" / "answers" / key[:2]):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    path = tmp_path / "c" / "answers" / key[:2] / f"{key}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# A review through the real pipeline and the scripted model: a bad entry of any stage is a
# miss that the model answers again, and its fresh answer is what the next review reuses.


def _change(repo: GitRepo) -> GitRepo:
    body = "def total(xs: list[int]) -> int:\n    s = 0\n    for x in xs:\n        s {op} x\n"
    body += "    return s\n"
    for name in ("a", "b"):
        repo.write(f"src/{name}.py", body.format(op="+="))
    repo.commit("base")
    repo.checkout("-b", "feature")
    for name in ("a", "b"):
        repo.write(f"src/{name}.py", body.format(op="-="))
    repo.commit("feature")
    return repo


def _entries() -> list[Path]:
    # The pipeline's cache is the default one, under the per-test REDLINE_CACHE_DIR.
    return sorted((Path(os.environ[CACHE_ENV]) / "answers").rglob("*.json"))


def _corrupt(path: Path) -> None:
    path.write_bytes(b"\x00\xffnot json at all")


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _wrong_shape(path: Path) -> None:
    # Valid JSON under the right key, but no stage's schema accepts it.
    entry = json.loads(path.read_bytes())
    entry["value"] = {
        "answer": {"findings": "none", "priorities": 3},
        "planned": {"context_level": "everything"},
        "verdict": {"id": 5},
        "score": 900,
    }
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize("damage", [_corrupt, _truncate, _wrong_shape])
def test_a_bad_entry_is_asked_again_and_the_fresh_answer_hits(
    repo: GitRepo, damage: Callable[[Path], None]
) -> None:
    finding = {
        "file": "src/a.py",
        "severity": "High",
        "category": "Functionality",
        "title": "Subtracts instead of adding",
        "comment": "The total is negated.",
        "existing_code": "        s -= x",
    }
    script = ReviewScript(findings={"src/a.py": [finding]})
    every_stage = {"planner": 1, "reviewer": 2, "verifier": 1, "summarizer": 1}
    with ScriptedLLM(handler=script) as llm:
        _change(repo)
        first, calls = review_branch(repo.root, llm)
        assert calls == every_stage
        entries = _entries()
        assert len(entries) == 6  # 2 unit plans, 2 reviewer answers, 1 verdict, 1 summary
        for path in entries:
            damage(path)

        again, calls = review_branch(repo.root, llm)
        assert calls == every_stage  # every entry was a miss: every stage asked again
        assert [f.id for f in again.findings] == [f.id for f in first.findings]
        assert again.summary == first.summary
        assert not any("cached" in n or "reused" in n for n in again.coverage.notes)

        third, calls = review_branch(repo.root, llm)
        assert calls == Counter()  # the answers written back are good entries
        assert [f.id for f in third.findings] == [f.id for f in first.findings]
        assert third.summary == first.summary
    assert _entries() == entries
