"""`redline ask "<request>"`: one agent, all the tools, and `prompts/system.md`.

The model reads a free-form request ("review the current branch", "审查拉取请求 12"), makes
its own git/gh calls, and ends by calling `submit_review` with findings in the usual schema.
From there the findings go the way every review's do: anchored by their quoted code against
the file's current content, checked by the verifier, summarised and rendered.

A run always yields a Review. When the agent stops without submitting (out of steps, looping,
model failure, budget), the review failed: `Review.failure` and the first coverage note say
why (the report's headline says so, the CLI exits 2), and the task record is marked failed
with the reason; nothing the agent did before is lost from the record.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redline.agent.llm import LLMClient, LLMNotConfigured
from redline.agent.loop import Agent, AgentResult
from redline.agent.toolkit import ToolError
from redline.config import LoadedSettings
from redline.config_models import Settings
from redline.git.process import strip_control
from redline.model import Coverage, Finding, Review
from redline.plural import plural
from redline.progress import CancelToken, NullProgress, Progress, Stage
from redline.requests import AskRequest
from redline.review.anchoring import anchor_finding
from redline.review.ask_trail import (
    MAX_RECORDED_ERROR_CHARS,
    CallLog,
    CurrentText,
    RecordingExecutor,
    diff_files,
    tools_note,
)
from redline.review.assemble import (
    build_review,
    close_record,
    fill_usage,
    open_record,
    record_update,
    recorded_run,
    report_done,
    verify_or_keep,
)
from redline.review.estimate import request_cap
from redline.review.ground import Ground, default_branch_ground
from redline.review.pipeline import new_task_id
from redline.review.prompts import load_prompt
from redline.review.schemas import SubmittedReview
from redline.review.structured import extract_json
from redline.review.submission import (
    MAX_FINDINGS,
    MAX_SUMMARY_CHARS,
    SUBMIT_TOOL,
    parse_submission,
    submit_review_tool,
)
from redline.review.verifier import BATCH
from redline.store import TaskRecord, TaskStore
from redline.tools.memory_tools import close_memory
from redline.tools.registry import build_tool_registry
from redline.tools.sandbox import ToolContext, make_visible

log = logging.getLogger(__name__)

ROLE: Final = "ask"
ASK_NEEDS_MODEL: Final = (
    "ask needs a model: set --model or REDLINE_MODEL (or [models] model in the user config)"
)
MAX_REQUEST_CHARS: Final = 4_000  # what the model gets; a request is a sentence, not a file
MAX_LABEL_CHARS: Final = 120

# Said to the model once when it answers in prose instead of calling submit_review. One
# sentence, so it stays here (like the truncation note in agent/attempts.py) rather than in
# prompts/.
SUBMIT_NUDGE: Final = (
    "You answered without calling submit_review. Call submit_review now, exactly once, with "
    "your summary and findings (an empty findings list if you found nothing)."
)


# -- the run -------------------------------------------------------------------------------------


def scope_label(request: str) -> str:
    text = " ".join(strip_control(request).split())
    if len(text) > MAX_LABEL_CHARS:
        text = text[: MAX_LABEL_CHARS - 1] + "…"
    return f'ask: "{text}"'


def _stop_note(result: AgentResult, nudged: bool) -> str:
    error = strip_control(result.error or "")[:MAX_RECORDED_ERROR_CHARS]
    match result.stop_reason:
        case "max_steps":
            return f"the agent stopped after {result.steps} steps without submitting a review"
        case "loop":
            return (
                f"the agent was stopped for repeating a tool call ({error}) before submitting "
                "a review"
            )
        case "budget":
            return f"the model budget ran out before the agent submitted a review: {error}"
        case "request_cap":
            return f"the {error} before the agent submitted a review"
        case "error":
            return f"a model call failed before the agent submitted a review: {error}"
        case _:
            asked = ", even when asked to" if nudged else ""
            return (
                f"the agent answered without calling {SUBMIT_TOOL}{asked}; its answer is shown "
                "as the summary and no findings were submitted"
            )


def _json_submission(content: str | None) -> SubmittedReview | None:
    """A review the model wrote as a JSON answer instead of calling the tool, if it is one."""
    try:
        data = extract_json(content)
        if not isinstance(data, dict) or "findings" not in data:
            return None
        return parse_submission({"summary": "", **data})
    except (ValueError, ToolError):
        return None


def _answering_model(client: LLMClient) -> str:
    for rec in reversed(client.ledger.records):
        if rec.role == ROLE and rec.error is None:
            return rec.model
    models = client.models_for(ROLE)
    return models[0][0] if models else "unknown"


@dataclass
class _Outcome:
    result: AgentResult
    submitted: SubmittedReview | None
    nudged: bool = False
    steps: int = 0
    tool_calls: int = 0


async def _run_agent(agent: Agent, request: str, accepted: list[SubmittedReview]) -> _Outcome:
    result = await agent.run(request)
    outcome = _Outcome(result, None, steps=result.steps, tool_calls=result.tool_calls)
    if result.stop_reason == "submitted" and accepted:
        outcome.submitted = accepted[-1]
        return outcome
    if result.stop_reason != "final_answer":
        return outcome
    outcome.submitted = _json_submission(result.content)
    remaining = agent.max_steps - result.steps
    if outcome.submitted is not None or remaining < 1:
        return outcome
    # Once, and within the same step budget: the conversation so far plus the reminder.
    outcome.nudged = True
    again = await agent.run(
        [*result.messages, {"role": "user", "content": SUBMIT_NUDGE}], max_steps=remaining
    )
    outcome.result = again
    outcome.steps += again.steps
    outcome.tool_calls += again.tool_calls
    if again.stop_reason == "submitted" and accepted:
        outcome.submitted = accepted[-1]
    elif again.stop_reason == "final_answer":
        outcome.submitted = _json_submission(again.content)
    return outcome


def ask_settings(repo: Path, loaded: LoadedSettings) -> tuple[LoadedSettings, Ground]:
    """An ask run's settings and ground. It has no scope, so no base revision: the
    repository's settings and dismissals are those of its default branch (review/ground.py),
    what the change the agent reviews would be merged into; never the work tree's."""
    ground = default_branch_ground(repo)
    return loaded.with_repository(ground.repo_layer()), ground


async def run_ask(
    ask: AskRequest,
    repo: Path,
    settings: Settings,
    *,
    ground: Ground | None = None,
    client: LLMClient | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    store: TaskStore | None = None,
    max_steps: int = 50,
) -> Review:
    """Review what `request` asks for, with one tool-using agent. Never raises for what the
    model does; raises RedlineError when no model is configured, the request is empty or the
    repository is unusable."""
    progress = progress or NullProgress()
    cancel = cancel or CancelToken()
    client = client or LLMClient(settings)
    if not client.is_configured(ROLE):
        raise LLMNotConfigured(ASK_NEEDS_MODEL)
    request = ask.check().request
    if client.max_requests is None:
        client.max_requests = request_cap(ask_planned_calls(max_steps), None)
    ctx = ToolContext.for_run(repo, settings)
    ground = ground or default_branch_ground(ctx.root, ctx.runner)
    label = scope_label(request)
    task_id = new_task_id()
    content = {
        "request": request,
        "repo": str(ctx.root),
        "scope": "ask",
        "scope_label": label,  # what `redline history` lists
        "model": settings.models.for_role(ROLE)[0],
    }
    record = open_record(store, task_id, content)
    try:
        with recorded_run(record), cancel.attached(asyncio.get_running_loop()):
            return await _ask(
                request, ctx, label, task_id, settings, client, progress, cancel, record,
                max_steps, ground,
            )  # fmt: skip
    finally:
        close_memory(ctx)  # the memory tools' project memory, if the agent opened it


def ask_planned_calls(max_steps: int) -> int:
    """An ask run's planned model calls: every agent step, and the verifier batches for the
    most findings a submission may hold."""
    return max(1, max_steps) + -(-MAX_FINDINGS // BATCH)


async def _ask(
    request: str,
    ctx: ToolContext,
    label: str,
    task_id: str,
    settings: Settings,
    client: LLMClient,
    progress: Progress,
    cancel: CancelToken,
    record: TaskRecord | None,
    max_steps: int,
    ground: Ground,
) -> Review:
    accepted: list[SubmittedReview] = []
    registry = build_tool_registry(ctx)
    registry.register(submit_review_tool(accepted))
    calls = CallLog(record, progress, client, frozenset(registry.names))
    executor = RecordingExecutor(registry, calls, cancel)
    system = load_prompt("system")
    agent = Agent(client, ROLE, registry, system, max_steps=max(1, max_steps), executor=executor)

    cancel.check()
    progress.report(client.ledger.event(Stage.ASKING, f"asking the agent: {label}"))
    outcome = await _run_agent(agent, request[:MAX_REQUEST_CHARS], accepted)
    result, submitted = outcome.result, outcome.submitted

    coverage = Coverage()
    coverage.notes.append(tools_note(calls.names, outcome.steps))
    coverage.notes.append(f"repository settings and dismissals: those of {ground.label}")
    if outcome.nudged:
        coverage.notes.append(f"the agent was reminded once to call {SUBMIT_TOOL}")
    stop_note = None if submitted is not None else _stop_note(result, outcome.nudged)
    if stop_note:
        coverage.notes.insert(0, stop_note)
    record_update(
        record,
        "submission",
        {
            "stop_reason": result.stop_reason,
            "error": result.error,
            "steps": outcome.steps,
            "tool_calls": outcome.tool_calls,
            "submitted": submitted.model_dump(mode="json") if submitted else None,
        },
    )

    read_text = CurrentText(ctx.root, ctx.runner, settings.review.max_file_bytes)
    source = f"model:{_answering_model(client)}"
    findings: list[Finding] = []
    for mf in submitted.findings if submitted else []:
        mf = mf.model_copy(update={"file": read_text.normalize(mf.file, ctx.root)})
        findings.append(anchor_finding(mf, read_text(mf.file), source=source))

    cancel.check()
    if findings:
        progress.report(
            client.ledger.event(Stage.VERIFYING, f"verifying {plural(len(findings), 'finding')}")
        )
    checked = await verify_or_keep(client, findings, read_text, coverage.notes)
    kept, dropped, quality = checked.kept, checked.dropped, checked.quality_score
    record_update(
        record,
        "verification",
        {"quality_score": quality, "dropped": [f.model_dump(mode="json") for f in dropped]},
    )
    record_update(
        record,
        "attempts",
        [
            {
                "attempt": 1,
                "stop_reason": result.stop_reason,
                "steps": outcome.steps,
                "tool_calls": outcome.tool_calls,
                "submitted": len(findings),
                "kept": len(kept),
                "dropped": len(dropped),
                "quality_score": quality,
            }
        ],
    )

    changed, stats = diff_files(calls.diffs)
    coverage.reviewed_files = changed or sorted(set(calls.files_read))
    coverage.notes.extend(ctx.writes.notes())
    coverage.notes.extend(ctx.runner.notes(ctx.root))  # objects not read (alternates), ...
    fill_usage(client, coverage)

    review = build_review(
        settings,
        task_id=task_id,
        scope="ask",
        scope_label=label,
        repo=ctx.root,
        findings=kept,
        coverage=coverage,
        read_text=read_text,
        dismissals=ground.dismissals(),
        stats=stats,
        quality_score=quality,
        attempts=1 if outcome.steps else 0,
        dropped=dropped,
        failure=stop_note,
        # Only when the agent never submitted: a verifier that could not be used leaves the
        # agent's findings unverified (a coverage note), which is no "model could not be used".
        model_error=client.unusable.message if client.unusable and stop_note else None,
    )
    agent_text = submitted.summary if submitted is not None else (result.content or "")
    agent_text = make_visible(agent_text).strip()[:MAX_SUMMARY_CHARS]
    # The agent's own words; the counts are the headline's (review/summary.py).
    review.summary = agent_text or None
    close_record(record, review, error=stop_note)
    done = (
        f"ask stopped: {stop_note}"
        if stop_note
        else f"ask done: {plural(len(review.findings), 'finding')}"
    )
    report_done(progress, review, done, model_ran=True)
    return review


__all__ = ["ASK_NEEDS_MODEL", "SUBMIT_NUDGE", "run_ask", "scope_label"]
