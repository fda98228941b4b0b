"""How a debate ends: final positions, anonymous; a neutral summary; findings from it.

The orchestrator (run.py) calls `conclude` after the last turn:

1. every debater still in the debate states its final position (concurrently), with its role
   prompt and prompts/debate/final_position.md, over the change and the transcript as it saw
   them; a debater whose call fails has no position and the conclusion notes it;
2. the positions are made anonymous (anonymity.py: identities scrubbed, order shuffled,
   "Debater A", "Debater B", …) and sent as a `summaries` event;
3. the summarizer (prompts/debate/summarizer.md) reads the change and the anonymous positions
   only and answers the JSON of debate/schemas.py (re-asked once when invalid); it is rendered
   as Markdown and sent as a `summary` event. When it fails the plain listing of the
   positions stands in, and the conclusion says why;
4. its action items and agreed problems that quote code become anchored findings (findings.py).

Nothing the summarizer receives names a debater or a model: it judges what was said.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from redline.agent.llm import LLMClient, LLMError
from redline.debate.anonymity import AnonymousPosition, anonymize
from redline.debate.events import DebateEvent, EventKind, OnEvent
from redline.debate.findings import ReadText, debate_findings
from redline.debate.roster import SUMMARIZER_ROLE, Debater, Roster
from redline.debate.schemas import DebateSummaryAnswer
from redline.debate.summary_markdown import plain_listing, render_summary, transcript_listing
from redline.errors import RedlineError
from redline.model import DebatePosition, Finding
from redline.progress import CancelToken
from redline.review.prompts import load_prompt
from redline.review.structured import ask_structured

FINAL_PROMPT = "debate/final_position"
SUMMARIZER_PROMPT = "debate/summarizer"
# The summary lists every position's points; it needs more room than one turn.
SUMMARY_TOKENS = 4_000
MAX_ERROR_CHARS = 300


@dataclass
class Conclusion:
    # anonymous ("Debater A", ...), in the shuffled order the summarizer saw
    positions: list[DebatePosition]
    # the neutral summary rendered as Markdown, or the plain listing
    summary_markdown: str
    # anchored; confidence by consensus; sources name the debaters
    findings: list[Finding] = field(default_factory=list)
    # why the plain listing stands in (None when the summary worked)
    summarizer_error: str | None = None
    # e.g. a debater whose final position failed
    notes: list[str] = field(default_factory=list)


async def conclude(
    client: LLMClient,
    roster: Roster,
    speakers: Sequence[Debater],
    transcript_for: Callable[[Debater], Awaitable[str]],
    change: str,
    read_text: ReadText,
    *,
    rng: random.Random,
    on_event: OnEvent,
    cancel: CancelToken | None = None,
) -> Conclusion:
    """The debate's conclusion. Never raises for what a model does (a failed call becomes a
    note or the plain listing); raises `Cancelled` when `cancel` is set."""
    cancel = cancel or CancelToken()
    cancel.check()
    notes: list[str] = []
    stated = await _final_positions(client, speakers, transcript_for, change, notes)
    cancel.check()
    anonymous = anonymize(stated, roster, rng)
    positions = [DebatePosition(label=p.label, text=p.text) for p in anonymous]
    on_event(
        DebateEvent(
            EventKind.SUMMARIES, {"positions": [p.model_dump(mode="json") for p in positions]}
        )
    )
    if not anonymous:
        error = "no debater stated a final position"
        last = await transcript_for(speakers[0]) if speakers else ""
        markdown = transcript_listing(last, error)
        _send_summary(on_event, markdown, failed=True)
        return Conclusion(positions, markdown, [], error, notes)
    try:
        answer = await _summarize(client, change, anonymous)
    except (LLMError, RedlineError) as exc:
        cancel.check()
        error = _short(f"the summarizer failed: {exc}")
        markdown = plain_listing(positions, error)
        _send_summary(on_event, markdown, failed=True)
        return Conclusion(positions, markdown, [], error, notes)
    markdown = render_summary(answer)
    _send_summary(on_event, markdown, failed=False)
    findings = debate_findings(answer, anonymous, read_text)
    return Conclusion(positions, markdown, findings, None, notes)


def _send_summary(on_event: OnEvent, markdown: str, *, failed: bool) -> None:
    on_event(DebateEvent(EventKind.SUMMARY, {"markdown": markdown, "failed": failed}))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


async def _final_positions(
    client: LLMClient,
    speakers: Sequence[Debater],
    transcript_for: Callable[[Debater], Awaitable[str]],
    change: str,
    notes: list[str],
) -> list[tuple[Debater, str]]:
    """(debater, its final position) for every speaker whose call worked, in roster order."""
    results = await asyncio.gather(
        *(_final_position(client, d, transcript_for, change) for d in speakers),
        return_exceptions=True,
    )
    stated: list[tuple[Debater, str]] = []
    for debater, result in zip(speakers, results, strict=True):
        if isinstance(result, str) and result.strip():
            stated.append((debater, result.strip()))
        elif isinstance(result, str):
            notes.append(f"{debater.label} stated no final position (an empty answer)")
        elif isinstance(result, LLMError):
            notes.append(_short(f"{debater.label} stated no final position: {result}"))
        else:
            # Cancellation and programming errors are not a debater's failure.
            raise result
    return stated


async def _final_position(
    client: LLMClient,
    debater: Debater,
    transcript_for: Callable[[Debater], Awaitable[str]],
    change: str,
) -> str:
    transcript = await transcript_for(debater)
    messages = [
        {"role": "system", "content": f"{debater.prompt.strip()}\n\n{load_prompt(FINAL_PROMPT)}"},
        {
            "role": "user",
            "content": (
                f"## The change\n\n{change}\n\n## The debate\n\n{transcript or '(no turns)'}\n\n"
                "State your final position now."
            ),
        },
    ]
    response = await client.complete(
        debater.role, messages, max_tokens=client.settings.debate.turn_tokens
    )
    return response.content or ""


async def _summarize(
    client: LLMClient, change: str, positions: Sequence[AnonymousPosition]
) -> DebateSummaryAnswer:
    listed = "\n\n".join(f"### {p.label}\n\n{p.text}" for p in positions)
    labels = ", ".join(p.label for p in positions)
    messages = [
        {"role": "system", "content": load_prompt(SUMMARIZER_PROMPT)},
        {
            "role": "user",
            "content": (
                f"## The change\n\n{change}\n\n## The final positions ({labels})\n\n{listed}"
            ),
        },
    ]
    answer, _ = await ask_structured(
        client, SUMMARIZER_ROLE, messages, DebateSummaryAnswer, max_tokens=SUMMARY_TOKENS
    )
    return answer
