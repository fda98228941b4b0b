"""Task records on disk (store/records.py) and their retention (store/retention.py): the content
written once, stages that survive a crash, pruning by count and age that spares running tasks,
`redline history --prune`, and records of the old one-file format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import redline.store.records as records
import redline.store.retention as retention
from redline.store import RetentionPolicy, TaskStore

from gitrepo import GitRepo

REDLINE = Path(sys.executable).with_name("redline")
DAY = 86400.0
BIG = {"scope_label": "branch topic vs main", "repo": "/r", "units": ["x" * 100] * 1000}
NO_LIMITS = RetentionPolicy(keep_records=0, keep_days=0)


def _store(root: Path, policy: RetentionPolicy = NO_LIMITS) -> TaskStore:
    return TaskStore(root, retention=policy)


def _age(store: TaskStore, task_id: str, days: float) -> None:
    """Make a record look last written `days` ago."""
    when = time.time() - days * DAY
    os.utime(store.path_for(task_id), (when, when))


def _done(store: TaskStore, task_id: str, days: float = 0.0) -> None:
    record = store.create(task_id, {"scope_label": task_id})
    record.set_status("done")
    _age(store, task_id, days)


def _ids(store: TaskStore) -> set[str]:
    """The ids of the records on disk, from the names (not through records.scan)."""
    names = os.listdir(store.root)
    return {n.removesuffix(".task").removesuffix("_content.json") for n in names if n[0] != "."}


# -- the content is written once ---------------------------------------------------------------


def test_content_is_written_once_and_stages_do_not_rewrite_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[tuple[str, int]] = []
    real = records.atomic_write

    def counting(path: Path, data: bytes) -> None:
        writes.append((path.name, len(data)))
        real(path, data)

    monkeypatch.setattr(records, "atomic_write", counting)
    store = _store(tmp_path / "tasks")
    record = store.create("t-1", BIG)
    content = store.path_for("t-1") / "content.json"
    before = content.stat()
    record.update("analyzers", [])
    record.append_attempt({"attempt": 1})
    record.update("verification", {"quality_score": 80})
    record.update("review", {"findings": []})
    record.set_status("done")
    after = content.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert [name for name, _ in writes].count("content.json") == 1
    big = sum(n for name, n in writes if name == "content.json")
    assert big > 100_000 and sum(n for name, n in writes if name != "content.json") < 2_000
    assert store.load("t-1")["content"] == BIG


# -- crashes -----------------------------------------------------------------------------------

CRASH = """
import os, sys
from pathlib import Path
from redline.store import RetentionPolicy, TaskStore

store = TaskStore(Path(sys.argv[1]), retention=RetentionPolicy(0, 0))
record = store.create("t-crash", {"scope_label": "crash"})
record.update("review", {"findings": [{"severity": "High"}]})
real = os.replace

def dying(src, dst):  # the process dies with the verification's temp file written, unrenamed
    if str(dst).endswith("stage-verification.json"):
        os._exit(9)
    real(src, dst)

os.replace = dying
record.update("verification", {"quality_score": 10})
"""


def test_a_process_killed_between_and_during_stage_writes_leaves_a_readable_record(
    tmp_path: Path,
) -> None:
    root = tmp_path / "tasks"
    proc = subprocess.run([sys.executable, "-c", CRASH, str(root)], check=False)
    assert proc.returncode == 9
    store = _store(root)
    data = store.load("t-crash")
    assert data["content"] == {"scope_label": "crash"}
    assert data["review"] == {"findings": [{"severity": "High"}]}
    assert data["verification"] is None and data["status"] == "running"
    leftovers = [p.name for p in store.path_for("t-crash").iterdir() if p.name.startswith(".")]
    assert leftovers, "the crash left the unrenamed temp file, which no reader takes for a stage"
    (summary,) = store.list()
    assert (summary.task_id, summary.status, summary.counts) == ("t-crash", "running", {"High": 1})
    store.open("t-crash").set_status("failed")  # and the record goes on being usable
    assert store.load("t-crash")["status"] == "failed"


# -- retention ---------------------------------------------------------------------------------


def test_prune_by_count_keeps_the_newest(tmp_path: Path) -> None:
    store = _store(tmp_path / "tasks", RetentionPolicy(keep_records=3, keep_days=0))
    for i in range(6):
        _done(store, f"t{i}", days=6 - i)  # t5 is the newest
    # Creating them pruned as it went: never more than 3 (+ the one being created).
    assert _ids(store) == {"t3", "t4", "t5"}
    _done(store, "t6", days=0)
    assert _ids(store) == {"t4", "t5", "t6"}
    assert store.prune().removed == []  # nothing more to do


def test_prune_by_age_and_whichever_keeps_fewer(tmp_path: Path) -> None:
    store = _store(tmp_path / "tasks")
    for i, days in enumerate((1, 10, 29, 31, 90)):
        _done(store, f"t{i}", days=days)
    sizes = {t: records.size(e) for e in records.scan(store.root) for t in [e.task_id]}
    pruned = _store(store.root, RetentionPolicy(keep_records=200, keep_days=30)).prune()
    assert sorted(pruned.removed) == ["t3", "t4"] and pruned.kept == 3
    assert pruned.bytes == sizes["t3"] + sizes["t4"] > 0
    assert _store(store.root, RetentionPolicy(keep_records=2, keep_days=30)).prune().removed == [
        "t2"
    ]
    assert _ids(store) == {"t0", "t1"}


def test_a_running_task_is_never_pruned(tmp_path: Path) -> None:
    store = _store(tmp_path / "tasks")
    live = store.create("live", {"scope_label": "this process is writing it"})
    _age(store, "live", 60)
    # Another process's review, running (its status on disk), older than the count limit.
    other = store.create("other", {"scope_label": "running elsewhere"})
    retention.mark_live(store.root, "other", False)  # as if created by another process
    _age(store, "other", 3)
    # A review whose process died a long time ago: "running" forever, but abandoned.
    store.create("dead", {"scope_label": "crashed"})
    retention.mark_live(store.root, "dead", False)
    _age(store, "dead", 40)
    for i in range(3):
        _done(store, f"t{i}", days=i)
    store = _store(store.root, RetentionPolicy(keep_records=1, keep_days=30))
    assert sorted(store.prune().removed) == ["dead", "t1", "t2"]
    assert _ids(store) == {"live", "other", "t0"}
    live.set_status("done")  # finished: now it is an old record like any other
    _age(store, "live", 60)
    assert store.prune().removed == ["live"]
    assert other.status == "running"


def test_creation_prunes_only_when_due(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path / "tasks", RetentionPolicy(keep_records=5, keep_days=30))
    _done(store, "first")  # the first sweep ever: it leaves the marker
    scans: list[Path] = []
    real = records.scan

    def counting(root: Path) -> list[records.Entry]:
        scans.append(root)
        return real(root)

    monkeypatch.setattr(records, "scan", counting)
    for i in range(4):
        _done(store, f"t{i}")
    assert scans == []  # under the count, swept today: names counted, nothing statted or read
    _done(store, "t4")
    assert len(scans) == 1 and len(_ids(store)) == 5
    marker = store.root / ".last-prune"
    os.utime(marker, (time.time() - 2 * DAY,) * 2)
    _done(_store(store.root, RetentionPolicy(keep_records=50, keep_days=30)), "t5")
    assert len(scans) == 2  # a day since the last sweep: ages are checked again
    # Past a larger limit, a sweep waits for 10% more records, then keeps exactly the limit.
    tens = _store(store.root, RetentionPolicy(keep_records=10, keep_days=30))
    for i in range(5):
        _done(tens, f"u{i}")
    assert len(_ids(store)) == 11 and len(scans) == 2
    _done(tens, "u5")
    assert len(_ids(store)) == 10 and len(scans) == 3


def test_a_failing_prune_never_fails_the_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(root: Path) -> list[records.Entry]:
        raise OSError("disk on fire")

    monkeypatch.setattr(records, "scan", broken)
    store = _store(tmp_path / "tasks", RetentionPolicy(keep_records=1, keep_days=30))
    store.create("t-1", {"scope_label": "x"}).set_status("done")
    assert store.load("t-1")["status"] == "done"


# -- records of the old one-file format --------------------------------------------------------

OLD_REVIEW = {
    "task_id": "old-1",
    "scope": "uncommitted",
    "scope_label": "uncommitted changes",
    "repo": "/old/repo",
    "findings": [
        {
            "id": "RL-1",
            "file": "a.py",
            "line": 1,
            "severity": "High",
            "category": "Security",
            "title": "Shell injection in the old record",
            "comment": "c",
        }
    ],
}


def _write_old(root: Path, task_id: str = "old-1", days: float = 1.0) -> Path:
    """A record as the previous version wrote it: one JSON file, the whole record."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{task_id}_content.json"
    data: dict[str, Any] = {
        "content": {"scope_label": "uncommitted changes", "repo": "/old/repo", "units": []},
        "review": OLD_REVIEW,
        "verification": {"quality_score": 70},
        "attempts": [{"attempt": 1}],
        "status": "done",
        "task_id": task_id,
        "created_at": "2025-03-01T10:00:00+00:00",
        "updated_at": "2025-03-01T10:05:00+00:00",
        "format": 1,
        "analyzers": [],
    }
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    when = time.time() - days * DAY
    os.utime(path, (when, when))
    return path


def test_old_format_records_are_listed_read_updated_and_pruned(tmp_path: Path) -> None:
    store = _store(tmp_path / "tasks")
    path = _write_old(store.root)
    _done(store, "new-1")
    assert [s.task_id for s in store.list()] == ["new-1", "old-1"]
    (old,) = [s for s in store.list() if s.task_id == "old-1"]
    assert (old.status, old.scope_label, old.repo, old.counts) == (
        "done",
        "uncommitted changes",
        "/old/repo",
        {"High": 1},
    )
    assert store.load("old-1") == json.loads(path.read_text(encoding="utf-8"))
    store.open("old-1").update("note", "kept in the same file")
    assert json.loads(path.read_text(encoding="utf-8"))["note"] == "kept in the same file"
    assert not store.path_for("old-1").exists()
    os.utime(path, (time.time() - 40 * DAY,) * 2)
    pruned = _store(store.root, RetentionPolicy(keep_records=200, keep_days=30)).prune()
    assert pruned.removed == ["old-1"] and not path.exists()


# -- the command line --------------------------------------------------------------------------


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    clean["REDLINE_CACHE_DIR"] = str(tmp_path / "cache")
    user = tmp_path / "config.toml"
    user.write_text("[store]\nkeep_records = 2\nkeep_days = 30\n", encoding="utf-8")
    clean["REDLINE_CONFIG"] = str(user)
    return clean


def _redline(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REDLINE), *args], env=env, capture_output=True, text=True, check=False, timeout=60
    )


def test_history_prune_and_old_records_through_the_cli(tmp_path: Path, env: dict[str, str]) -> None:
    store = _store(tmp_path / "cache" / "review_content")  # no limits while filling it
    _write_old(store.root, "old-1", days=10)
    for i in range(4):
        _done(store, f"t{i}", days=4 - i)  # t3 newest
    listed = json.loads(_redline(env, "history", "--all", "--format", "json").stdout)
    assert [e["task_id"] for e in listed] == ["t3", "t2", "t1", "t0", "old-1"]
    shown = _redline(env, "history", "old-1")
    assert shown.returncode == 0 and "Shell injection in the old record" in shown.stdout

    run = _redline(env, "history", "--prune", "--format", "json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert sorted(result["task_ids"]) == ["old-1", "t0", "t1"]
    assert result["removed"] == 3 and result["kept"] == 2 and result["bytes"] > 0
    assert [e["task_id"] for e in json.loads(
        _redline(env, "history", "--all", "--format", "json").stdout
    )] == ["t3", "t2"]  # fmt: skip

    env = {**env, "REDLINE_KEEP_RECORDS": "1"}
    text = _redline(env, "history", "--prune")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("removed 1 record (") and "1 kept" in text.stdout
    assert "keep_records = 1" in text.stdout
    again = _redline(env, "history", "--prune")
    assert again.stdout.startswith("removed 0 records (0 bytes)")
    refused = _redline(env, "history", "t3", "--prune")
    assert refused.returncode == 2 and "--prune" in refused.stderr


def test_a_repository_file_cannot_set_how_long_records_are_kept(tmp_path: Path) -> None:
    from redline.config import load_settings

    (tmp_path / ".redline.toml").write_text("[store]\nkeep_records = 1\n", encoding="utf-8")
    user = tmp_path / "user.toml"
    user.write_text("[store]\nkeep_days = 7\n", encoding="utf-8")
    loaded = load_settings(tmp_path, environ={}, user_file=user)
    assert (loaded.settings.store.keep_records, loaded.settings.store.keep_days) == (200, 7)
    assert any("store.keep_records" in w for w in loaded.warnings)


def test_reviews_prune_by_the_users_policy_as_they_start(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The policy a review applies is the settings' `[store]` (here the user file's
    keep_records = 2), handed to its store by the CLI."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    for i in range(5):
        repo.write("a.py", f"x = {i + 2}\n")
        run = _redline(env, "review", "--repo", str(repo.root), "--quiet", "--format", "json")
        assert run.returncode == 0, run.stderr
    records = list((tmp_path / "cache" / "review_content").glob("*.task"))
    assert len(records) == 2, records
