"""The rounds of a debate: turn after turn, A → B → C → A → …, until it stops.

`Debate` holds a running debate's state: the transcript, who is still in it, and why it
stopped (rounds held, everyone passed, budget, the user, fewer than two debaters left). A
stop from the user (`DebateControl`) cuts a turn in flight short; what it said so far is kept.
Every turn goes to the task record as it happens.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from redline.agent.llm import LLMClient
from redline.config_models import Settings
from redline.debate.change import ChangeText
from redline.debate.conclude import Conclusion
from redline.debate.events import DebateControl, DebateEvent, EventKind, OnEvent, TurnSlot
from redline.debate.roster import Debater, Roster
from redline.debate.transcript import USER, Transcript
from redline.debate.turns import TurnOutcome, take_turn
from redline.model import DebateParticipant, DebateRecord, DebateTurn
from redline.progress import CancelToken, Progress, Stage
from redline.requests import DebateRequest
from redline.review.assemble import record_update
from redline.store import TaskRecord
from redline.tools.registry import READ_ONLY_TOOLS, build_tool_registry
from redline.tools.sandbox import ToolContext

T = TypeVar("T")


@dataclass
class Debate:
    """One debate's state while it runs."""

    request: DebateRequest
    settings: Settings
    roster: Roster
    client: LLMClient
    change: ChangeText
    ctx: ToolContext
    progress: Progress
    cancel: CancelToken
    control: DebateControl
    on_event: OnEvent
    record: TaskRecord | None
    rounds: int
    transcript: Transcript = field(init=False)
    active: list[Debater] = field(init=False)
    out: dict[str, str] = field(default_factory=dict)  # debater name → why it left
    notes: list[str] = field(default_factory=list)
    rounds_held: int = 0
    stop_reason: str = ""
    first_error: str | None = None

    def __post_init__(self) -> None:
        self.transcript = Transcript(
            self.client, self.settings.debate.transcript_tokens, note=self._live_note
        )
        self.active = list(self.roster.debaters)

    # -- events --------------------------------------------------------------------------------

    def emit(self, event: EventKind, /, **data: Any) -> None:
        self.on_event(DebateEvent(event, data))

    def _live_note(self, text: str) -> None:
        self.emit(EventKind.NOTE, text=text)

    def note(self, text: str) -> None:
        self.notes.append(text)
        self._live_note(text)

    def _progress(self, done: int, total: int, text: str) -> None:
        self.progress.report(self.client.ledger.event(Stage.DEBATING, text, done, total))

    # -- the rounds ----------------------------------------------------------------------------

    async def hold(self) -> None:
        registry = build_tool_registry(self.ctx, READ_ONLY_TOOLS)
        total = self.rounds * len(self.active)
        done = 0
        for round_no in range(1, self.rounds + 1):
            spoke = False
            for debater in list(self.active):
                self.cancel.check()
                if not await self._before_turn(round_no, debater):
                    self.stop_reason = "user"
                    return
                self._progress(done, total, f"round {round_no}: {debater.label}")
                turn = await self._turn(debater, registry, round_no)
                done += 1
                spoke = spoke or turn.kind == "turn"
                if self.stop_reason:
                    return
                if turn.kind == "stopped":
                    self.stop_reason = "user"
                    return
                if len(self.active) < 2:
                    self.stop_reason = "debaters"
                    return
            self.rounds_held = round_no
            if not spoke:
                self.stop_reason = "passed"
                return
        self.stop_reason = "rounds"

    async def _before_turn(self, round_no: int, debater: Debater) -> bool:
        """Interjections and stop requests before a turn; False: the debate ends here."""
        if self.control.before_turn is not None and not self.control.stop_requested:
            decision = await self.control.before_turn(
                TurnSlot(round_no, debater.name, debater.label)
            )
            if decision.action == "interject":
                self.control.interject(decision.text)
            elif decision.action == "stop":
                self.control.stop("user")
        for text in self.control.take_interjections():
            said = DebateTurn(
                round=round_no, speaker=USER, label="User", kind="interjection", text=text
            )
            self.transcript.add(said)
            self._record_turns()
            self.emit(EventKind.INTERJECTION, round=round_no, text=text)
        return self.control.stop_requested is None

    async def _turn(self, debater: Debater, registry: Any, round_no: int) -> DebateTurn:
        self.emit(
            EventKind.TURN_STARTED,
            round=round_no,
            speaker=debater.name,
            label=debater.label,
            model=debater.model,
        )
        pieces: list[str] = []

        def on_text(piece: str) -> None:
            pieces.append(piece)
            self.emit(EventKind.DELTA, round=round_no, speaker=debater.name, text=piece)

        before = len(self.client.ledger.records)
        view = await self.transcript.view_for(debater)
        work = take_turn(
            debater,
            self.client,
            registry,
            change=self.change.text,
            transcript=view,
            round_no=round_no,
            rounds=self.rounds,
            max_steps=self.settings.debate.turn_steps,
            max_tokens=self.settings.debate.turn_tokens,
            on_text=on_text,
        )
        outcome = await _unless_stopped(work, self.control)
        tokens = sum(
            r.total_tokens for r in self.client.ledger.records[before:] if r.role == debater.role
        )
        turn = self._turn_entry(debater, round_no, outcome, "".join(pieces), tokens)
        self.transcript.add(turn)
        self._record_turns()
        self.emit(
            EventKind.TURN_FINISHED,
            round=round_no,
            speaker=debater.name,
            label=debater.label,
            kind=turn.kind,
            text=turn.text,
            note=turn.note,
            tokens=turn.tokens,
            latencyMs=round(turn.latency_s * 1000),
            toolCalls=turn.tool_calls,
        )
        return turn

    def _turn_entry(
        self,
        debater: Debater,
        round_no: int,
        outcome: TurnOutcome | None,
        streamed: str,
        tokens: int,
    ) -> DebateTurn:
        if outcome is None:  # cut short by a stop: what it said so far is kept
            return DebateTurn(
                round=round_no,
                speaker=debater.name,
                label=debater.label,
                kind="stopped",
                text=streamed.strip(),
                note="cut short by the user",
                tokens=tokens,
            )
        if outcome.stop_reason in ("budget", "request_cap"):
            self.stop_reason = "budget"
            self.note(f"{debater.label}: {outcome.error}")
        elif outcome.kind == "skipped" and outcome.stop_reason not in ("max_steps",):
            # Its model failed after the client's retries and fallbacks: asking again would
            # cost the same wait, so it leaves the debate.
            self.first_error = self.first_error or outcome.error
            self.active.remove(debater)
            self.out[debater.name] = outcome.note or "its model failed"
            self.note(f"{debater.label} is out of the debate: {outcome.note}")
        return DebateTurn(
            round=round_no,
            speaker=debater.name,
            label=debater.label,
            kind=outcome.kind,
            text=outcome.text,
            note=outcome.note,
            tokens=tokens,
            latency_s=round(outcome.latency_s, 3),
            tool_calls=outcome.tool_calls,
        )

    def _record_turns(self) -> None:
        record_update(
            self.record, "turns", [t.model_dump(mode="json") for t in self.transcript.turns]
        )

    # -- the record ----------------------------------------------------------------------------

    def debate_record(self, conclusion: Conclusion | None) -> DebateRecord:
        by_role = self.client.ledger.by_role()
        participants = []
        for d in self.roster.debaters:
            totals = by_role.get(d.role)
            participants.append(
                DebateParticipant(
                    name=d.name,
                    label=d.label,
                    model=d.model,
                    calls=totals.calls if totals else 0,
                    tokens=totals.total_tokens if totals else 0,
                    cost_usd=_cost(self.client, d.role),
                    out=self.out.get(d.name),
                )
            )
        notes = [*self.notes, *self.transcript.report_notes.values()]
        if conclusion is not None:
            notes.extend(conclusion.notes)
        return DebateRecord(
            rounds_planned=self.rounds,
            rounds_held=self.rounds_held,
            stop_reason=self.stop_reason,
            participants=participants,
            turns=list(self.transcript.turns),
            positions=conclusion.positions if conclusion else [],
            summary_markdown=conclusion.summary_markdown if conclusion else "",
            summarizer_model=self.roster.summarizer_model,
            summarizer_error=conclusion.summarizer_error if conclusion else None,
            notes=notes,
        )


def _cost(client: LLMClient, role: str) -> float | None:
    records = [r for r in client.ledger.records if r.role == role]
    if any(r.cost_usd is None for r in records if r.error is None):
        return None
    return sum(r.cost_usd or 0.0 for r in records)


async def _unless_stopped(work: Awaitable[T], control: DebateControl) -> T | None:
    """`work`'s result, or None when the user stops the debate first (the work is cancelled:
    a turn in flight is cut short at once)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    stopped = asyncio.Event()

    def wake() -> None:
        loop.call_soon_threadsafe(stopped.set)

    remove = control.on_stop(wake)
    waiter = asyncio.ensure_future(stopped.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    finally:
        remove()
        waiter.cancel()
        if not task.done():
            task.cancel()
