"""Placeholders (redline.redaction.placeholder), rule by rule: the digest is a keyed HMAC of
the value (never a plain hash), the key is kept privately and read back, never through a link,
and when it cannot be kept, a per-process key is used.

Each test states one rule a mutant of placeholder.py broke. Run by `make mutation` for
placeholder.py (scripts/mutation.toml).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import stat
from pathlib import Path

import pytest

import redline.redaction.placeholder as placeholder
from redline.redaction.placeholder import KEY_FILE, MASK, PLACEHOLDER, keyed_placeholder, stored_key


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv("REDLINE_CACHE_DIR", str(path))
    return path


def test_the_digest_is_the_first_six_hex_digits_of_an_hmac_sha256_of_the_value() -> None:
    key = b"k" * 32
    digest = hmac.new(key, b"hunter2", hashlib.sha256).hexdigest()[:6]
    assert keyed_placeholder(key, "hunter2", "password") == f"[REDACTED:password:{digest}]"
    assert PLACEHOLDER.fullmatch(keyed_placeholder(key, "hunter2", "password"))


def test_the_digest_depends_on_the_key_and_is_no_plain_hash() -> None:
    a = keyed_placeholder(b"a" * 32, "hunter2", "password")
    assert a != keyed_placeholder(b"b" * 32, "hunter2", "password")
    assert hashlib.sha256(b"hunter2").hexdigest()[:6] not in a


def test_a_value_with_lone_surrogates_or_non_ascii_gets_a_placeholder() -> None:
    key = b"k" * 32
    odd = "pw\udcff\u00e9"
    digest = hmac.new(key, odd.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:6]
    assert keyed_placeholder(key, odd, "secret") == f"[REDACTED:secret:{digest}]"


def test_the_placeholder_pattern_matches_placeholders_and_the_bare_mask_only() -> None:
    assert PLACEHOLDER.fullmatch(MASK)
    assert PLACEHOLDER.fullmatch("[REDACTED:github-token:0a1b2c]")
    assert not PLACEHOLDER.fullmatch("[REDACTED:github-token:0a1b2]")
    assert not PLACEHOLDER.fullmatch("[REDACTED:Token:0a1b2c]")


def test_the_key_is_created_once_privately_and_read_back(cache: Path) -> None:
    key = stored_key()
    path = cache / KEY_FILE
    assert len(key) == 32
    assert path.read_text() == key.hex()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stored_key() == key
    assert stored_key() == key


def test_a_stored_key_of_sixteen_bytes_is_used(cache: Path) -> None:
    cache.mkdir(mode=0o700)
    (cache / KEY_FILE).write_text("ab" * 16 + "\n")
    assert stored_key() == bytes.fromhex("ab" * 16)


def test_a_stored_key_is_read_from_its_first_128_hex_digits(cache: Path) -> None:
    cache.mkdir(mode=0o700)
    (cache / KEY_FILE).write_text("ab" * 64 + "cdef")
    assert stored_key() == bytes.fromhex("ab" * 64)


def test_a_stored_key_shorter_than_sixteen_bytes_is_not_used_nor_replaced(cache: Path) -> None:
    cache.mkdir(mode=0o700)
    (cache / KEY_FILE).write_text("ab" * 15)
    first, second = stored_key(), stored_key()
    assert first != second  # per process: a fresh random key each time
    assert bytes.fromhex("ab" * 15) not in (first, second)
    assert (cache / KEY_FILE).read_text() == "ab" * 15


def test_a_key_file_that_is_a_link_is_never_followed(cache: Path, tmp_path: Path) -> None:
    cache.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_text("cd" * 32)
    (cache / KEY_FILE).symlink_to(target)
    key = stored_key()
    assert key != bytes.fromhex("cd" * 32)
    assert target.read_text() == "cd" * 32


def test_a_dangling_link_as_key_file_is_not_written_through(cache: Path, tmp_path: Path) -> None:
    cache.mkdir(mode=0o700)
    target = tmp_path / "planted"
    (cache / KEY_FILE).symlink_to(target)
    stored_key()
    assert not target.exists()


def test_an_unusable_cache_gives_a_per_process_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("REDLINE_CACHE_DIR", str(blocker / "cache"))
    a, b = stored_key(), stored_key()
    assert len(a) == 32 and a != b


def test_a_key_that_cannot_be_stored_is_said_so_in_the_debug_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("REDLINE_CACHE_DIR", str(blocker / "cache"))
    with caplog.at_level(logging.DEBUG, logger="redline.redaction.placeholder"):
        stored_key()
    [record] = [r for r in caplog.records if r.name == "redline.redaction.placeholder"]
    message = record.getMessage()
    assert message.startswith("redaction key not stored (")
    assert message.endswith("); placeholders are per process")
    assert str(blocker) in message  # the reason: the error names the path


def test_two_processes_creating_the_key_at_once_agree_on_one(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other process writes its key between our failed read and our create: ours is
    refused (O_EXCL) and theirs is read."""
    cache.mkdir(mode=0o700)
    path = cache / KEY_FILE
    theirs = "ef" * 32
    real_open = os.open
    raced: list[bool] = []

    def racing_open(file: object, flags: int, *args: object) -> int:
        if not raced and Path(str(file)) == path and not flags & os.O_CREAT:
            raced.append(True)
            path.write_text(theirs)
            raise FileNotFoundError(file)
        return real_open(file, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(placeholder.os, "open", racing_open)
    assert stored_key() == bytes.fromhex(theirs)
    assert path.read_text() == theirs
