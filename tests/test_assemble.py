"""The end every entry point shares (review/assemble.py): what is shown, what the record says,
and a verifier that cannot run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from redline.agent.llm import LLMClient
from redline.config_models import Settings
from redline.model import Category, Coverage, Finding, Severity
from redline.progress import Cancelled
from redline.review.assemble import (
    build_review,
    close_record,
    open_record,
    recorded_run,
    verify_or_keep,
)
from redline.store import TaskStore
from redline.store.dismissals import DismissalStore


def _finding(fid: str, severity: Severity, file: str = "a.py", line: int = 1) -> Finding:
    return Finding(
        id=fid,
        file=file,
        line=line,
        severity=severity,
        category=Category.QUALITY,
        title=fid,
        comment="c",
        sources=["model:m"],
    )


def test_the_review_shows_what_is_at_or_above_the_floor_most_serious_first() -> None:
    settings = Settings.model_validate({"review": {"min_severity": "Medium"}})
    coverage = Coverage()
    findings = [
        _finding("low", Severity.LOW),
        _finding("med-b", Severity.MEDIUM, "b.py"),
        _finding("crit", Severity.CRITICAL, "z.py"),
        _finding("med-a", Severity.MEDIUM, "a.py", 9),
        _finding("info", Severity.INFO),
    ]
    review = build_review(
        settings,
        task_id="t",
        scope="branch",
        scope_label="branch",
        repo=Path("/nonexistent/repo"),
        findings=findings,
        coverage=coverage,
        read_text=lambda path: None,
    )
    assert [f.id for f in review.findings] == ["crit", "med-a", "med-b"]
    assert "2 findings below Medium hidden (review.min_severity)" in review.coverage.notes


def test_a_run_that_raises_leaves_its_record_cancelled_or_failed(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "tasks")
    cancelled = open_record(store, "t-cancel", {"scope": "ask"})
    with pytest.raises(Cancelled), recorded_run(cancelled):
        raise Cancelled("cancelled by the user")
    failed = open_record(store, "t-fail", {"scope": "ask"})
    with pytest.raises(RuntimeError), recorded_run(failed):
        raise RuntimeError("boom")
    assert store.load("t-cancel")["status"] == "cancelled"
    assert store.load("t-fail")["status"] == "failed"
    assert "boom" in store.load("t-fail")["error"]


def test_a_finished_run_closes_its_record_done_or_failed_with_the_reason(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "tasks")
    settings = Settings()
    for task_id, error in (("t-done", None), ("t-stopped", "the agent stopped after 5 steps")):
        record = open_record(store, task_id, {"scope": "ask"})
        review = build_review(
            settings,
            task_id=task_id,
            scope="ask",
            scope_label="ask",
            repo=tmp_path,
            findings=[_finding("x", Severity.HIGH)],
            coverage=Coverage(),
            read_text=lambda path: None,
        )
        close_record(record, review, error=error)
    done, stopped = store.load("t-done"), store.load("t-stopped")
    assert done["status"] == "done" and done["review"]["findings"][0]["id"] == "x"
    assert stopped["status"] == "failed" and stopped["error"] == "the agent stopped after 5 steps"


def test_a_record_that_cannot_be_written_costs_the_record_not_the_run(tmp_path: Path) -> None:
    blocked = tmp_path / "tasks"
    blocked.write_text("a file where the store's directory should be")
    assert open_record(TaskStore(blocked), "t-1", {"scope": "ask"}) is None
    with recorded_run(None):  # no record: nothing to write, nothing raised
        pass


def test_without_a_verifier_findings_are_kept_unverified_and_the_note_says_so() -> None:
    client = LLMClient(Settings())  # no model at all: no verifier either
    notes: list[str] = []
    findings = [_finding("x", Severity.HIGH)]
    checked = asyncio.run(verify_or_keep(client, findings, lambda path: None, notes))
    assert checked.kept == findings and checked.dropped == [] and checked.quality_score is None
    assert notes == ["no verifier model configured: findings are shown unverified"]


def test_dismissed_findings_are_left_out_and_named_whatever_the_entry_point(
    tmp_path: Path,
) -> None:
    stored, marked, kept = (
        _finding("RL-aaaaaaaaaaaa", Severity.HIGH, "a.py", 1),
        _finding("RL-bbbbbbbbbbbb", Severity.HIGH, "b.py", 1),
        _finding("RL-cccccccccccc", Severity.HIGH, "b.py", 2),
    )
    DismissalStore(tmp_path).add(stored, "accepted risk")
    texts = {"b.py": "x = 1  # redline: ignore[RL-bbbbbbbbbbbb] generated\ny = 2\n"}
    for scope in ("branch", "ask"):
        review = build_review(
            Settings(),
            task_id="t",
            scope=scope,
            scope_label=scope,
            repo=tmp_path,
            findings=[stored, marked, kept],
            coverage=Coverage(),
            read_text=texts.get,
        )
        assert [f.id for f in review.findings] == [kept.id]
        notes = review.coverage.notes
        assert "2 findings dismissed (.redline/dismissed.toml or inline markers)" in notes
        assert any(n.startswith(f"dismissed (dismissed.toml): {stored.id}") for n in notes)
        assert any(n.startswith(f"dismissed (inline marker): {marked.id}") for n in notes)
