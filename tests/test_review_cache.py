from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from redline.errors import ConfigError
from redline.store import CACHE_ENV, ReviewCache


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
    assert cache.get(key) is None
    value = {"findings": [{"title": "naïve ✓"}], "usage": {"tokens": 12}}
    cache.put(key, value)
    assert cache.get(key) == value
    assert (tmp_path / "answers" / key[:2] / f"{key}.json").is_file()


@pytest.mark.parametrize("content", [b"{oops", b"[]", b'{"key": "other", "value": {}}', b"\xff"])
def test_corrupt_entry_is_a_miss_and_removed(tmp_path: Path, content: bytes) -> None:
    cache = ReviewCache(tmp_path)
    key = cache.key("k")
    cache.put(key, {"a": 1})
    path = tmp_path / "answers" / key[:2] / f"{key}.json"
    path.write_bytes(content)
    assert cache.get(key) is None
    assert not path.exists()


def test_bad_keys_rejected(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path)
    for bad in ["../../etc/passwd", "ab", "G" * 64]:
        with pytest.raises(ValueError):
            cache.get(bad)


def test_size_bound_evicts_least_recently_used(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path, max_entries=10, check_every=1)
    keys = [cache.key(str(i)) for i in range(10)]
    for i, key in enumerate(keys):
        cache.put(key, {"i": i})
        os.utime(tmp_path / "answers" / key[:2] / f"{key}.json", (1000 + i, 1000 + i))
    assert cache.get(keys[0]) == {"i": 0}  # a read makes the oldest entry the newest
    cache.put(cache.key("new"), {"i": 10})  # 11 entries > 10: prune to 9
    remaining = [k for k in keys if cache.get(k) is not None]
    assert len(remaining) == 8 and keys[0] in remaining
    assert keys[1] not in remaining and keys[2] not in remaining


def test_byte_bound(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path, max_bytes=4000, check_every=1)
    for i in range(20):
        cache.put(cache.key(str(i)), {"blob": "x" * 500})
    total = sum(p.stat().st_size for p in (tmp_path / "answers").rglob("*.json"))
    assert total <= 4000


def test_write_failure_is_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReviewCache(tmp_path)
    key = cache.key("k")

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    cache.put(key, {"a": 1})  # logged, not raised
    monkeypatch.undo()
    assert cache.get(key) is None
    assert list((tmp_path / "answers").rglob("*.tmp")) == []
    cache.put(key, {"a": 2})
    assert cache.get(key) == {"a": 2}


def test_unserializable_value_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        ReviewCache(tmp_path).put(ReviewCache.key("k"), {"a": object()})


def test_default_root_and_never_in_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    assert ReviewCache().dir == tmp_path / "c" / "answers"
    with pytest.raises(ConfigError):
        ReviewCache(tmp_path / "repo" / ".git").put(ReviewCache.key("k"), {})


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_private_permissions(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path / "c")
    key = cache.key("k")
    cache.put(key, {"code": "secret"})
    for d in (tmp_path / "c", tmp_path / "c" / "answers", tmp_path / "c" / "answers" / key[:2]):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    path = tmp_path / "c" / "answers" / key[:2] / f"{key}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
