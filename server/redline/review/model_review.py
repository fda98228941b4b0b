"""Glue between the offline pipeline and the model stages: builds the client, context
provider, instructions and cache for a review, runs the supervised model stages, and folds the
outcome (findings, usage, cost, coverage notes) into the Review being built.

If the model cannot be used at all, the review keeps the analyzer findings and says plainly
which model (and provider) failed and why: `ModelOutcome.model_error`, the one line the report's
headline, the CLI (exit 3) and the editor show. A model found unusable only by a later stage
(a verifier with a wrong key) is a coverage note instead: the reviewers' findings stand, so
"the analyzers' findings only" would not be true.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redline.agent.llm import LLMClient
from redline.config_models import Settings
from redline.context.instructions import load_instructions, render_for_prompt
from redline.context.provider import ContextProvider
from redline.model import Coverage, Finding, SkippedFile
from redline.plural import plural
from redline.progress import CancelToken, NullProgress, Progress
from redline.review.assemble import fill_usage
from redline.review.estimate import planned_calls, request_cap
from redline.review.plan import Plan
from redline.review.planner import UnitPlan
from redline.review.reviewer import FileReview
from redline.review.supervisor import ModelUnavailable, StageInputs, run_model_stage
from redline.store import ReviewCache
from redline.tools.memory_tools import close_memory
from redline.tools.sandbox import ToolContext, ToolLimits


@dataclass
class ModelOutcome:
    findings: list[Finding]
    dropped: list[Finding] = field(default_factory=list)
    summary: str | None = None
    quality_score: int | None = None
    attempts: int = 0
    ran: bool = False
    model_error: str | None = None  # why a configured model could not be used (one line)


async def run_model_review(
    plan: Plan,
    settings: Settings,
    analyzer_findings: list[Finding],
    coverage: Coverage,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    client: LLMClient | None = None,
    on_attempt: Callable[[dict[str, Any]], None] | None = None,
    on_file: Callable[[FileReview], None] | None = None,
) -> ModelOutcome:
    cancel = cancel or CancelToken()
    client = client or LLMClient(settings)
    scope = plan.scope
    if client.max_requests is None:
        files = len({u.file_path for u in plan.reviewable})
        client.max_requests = request_cap(planned_calls(files), None)
    tool_ctx = ToolContext(
        scope.repo_root,
        runner=scope.runner,
        old_rev=scope.old_rev,
        limits=ToolLimits.from_settings(settings),
        settings=settings,
    )
    provider = ContextProvider(
        scope, tool_ctx=tool_ctx, token_budget=settings.review.context_tokens
    )
    # The repository's guidance as the review's ground has it: the base's for a review of
    # commits, so a change cannot write the guidance for its own review (review/ground.py).
    instructions = load_instructions(scope.repo_root, read=plan.ground.instructions_reader())
    coverage.instructions_read = list(instructions.files_read)
    coverage.instructions_truncated = list(instructions.truncated)
    coverage.notes.extend(f"instructions: {note}" for note in instructions.notes)
    cache = (
        ReviewCache() if settings.review.cache and not os.environ.get("REDLINE_NO_CACHE") else None
    )
    inputs = StageInputs(
        client=client,
        provider=provider,
        read_new=scope.read_new,
        instructions=instructions,
        instructions_prompt=render_for_prompt(instructions) if instructions.text else "",
        cache=cache,
        learnings=plan.learnings.prompt_for,
        scope_label=scope.label,
        on_attempt=on_attempt,
        on_file=on_file,
        progress=progress or NullProgress(),
        cancel=cancel,
    )
    plans = [UnitPlan(unit=u, level=u.rule_context_level) for u in plan.reviewable]
    # Project memory's answers (callers, similar code) are read beside the planner's call.
    provider.warm_memory(plan.reviewable)
    try:
        with cancel.attached(asyncio.get_running_loop()):
            stage = await run_model_stage(plans, analyzer_findings, inputs)
    except ModelUnavailable as exc:
        unusable = client.unusable
        line = unusable.message if unusable is not None else exc.message
        hint = unusable.hint if unusable is not None else exc.hint
        coverage.notes.append(
            f"{line} — only the static analyzers' findings are shown"
            + (f" ({hint})" if hint else "")
        )
        fill_usage(client, coverage)
        return ModelOutcome(findings=analyzer_findings, model_error=line)
    finally:
        close_memory(tool_ctx)  # the review's project memory, opened by its first bundle
    coverage.notes.extend(stage.notes)
    coverage.skipped.extend(stage.planner_skipped)
    # With the model's stages run, "reviewed" means a valid reviewer answer (fresh or cached)
    # was used for the file: a file whose reviewer failed, or that the planner skipped
    # whole, is listed under skipped only, never under both; a file the analyzers could not
    # read (over the read limit) but whose diff the model reviewed is listed as reviewed.
    used = {path for path, review in stage.files.items() if review.ok}
    coverage.reviewed_files = sorted(used)
    for path, review in sorted(stage.files.items()):
        plan.learnings.record_applied(path, review.applied_learnings)
        if not review.ok:
            coverage.skipped.append(SkippedFile(path=path, reason=f"not reviewed: {review.reason}"))
        for omitted in review.omitted:
            coverage.notes.append(f"{path}: context left out: {omitted}")
    cached = sum(1 for r in stage.files.values() if r.status == "cached")
    if cached:
        coverage.notes.append(
            f"{plural(cached, 'file')} reused a cached model answer (unchanged code)"
        )
    fill_usage(client, coverage)
    coverage.cached_models = sorted(stage.cached_models)
    return ModelOutcome(
        findings=stage.findings,
        dropped=stage.dropped,
        summary=stage.summary,
        quality_score=stage.quality_score,
        attempts=len(stage.attempts),
        ran=True,
    )


def run_model_review_sync(*args: Any, **kwargs: Any) -> ModelOutcome:
    # Not asyncio.run: Ctrl+C must not wait for litellm's executor thread (interruptible.py).
    from redline.interruptible import run

    return run(run_model_review(*args, **kwargs))
