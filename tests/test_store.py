from __future__ import annotations

import json
import logging
import os
import stat
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.errors import ConfigError
from redline.model import Finding, Review, Severity
from redline.store import CACHE_ENV, TaskStore, TaskStoreError, cache_root

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")


def _clock(start: datetime | None = None) -> Callable[[], datetime]:
    times: Iterator[datetime] = (
        (start or datetime(2025, 1, 1, tzinfo=UTC)) + timedelta(minutes=i) for i in range(10**6)
    )
    return lambda: next(times)


@pytest.fixture
def store(tmp_path: Path) -> TaskStore:
    return TaskStore(tmp_path / "tasks", clock=_clock())


CONTENT = {"scope_label": "uncommitted changes", "units": ["u1", "u2"], "settings": {"k": 1}}


def _review(task_id: str) -> Review:
    finding = Finding(
        id="RL-1",
        file="a.py",
        line=1,
        severity=Severity.HIGH,
        category="Security",
        title="t",
        comment="c",
    )
    return Review(
        task_id=task_id,
        scope="uncommitted",
        scope_label="uncommitted changes",
        repo="/r",
        findings=[finding, finding.model_copy(update={"severity": Severity.LOW})],
    )


def _files(path: Path) -> dict[str, bytes]:
    """A record directory's files and their bytes."""
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_record_layout_and_updates(store: TaskStore) -> None:
    record = store.create("t-1", CONTENT)
    record.update("review", _review("t-1"))
    record.update("verification", {"quality_score": 80})
    record.append_attempt({"attempt": 1, "quality": 40})
    record.append_attempt({"attempt": 2, "quality": 80})
    record.update("analyzers", [])
    record.set_status("done")
    merged = store.load("t-1")
    assert list(merged)[:5] == ["content", "review", "verification", "attempts", "status"]
    assert list(merged)[5:] == ["task_id", "created_at", "updated_at", "format", "analyzers"]
    assert merged["content"] == CONTENT
    assert merged["review"]["findings"][0]["severity"] == "High"
    assert [a["attempt"] for a in merged["attempts"]] == [1, 2]
    assert merged["status"] == "done"
    assert merged["created_at"] < merged["updated_at"]
    assert merged == record.data
    # On disk: the content once, a head, and one file per stage.
    files = _files(store.path_for("t-1"))
    assert sorted(files) == [
        "content.json",
        "stage-analyzers.json",
        "stage-attempts.json",
        "stage-review.json",
        "stage-status.json",
        "stage-verification.json",
        "task.json",
    ]
    assert json.loads(files["content.json"]) == {"content": CONTENT}
    assert json.loads(files["stage-status.json"])["value"] == "done"


def test_invalid_updates_write_nothing(store: TaskStore) -> None:
    record = store.create("t-1", CONTENT)
    before = _files(store.path_for("t-1"))
    with pytest.raises(ValueError):
        record.update("status", "finished")
    with pytest.raises(ValueError):
        record.update("created_at", "now")
    with pytest.raises(ValueError):
        record.update("content", {"rewritten": True})  # written once, at the start
    with pytest.raises(ValueError):
        record.update("../x", 1)  # a key names a file: never a path
    with pytest.raises(TypeError):
        record.update("review", object())
    assert _files(store.path_for("t-1")) == before


def test_crash_during_write_keeps_previous_record(
    store: TaskStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = store.create("t-1", CONTENT)
    record.update("review", {"findings": []})
    before = _files(store.path_for("t-1"))

    def crash(src: str, dst: str) -> None:
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated"):
        record.update("verification", {"quality_score": 10})
    monkeypatch.undo()
    assert _files(store.path_for("t-1")) == before  # no temp left over either
    assert record.data["verification"] is None  # memory agrees with disk
    assert store.load("t-1")["verification"] is None
    record.update("verification", {"quality_score": 90})  # and the record still works
    assert store.load("t-1")["verification"] == {"quality_score": 90}


def test_list_newest_first_with_counts(store: TaskStore) -> None:
    for i in range(5):
        store.create(f"task-{i}", {"scope_label": f"scope {i}"})
    store.open("task-1").update("review", _review("task-1"))  # newer mtime, older creation
    summaries = store.list(3)
    assert [s.task_id for s in summaries] == ["task-4", "task-3", "task-2"]
    everything = store.list(None)
    assert [s.task_id for s in everything] == [f"task-{i}" for i in (4, 3, 2, 1, 0)]
    one = next(s for s in everything if s.task_id == "task-1")
    assert (one.scope_label, one.status, one.counts, one.findings) == (
        "scope 1",
        "running",
        {"High": 1, "Low": 1},
        2,
    )
    assert store.list(0) == []


def test_list_skips_corrupt_records(store: TaskStore, caplog: pytest.LogCaptureFixture) -> None:
    store.create("good", CONTENT)
    (store.root / "bad_content.json").write_text("{not json", encoding="utf-8")
    (store.root / "list_content.json").write_text("[1, 2]", encoding="utf-8")
    (store.root / "nodate_content.json").write_text('{"status": "done"}', encoding="utf-8")
    (store.root / "binary_content.json").write_bytes(b"\xff\xfe\x00")
    (store.root / "unrelated.txt").write_text("x", encoding="utf-8")
    (store.root / "headless.task").mkdir()  # a start interrupted before its head was written
    (store.root / "rotten.task").mkdir()
    (store.root / "rotten.task" / "task.json").write_text("{", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert [s.task_id for s in store.list()] == ["good"]
    assert "bad_content.json" in caplog.text and "rotten.task" in caplog.text
    with pytest.raises(TaskStoreError, match="corrupt"):
        store.load("rotten")
    with pytest.raises(TaskStoreError, match="corrupt"):
        store.load("bad")


def test_list_of_missing_directory_is_empty(tmp_path: Path) -> None:
    assert TaskStore(tmp_path / "nowhere").list() == []


@pytest.mark.parametrize(
    "bad", ["../x", "..", ".hidden", "a/b", "a\\b", "", "x" * 200, "a b", "a\x00b", "/etc/passwd"]
)
def test_path_traversal_and_malformed_ids_rejected(store: TaskStore, bad: str) -> None:
    with pytest.raises(TaskStoreError, match="invalid task id"):
        store.load(bad)
    with pytest.raises(TaskStoreError, match="invalid task id"):
        store.create(bad, CONTENT)


def test_unknown_and_duplicate_ids(store: TaskStore) -> None:
    with pytest.raises(TaskStoreError, match="no review task 'nope'"):
        store.load("nope")
    store.create("t-1", CONTENT)
    with pytest.raises(TaskStoreError, match="already exists"):
        store.create("t-1", CONTENT)


@posix_only
def test_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        store = TaskStore(tmp_path / "cache" / "review_content")
        store.create("t-1", CONTENT).update("status", "done")
    finally:
        os.umask(old)
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    assert stat.S_IMODE(store.path_for("t-1").stat().st_mode) == 0o700
    files = list(store.path_for("t-1").iterdir())
    assert len(files) == 3
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)


def test_default_root_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    assert TaskStore().root == tmp_path / "c" / "review_content"


def test_never_inside_git(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="git directory"):
        TaskStore(tmp_path / "repo" / ".git" / "redline").create("t-1", CONTENT)


def test_list_stops_reading_once_nothing_older_can_be_newer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import redline.store.records as records

    start = datetime(2025, 6, 1, tzinfo=UTC)
    store = TaskStore(tmp_path, clock=_clock(start))
    for i in range(50):
        store.create(f"t{i:02d}", CONTENT)
        created = (start + timedelta(minutes=i)).timestamp()
        os.utime(store.path_for(f"t{i:02d}"), (created + 1, created + 1))
    reads: list[Path] = []
    real = records.summary

    def counting(entry: records.Entry) -> records.TaskSummary | None:
        reads.append(entry.path)
        return real(entry)

    monkeypatch.setattr(records, "summary", counting)
    assert [s.task_id for s in store.list(3)] == ["t49", "t48", "t47"]
    assert len(reads) <= 4


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.sampled_from(list(Severity))
    | st.datetimes(timezones=st.just(UTC))
    | st.builds(Path, st.text(st.characters(blacklist_characters="\x00"), max_size=5)),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.frozensets(st.integers(), max_size=3)
        | st.dictionaries(
            st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(_json_values)
def test_a_stored_value_is_what_a_json_round_trip_gives(value: object) -> None:
    """The record holds what json.loads(json.dumps(...)) would give (the walk that replaced it
    lets other threads run), whatever the value: enums, dates, paths, sets, tuples, odd keys."""
    from redline.store.tasks import _default, _plain

    expected = json.loads(json.dumps(value, default=_default, ensure_ascii=False))
    got = _plain(value)
    assert got == expected
    assert json.dumps(got, sort_keys=False) == json.dumps(expected, sort_keys=False)
