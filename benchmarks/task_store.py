"""Task records on disk (store/tasks.py, records.py, retention.py): what a review writes, and
what the store holds after many reviews.

1. Bytes written per review for a big change (a units index of ~1 MB, as a 2,000-file review
   records), through the real TaskStore API, stage by stage as review/pipeline.py writes them:
   "before" is the one-file format (format 1: every stage rewrote the whole record, content
   included — the path records of that format still take when updated), "after" the current
   one (the content once, each stage in its own file). For an offline review (create,
   analyzers, review, status: the record written four times) and a model review (plus an
   attempt and the verification).
2. The store after 500 reviews of realistic sizes (mostly small changes, some large), through
   TaskStore.create and the stage writes, with no retention (what the store held before: nothing
   was ever deleted) and with the default policy (the newest 200, none older than 30 days);
   and what the retention check costs a review.

    python benchmarks/task_store.py [--reviews 500] [--big-mb 1.0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redline.store.records as records
from redline.config_models import Settings
from redline.store import RetentionPolicy, TaskRecord, TaskStore
from redline.store.tasks import _to_json

TARGET_BYTES_RATIO = 0.35  # after / before, big offline review: the content once, not 4 times
TARGET_STORE_MB = 20.0  # the store after 500 reviews, default policy


def target_line(name: str, value: str, op: str, limit: str, met: bool) -> str:
    return f"TARGET {name} {value} {op} {limit}: {'met' if met else 'MISSED'}"


def _unit(i: int) -> dict[str, Any]:
    """One units-index entry as diff/index.py writes it."""
    return {
        "unit_id": f"u{i:05d}",
        "file_path": f"src/package_{i % 37}/module_{i}.py",
        "old_path": None,
        "patch_type": "modified",
        "language": "python",
        "tags": ["logic", "large"] if i % 9 == 0 else ["logic"],
        "metrics": {
            "added": 40 + i % 60,
            "removed": i % 25,
            "hunks": 1 + i % 4,
            "functions": [f"handler_{i}", f"helper_{i}"],
            "single_function": i % 3 == 0,
        },
        "rule_context_level": "function",
        "rule_confidence": 0.8,
        "skip_reason": None,
    }


def _content(files: int) -> dict[str, Any]:
    return {
        "scope_label": f"branch topic vs main ({files} files)",
        "scope": "branch",
        "repo": "/home/dev/src/project",
        "stats": {"files": files, "added": files * 60, "removed": files * 10},
        "units": [_unit(i) for i in range(files)],
        "model": "gpt-4o-mini",
    }


def _finding(i: int) -> dict[str, Any]:
    return {
        "id": f"RL-{i}",
        "file": f"src/module_{i}.py",
        "line": 10 + i,
        "severity": ("High", "Medium", "Low")[i % 3],
        "category": "Correctness",
        "title": f"Finding {i}: the error path drops the connection",
        "comment": "The exception is swallowed and the caller retries forever. " * 3,
        "suggestion": "raise\n",
    }


def _review(task_id: str, findings: int) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "scope": "branch",
        "scope_label": "branch topic vs main",
        "repo": "/home/dev/src/project",
        "findings": [_finding(i) for i in range(findings)],
        "coverage": {"models": ["gpt-4o-mini"], "tokens": 42_000, "cost_usd": 0.0123},
    }


def _stages(record: TaskRecord, files: int, *, model: bool) -> None:
    """The writes review/pipeline.py makes after creating the record."""
    findings = max(1, files // 100)
    record.update("analyzers", [_finding(i) for i in range(findings)])
    if model:
        record.append_attempt({"attempt": 1, "quality": 80, "retry_context": "x" * 2000})
        record.update("verification", {"quality_score": 80, "dropped": [_finding(0)]})
    record.update("review", _review(record.task_id, findings))
    record.set_status("done")


def _legacy_create(store: TaskStore, task_id: str, content: dict[str, Any]) -> TaskRecord:
    """A record in the one-file format, started as the previous TaskStore.create did."""
    now = "2025-01-01T00:00:00+00:00"
    plain = _to_json(content)  # redacted, as create always did
    data: dict[str, Any] = {"content": plain, "review": None, "verification": None}
    data.update(attempts=[], status="running", task_id=task_id, created_at=now)
    data.update(updated_at=now, format=1)
    store.root.mkdir(parents=True, exist_ok=True)
    path = records.legacy_file(store.root, task_id)
    records.write_legacy(path, data)
    return TaskRecord(path, data, legacy=True)


def _written(run: Callable[[], None]) -> tuple[int, int, float]:
    """Bytes and files `run` writes through records.atomic_write, and its time."""
    counted = [0, 0]
    real = records.atomic_write

    def counting(path: Path, data: bytes) -> None:
        counted[0] += len(data)
        counted[1] += 1
        real(path, data)

    records.atomic_write = counting  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        run()
        elapsed = time.perf_counter() - start
    finally:
        records.atomic_write = real  # type: ignore[assignment]
    return counted[0], counted[1], elapsed


def _files_for_mb(mb: float) -> int:
    per_unit = len(records._dump(_unit(1234), compact=True)) + 1
    return max(1, int(mb * 1_000_000 / per_unit))


def bytes_per_review(root: Path, big_mb: float, rounds: int = 3) -> dict[str, Any]:
    files = _files_for_mb(big_mb)
    content = _content(files)
    out: dict[str, Any] = {"files": files}
    for model in (False, True):
        for kind in ("before", "after"):
            samples = []
            for r in range(rounds):
                store = TaskStore(root / f"{kind}-{model}-{r}", retention=RetentionPolicy(0, 0))

                def run(store: TaskStore = store, kind: str = kind, model: bool = model) -> None:
                    if kind == "before":
                        record = _legacy_create(store, "t-big", content)
                    else:
                        record = store.create("t-big", content)
                    _stages(record, files, model=model)

                samples.append(_written(run))
            written, count, _ = samples[0]
            seconds = statistics.median(s[2] for s in samples)
            out[(kind, model)] = (written, count, seconds)
    return out


def _size(path: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(path):
        for name in names:
            total += os.path.getsize(os.path.join(dirpath, name))
    return total


def _review_files(i: int) -> int:
    """A realistic mix: mostly small changes, a few large ones (~65 KB a record on average,
    the 126 measured reviews' 8.4 MB)."""
    if i % 50 == 0:
        return 2000
    if i % 10 == 0:
        return 200
    return (5, 12, 30, 60)[i % 4]


def store_after(root: Path, reviews: int, policy: RetentionPolicy) -> dict[str, Any]:
    store = TaskStore(root, retention=policy)
    creates: list[float] = []
    for i in range(reviews):
        content = _content(_review_files(i))
        start = time.perf_counter()
        record = store.create(f"t{i:04d}", content)
        creates.append(time.perf_counter() - start)
        _stages(record, _review_files(i), model=True)
    kept = len(records.scan(root))
    return {
        "records": kept,
        "bytes": _size(root),
        "create_ms": statistics.median(creates) * 1000,
        "create_max_ms": max(creates) * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, default=500)
    parser.add_argument("--big-mb", type=float, default=1.0)
    args = parser.parse_args()
    default = RetentionPolicy()
    configured = Settings().store
    assert (default.keep_records, default.keep_days) == (
        configured.keep_records,
        configured.keep_days,
    ), "RetentionPolicy's defaults must be [store]'s"

    with tempfile.TemporaryDirectory(prefix="redline-bench-store-") as tmp:
        root = Path(tmp)
        per = bytes_per_review(root / "per-review", args.big_mb)
        print(
            f"Task record writes per review, a big change ({per['files']} files, units index "
            f"≈{args.big_mb:g} MB)"
        )
        width = 22
        print("".ljust(34) + "before (one file)".rjust(width) + "after (per stage)".rjust(width))
        for model, label in ((False, "offline review"), (True, "model review")):
            b, a = per[("before", model)], per[("after", model)]
            print(
                f"{label}: bytes written".ljust(34)
                + f"{b[0] / 1e6:.2f} MB in {b[1]} writes".rjust(width)
                + f"{a[0] / 1e6:.2f} MB in {a[1]} writes".rjust(width)
            )
            print(
                f"{label}: time writing".ljust(34)
                + f"{b[2] * 1000:.0f} ms".rjust(width)
                + f"{a[2] * 1000:.0f} ms".rjust(width)
            )
        print(
            "(before: format 1 rewrote the whole record, indented, at every stage; after: the "
            "content once, compact, and each stage's own file)"
        )
        print()

        unbounded = store_after(root / "none", args.reviews, RetentionPolicy(0, 0))
        bounded = store_after(root / "default", args.reviews, default)
        print(f"The task store after {args.reviews} reviews (mostly small changes, every 10th "
              "200 files, every 50th 2,000)")  # fmt: skip
        print("".ljust(34) + "no retention".rjust(width) + "default policy".rjust(width))
        rows = (
            ("records kept", lambda r: f"{r['records']}"),
            ("size on disk", lambda r: f"{r['bytes'] / 1e6:.1f} MB"),
            ("create (median, ms)", lambda r: f"{r['create_ms']:.2f}"),
            ("create (slowest, ms)", lambda r: f"{r['create_max_ms']:.2f}"),
        )
        for label, cell in rows:
            print(label.ljust(34) + cell(unbounded).rjust(width) + cell(bounded).rjust(width))
        print(
            f"(default policy: keep_records = {default.keep_records}, "
            f"keep_days = {default.keep_days:g}; all {args.reviews} reviews ran today, so the "
            "count limit binds; a sweep runs once 10% more have accumulated)"
        )
        print()

    ratio = per[("after", False)][0] / per[("before", False)][0]
    print(
        target_line(
            "task-record bytes/review, big offline review, after/before",
            f"{ratio:.2f}",
            "<=",
            f"{TARGET_BYTES_RATIO}",
            ratio <= TARGET_BYTES_RATIO,
        )
    )
    mb = bounded["bytes"] / 1e6
    print(
        target_line(
            f"task store after {args.reviews} reviews (default policy)",
            f"{mb:.1f} MB",
            "<=",
            f"{TARGET_STORE_MB:g} MB",
            mb <= TARGET_STORE_MB,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
