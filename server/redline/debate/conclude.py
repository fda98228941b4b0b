"""The debate's conclusion (interim: the plain listing; the final positions, the anonymous
neutral summary and its findings are being written in their own change)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from redline.agent.llm import LLMClient
from redline.debate.events import OnEvent
from redline.debate.roster import Debater, Roster
from redline.model import DebatePosition, Finding
from redline.progress import CancelToken


@dataclass
class Conclusion:
    positions: list[DebatePosition]
    summary_markdown: str
    findings: list[Finding] = field(default_factory=list)
    summarizer_error: str | None = None
    notes: list[str] = field(default_factory=list)


async def conclude(
    client: LLMClient,
    roster: Roster,
    speakers: Sequence[Debater],
    transcript_for: Callable[[Debater], Awaitable[str]],
    change: str,
    read_text: Callable[[str], str | None],
    *,
    rng: random.Random,
    on_event: OnEvent,
    cancel: CancelToken | None = None,
) -> Conclusion:
    listing = [await transcript_for(d) for d in speakers[:1]]
    return Conclusion(positions=[], summary_markdown="\n\n".join(listing))
