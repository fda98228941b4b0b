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
    review: Review | None = None  # the last finished review
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


@dataclass
class Snapshot:
    """An open document as it was when a review started: (uri, version, text)."""

    uri: str
    version: int | None
    text: str
