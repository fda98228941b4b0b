"""The transcript: every turn in order, and what each debater is shown of it.

A debater sees every earlier turn. When the transcript outgrows `debate.transcript_tokens`,
the older turns are folded into a summary written by that debater's own model
(`prompts/debate/compact.md`) rather than silently cut; the most recent turns stay verbatim.
Each debater keeps its own summary (its model wrote it), extended as the debate goes on, so
a debater's prompt stays bounded however many rounds are held. If summarizing fails, the
older turns are left out with a line saying so, and the report notes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from redline.agent.llm import LLMClient, LLMError
from redline.agent.session import estimate_tokens
from redline.debate.roster import Debater
from redline.model import DebateTurn
from redline.review.prompts import load_prompt

USER = "user"


def render_turn(turn: DebateTurn) -> str:
    head = f"[Round {turn.round}] {turn.label}"
    match turn.kind:
        case "interjection":
            return f"{head} (the user, interjecting):\n{turn.text}"
        case "pass":
            return f"{head}: passes (nothing to add)."
        case "skipped":
            return f"{head}: skipped ({turn.note or 'no answer'})."
        case "stopped":
            text = turn.text.strip()
            return f"{head} (cut short by the user):\n{text}" if text else f"{head}: cut short."
        case _:
            return f"{head}:\n{turn.text.strip()}"


def render_turns(turns: list[DebateTurn]) -> str:
    return "\n\n".join(render_turn(t) for t in turns)


@dataclass
class _Memory:
    summary: str = ""  # the debater's own summary of turns[:folded]
    folded: int = 0
    lost: int = 0  # turns left out because summarizing failed


@dataclass
class Transcript:
    """The turns so far, and per debater the folded summary of the older ones."""

    client: LLMClient
    budget_tokens: int
    note: Callable[[str], None]  # a line for the report (and the live view)
    turns: list[DebateTurn] = field(default_factory=list)
    _memories: dict[str, _Memory] = field(default_factory=dict)
    # The latest fold per debater, for the report (the live view gets every one).
    report_notes: dict[str, str] = field(default_factory=dict)

    def add(self, turn: DebateTurn) -> None:
        self.turns.append(turn)

    async def view_for(self, debater: Debater) -> str:
        """The transcript as `debater` is shown it, within the budget."""
        memory = self._memories.setdefault(debater.name, _Memory())
        recent = self.turns[memory.folded :]
        text = self._compose(memory, recent)
        # The user's bound, and never more than a quarter of the debater's model's context
        # (the change, its role and its tool results need the rest).
        budget = min(self.budget_tokens, self.client.context_limit(debater.role) // 4)
        if estimate_tokens(text) <= budget:
            return text
        keep = self._recent_to_keep(recent, budget)
        fold = recent[: len(recent) - keep]
        if fold:
            await self._fold(debater, memory, fold, budget)
        return self._compose(memory, self.turns[memory.folded :])

    def _recent_to_keep(self, recent: list[DebateTurn], budget: int) -> int:
        """How many of the latest turns stay verbatim: as many as fit in half the budget (at
        least the last one)."""
        used = keep = 0
        for turn in reversed(recent):
            cost = estimate_tokens(render_turn(turn)) + 1
            if keep and used + cost > budget // 2:
                break
            used += cost
            keep += 1
        return keep

    async def _fold(
        self, debater: Debater, memory: _Memory, fold: list[DebateTurn], budget: int
    ) -> None:
        first = memory.folded + 1
        last = memory.folded + len(fold)
        limit = max(200, budget // 3)
        request = (
            f"{load_prompt('debate/compact')}\n\n"
            f"Write at most about {limit} tokens.\n\n"
            f"# Summary so far\n{memory.summary or '(none yet)'}\n\n"
            f"# Turns to fold in\n{render_turns(fold)}"
        )
        try:
            answer = await self.client.complete(
                debater.role, [{"role": "user", "content": request}], max_tokens=limit
            )
        except LLMError as exc:
            memory.lost += len(fold)
            memory.folded = last
            self._say(
                debater,
                f"turns {first}–{last} left out of what {debater.label} was shown: summarizing "
                f"them failed ({exc.message[:200]})",
            )
            return
        memory.summary = (answer.content or "").strip()
        memory.folded = last
        self._say(
            debater,
            f"turns 1–{last} summarized for {debater.label} by its own model, to keep the "
            f"transcript within {budget:,} tokens",
        )

    def _say(self, debater: Debater, text: str) -> None:
        key = debater.name if "summarized" in text else f"{debater.name}:{len(self.report_notes)}"
        self.report_notes[key] = text
        self.note(text)

    @staticmethod
    def _compose(memory: _Memory, recent: list[DebateTurn]) -> str:
        parts = []
        if memory.summary:
            parts.append(
                f"Summary of turns 1–{memory.folded} (written by your model):\n{memory.summary}"
            )
        if memory.lost:
            parts.append(f"[{memory.lost} earlier turns are not shown]")
        if recent:
            parts.append(render_turns(recent))
        return "\n\n".join(parts) if parts else "(no turns yet: you open the debate)"
