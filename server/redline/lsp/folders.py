"""A workspace folder as the language server knows it, and an open document's snapshot."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redline.model import Finding, Review
    from redline.requests import EngineRequest


@dataclass
class Folder:
    """A workspace folder and what Redline last showed in it."""

    uri: str  # as the client spelled it (echoed back unchanged)
    path: Path
    root: Path | None = None  # the git working tree; resolved off the loop on first review
    last_request: EngineRequest | None = None
    review: Review | None = None  # the last finished review (of any kind)
    # The last finished run of each kind ("review", "debate", "ask"): a debate's action items do
    # not replace the review's findings; the editor shows them together or one kind at a time.
    runs: dict[str, Review] = field(default_factory=dict)
    run_index: dict[str, tuple[str, ...]] = field(default_factory=dict)  # id → its runs' kinds
    shown_runs: tuple[str, ...] | None = None  # the kinds the user chose to see; None: all
    findings: dict[str, list[Finding]] = field(default_factory=dict)  # uri → current findings
    published: set[str] = field(default_factory=set)  # uris holding Redline diagnostics
    save_timer: asyncio.TimerHandle | None = None
    # `redline/findings` bookkeeping (sidebar.py): the uris whose list changed since the last
    # notification, whether the next one must be the whole list, what the last one was sent for.
    changed: set[str] = field(default_factory=set)
    full_due: bool = True
    sent_task: str | None = None
    sent_at: float = 0.0
    findings_timer: asyncio.TimerHandle | None = None
    # Files whose diagnostics an edit moved, published together (diagnostics.publish_soon).
    publish_due: set[str] = field(default_factory=set)
    publish_timer: asyncio.TimerHandle | None = None
    published_at: float = 0.0
    # id → (the finding, its redacted JSON row): a finding is dumped and redacted once.
    rows: dict[str, tuple[Finding, dict[str, Any]]] = field(default_factory=dict)
    # Results being published in slices (landing.py): the sidebar's list waits for the end.
    landing: int = 0


RUN_KINDS = ("review", "debate", "ask")


def run_kind(request_kind: str) -> str:
    """The run a request's findings belong to: every review scope is one "review"."""
    return request_kind if request_kind in ("debate", "ask") else "review"


def keep_run(folder: Folder, kind: str, review: Review) -> None:
    """`review` becomes the folder's last run of `kind` (and its newest run)."""
    folder.runs.pop(kind, None)
    folder.runs[kind] = review  # insertion order: the newest run last
    folder.review = review
    reindex(folder)


def reindex(folder: Folder) -> None:
    """Which kept runs found each finding (after a run, a fix or a dismissal changed them)."""
    index: dict[str, tuple[str, ...]] = {}
    for kind in RUN_KINDS:
        run = folder.runs.get(kind)
        for f in run.findings if run is not None else []:
            if kind not in index.get(f.id, ()):
                index[f.id] = (*index.get(f.id, ()), kind)
    folder.run_index = index


def kept_findings(folder: Folder) -> list[Finding]:
    """Every kept run's findings, the newest run's first; a finding two runs share (the same
    id: the same code, file and category) is listed once."""
    seen: set[str] = set()
    out: list[Finding] = []
    for review in reversed(list(folder.runs.values())):
        for f in review.findings:
            if f.id not in seen:
                seen.add(f.id)
                out.append(f)
    return out


def is_shown(folder: Folder, finding_id: str) -> bool:
    """Whether the runs the user chose to see (`Folder.shown_runs`) include this finding's.
    A finding of no kept run (early findings of a review still running) is shown."""
    if folder.shown_runs is None:
        return True
    kinds = folder.run_index.get(finding_id)
    return kinds is None or any(k in folder.shown_runs for k in kinds)


@dataclass
class Snapshot:
    """An open document as it was when a review started: (uri, version, text)."""

    uri: str
    version: int | None
    text: str
