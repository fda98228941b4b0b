"""`redline debate`: the debaters take turns over a change, then a neutral summarizer sums up.

(Being written: the orchestrator. The signature below is the contract the command line and
the language server build on.)
"""

from __future__ import annotations

from pathlib import Path

from redline.agent.llm import LLMClient
from redline.config_models import Settings
from redline.debate.events import DebateControl, OnEvent
from redline.model import Review
from redline.progress import CancelToken, Progress
from redline.requests import DebateRequest
from redline.store import TaskStore


async def run_debate(
    request: DebateRequest,
    repo: Path,
    settings: Settings,
    *,
    client: LLMClient | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    store: TaskStore | None = None,
    on_event: OnEvent | None = None,
    control: DebateControl | None = None,
    task_id: str | None = None,
) -> Review:
    """Debate `request.scope`; returns a Review whose `debate` holds the transcript, the
    anonymous positions and the neutral summary, and whose findings are the summary's action
    items and agreed problems, anchored. Raises RedlineError for a bad scope or no model."""
    raise NotImplementedError("being written")
