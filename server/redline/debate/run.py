"""`redline debate`: the debaters take turns over a change, then a neutral summarizer sums up.

    scope ─► change text (debate/change.py) ─► rounds: A → B → C → A → … (debate/turns.py,
    each turn an agent with the read-only tools, streamed) ─► stop: rounds held, everyone
    passed, budget, the user (DebateControl), fewer than two debaters left ─► anonymous final
    positions, neutral summary, findings (debate/conclude.py) ─► a Review like every entry
    point's (review/assemble.py), with `Review.debate` holding what was said.

Redline relays and keeps order; it decides nothing about the content. Every turn is written
to the task record as it happens, so a crash loses nothing already said. Events for the
caller (the terminal, the editor) are listed in debate/events.py.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from redline.agent.llm import LLMClient
from redline.config import LoadedSettings
from redline.config_models import Settings
from redline.debate.change import change_text
from redline.debate.conclude import Conclusion, conclude
from redline.debate.events import DebateControl, DebateEvent, EventKind, OnEvent
from redline.debate.roster import build_roster
from redline.debate.rounds import Debate
from redline.model import Coverage, Review
from redline.progress import CancelToken, NullProgress, Progress, Stage
from redline.requests import DebateRequest
from redline.review.ask_trail import CurrentText
from redline.review.assemble import (
    build_review,
    close_record,
    fill_usage,
    open_record,
    record_update,
    recorded_run,
    report_done,
)
from redline.review.estimate import request_cap
from redline.review.pipeline import new_task_id, plan_review
from redline.store import TaskStore
from redline.tools.memory_tools import close_memory
from redline.tools.sandbox import ToolContext

STOP_TEXT = {
    "rounds": "all {rounds} rounds were held",
    "passed": "every debater passed in round {round}",
    "budget": "the model budget ran out",
    "user": "the user ended the debate",
    "debaters": "fewer than two debaters were left",
}


def planned_calls(debaters: int, rounds: int) -> int:
    """The debate's model calls if every turn answers at once: the turns, one final position
    per debater, and the summary (with its re-ask)."""
    return debaters * rounds + debaters + 2


async def run_debate(
    request: DebateRequest,
    repo: Path,
    settings: Settings | LoadedSettings,
    *,
    client: LLMClient | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    store: TaskStore | None = None,
    on_event: OnEvent | None = None,
    control: DebateControl | None = None,
    task_id: str | None = None,
    rng: random.Random | None = None,
) -> Review:
    """Debate `request.scope`; returns a Review whose `debate` holds the transcript, the
    anonymous positions and the neutral summary, and whose findings are the summary's action
    items and agreed problems, anchored. Raises RedlineError for a bad scope or no model;
    never for what a model does."""
    progress = progress or NullProgress()
    cancel = cancel or CancelToken()
    control = control or DebateControl()
    request = request.check()
    # The plan merges in the repository's settings of the review's base (review/ground.py);
    # what comes before it (the debaters, the client) is the user's alone.
    user = settings.settings if isinstance(settings, LoadedSettings) else settings
    roster = build_roster(user)
    client = client or LLMClient(user)
    roster.assign(client)
    rounds = request.rounds or user.debate.rounds
    if client.max_requests is None:
        planned = planned_calls(len(roster.debaters), rounds) * user.debate.turn_steps
        client.max_requests = request_cap(planned, None)
    plan = plan_review(repo, request.scope, settings, progress, cancel=cancel, for_model=True)
    effective = plan.settings
    root = plan.scope.repo_root
    task_id = task_id or new_task_id()
    label = f"debate: {plan.scope.label}"
    change = change_text(plan, effective.debate.change_tokens)
    events = on_event or (lambda _event: None)
    events(
        DebateEvent(
            EventKind.STARTED,
            {
                "debaters": [
                    {"name": d.name, "label": d.label, "model": d.model} for d in roster.debaters
                ],
                "rounds": rounds,
                "scopeLabel": plan.scope.label,
            },
        )
    )
    ctx = ToolContext.for_run(root, effective)
    content = {
        "repo": str(root),
        "scope": request.scope.kind.value,
        "scope_label": label,
        "stats": plan.scope.stats.model_dump(),
        "debaters": [{"name": d.name, "model": d.model} for d in roster.debaters],
        "summarizer": roster.summarizer_model,
        "rounds": rounds,
        "change": change.text,
    }
    record = open_record(store, task_id, content)
    debate = Debate(
        request,
        effective,
        roster,
        client,
        change,
        ctx,
        progress,
        cancel,
        control,
        events,
        record,
        rounds,
    )
    loop = asyncio.get_running_loop()
    try:
        with recorded_run(record), cancel.attached(loop):
            if plan.empty:
                debate.stop_reason = "empty"
                debate.notes.append(f"nothing to debate: {plan.scope.label}")
            else:
                await debate.hold()
            return await _finish(debate, plan, label, task_id, rng or random.Random())
    finally:
        close_memory(ctx)  # the memory tools' project memory, if a debater opened it


def _recording_positions(debate: Debate) -> OnEvent:
    """The caller's event callback, also writing the final positions to the task record as
    they are known (a crash during the summary keeps them)."""

    def on_event(event: DebateEvent) -> None:
        if event.kind is EventKind.SUMMARIES:
            record_update(debate.record, "positions", event.data.get("positions", []))
        debate.on_event(event)

    return on_event


async def _finish(
    debate: Debate, plan: Any, label: str, task_id: str, rng: random.Random
) -> Review:
    settings, client, cancel = debate.settings, debate.client, debate.cancel
    spoken = [t for t in debate.transcript.turns if t.kind in ("turn", "pass", "stopped")]
    if debate.stop_reason != "empty":
        text = STOP_TEXT.get(debate.stop_reason, debate.stop_reason).format(
            rounds=debate.rounds, round=debate.rounds_held
        )
        debate.emit(EventKind.STOPPED, reason=debate.stop_reason, text=text)
    record_update(debate.record, "stop", {"reason": debate.stop_reason})
    read_text = CurrentText(debate.ctx.root, debate.ctx.runner, settings.review.max_file_bytes)
    conclusion: Conclusion | None = None
    failure: str | None = None
    if debate.stop_reason == "empty":
        pass
    elif not any(t.kind == "turn" for t in spoken) and debate.first_error:
        failure = f"the debate could not be held: {debate.first_error}"
    elif spoken:
        cancel.check()
        debate.progress.report(client.ledger.event(Stage.SUMMARIZING, "summing up the debate"))
        conclusion = await conclude(
            client,
            debate.roster,
            list(debate.active),
            debate.transcript.view_for,
            debate.change.text,
            read_text,
            rng=rng,
            on_event=_recording_positions(debate),
            cancel=cancel,
        )
    record = debate.debate_record(conclusion)
    record_update(debate.record, "debate", record.model_dump(mode="json"))

    coverage = Coverage(notes=list(plan.scope.notes))
    coverage.reviewed_files = list(debate.change.shown)
    if debate.change.omitted:
        coverage.notes.append(
            "not shown to the debaters for length (they could read them with their tools): "
            + ", ".join(debate.change.omitted)
        )
    coverage.notes.extend(record.notes)
    if failure:
        coverage.notes.insert(0, failure)
    coverage.notes.extend(debate.ctx.runner.notes(debate.ctx.root))
    fill_usage(client, coverage)
    review = build_review(
        settings,
        task_id=task_id,
        scope=plan.scope.request.kind,
        scope_label=label,
        repo=debate.ctx.root,
        # The change's edits to the review settings, whatever the debaters concluded.
        findings=[*(conclusion.findings if conclusion else []), *plan.settings_findings],
        coverage=coverage,
        read_text=read_text,
        dismissals=plan.ground.dismissals(),
        stats=plan.scope.stats,
        summary=record.summary_markdown or None,
        attempts=1 if spoken else 0,
        failure=failure,
        # Only when the debate could not be held: a debater whose key was refused leaves the
        # debate (said in the transcript) while the others go on.
        model_error=client.unusable.message if client.unusable and failure else None,
        debate=record,
    )
    close_record(debate.record, review, error=failure)
    counts = {s.value: n for s, n in review.counts_by_severity().items() if n}
    debate.emit(
        EventKind.FINAL,
        findings=len(review.findings),
        counts=counts,
        tokens=review.coverage.tokens,
        costUsd=review.coverage.cost_usd,
    )
    n = len(review.findings)
    done = f"debate done: {n} finding{'' if n == 1 else 's'}"
    if failure:
        done = f"debate failed: {failure}"
    report_done(debate.progress, review, done, model_ran=True)
    return review


__all__ = ["STOP_TEXT", "planned_calls", "run_debate"]
