"""The model stages of a review, supervised: plan → per-file reviewers in parallel → fusion
with the analyzers → verifier → (re-review while the quality score is below 50, at most three
attempts) → summary.

Nothing already found is lost: each attempt is recorded, a file whose reviewer fails is retried
in the next attempt and otherwise reported as not reviewed, and if the model cannot be reached
at all the caller falls back to the analyzers with a notice (`ModelUnavailable`). Once the
client's request cap is reached no further attempt starts, and the files it left are reported
as "not reviewed: model request cap (N) reached".
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from redline.agent.llm import LLMClient, LLMError, RequestCapReached, RequestTooLarge
from redline.context.instructions import Instructions
from redline.context.provider import ContextProvider
from redline.encoding import decode_text
from redline.errors import RedlineError
from redline.model import Finding, ReviewUnit, SkippedFile
from redline.plural import plural
from redline.progress import CancelToken, NullProgress, Progress, Stage
from redline.review.assemble import verify_or_keep
from redline.review.batching import review_group, stream_groups
from redline.review.fusion import fuse
from redline.review.planner import PlanCache, UnitPlan, fuse_plan, run_planner
from redline.review.reviewer import FileReview, PreparedFile, ReviewerInputs, prepare_file
from redline.review.schemas import PlannedUnit
from redline.review.structured import InvalidModelOutput
from redline.review.summary import render_summary, summarize
from redline.store.cache import AnswerCache

MAX_ATTEMPTS = 3
QUALITY_THRESHOLD = 50


class ModelUnavailable(RedlineError):
    """The model could not be used at all (unreachable, wrong key, unknown model)."""


@dataclass
class ModelStageResult:
    findings: list[Finding]
    dropped: list[Finding] = field(default_factory=list)
    files: dict[str, FileReview] = field(default_factory=dict)
    planner_skipped: list[SkippedFile] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    summary: str | None = None
    notes: list[str] = field(default_factory=list)
    quality_score: int | None = None
    # The models whose earlier answers (reviewer, verifier) came from the answer cache.
    cached_models: set[str] = field(default_factory=set)


@dataclass
class StageInputs:
    client: LLMClient
    provider: ContextProvider
    read_new: Callable[[str], bytes | None]
    instructions: Instructions | None = None
    instructions_prompt: str = ""
    cache: AnswerCache | None = None
    learnings: Callable[[str], str] | None = None  # a file's learnings block (reviewer.py)
    scope_label: str = ""
    on_attempt: Callable[[dict[str, Any]], None] | None = None
    on_file: Callable[[FileReview], None] | None = None
    progress: Progress = field(default_factory=NullProgress)
    cancel: CancelToken = field(default_factory=CancelToken)

    def report(
        self, stage: Stage, text: str, done: int | None = None, total: int | None = None
    ) -> None:
        self.progress.report(self.client.ledger.event(stage, text, done, total))


def provider_label(model: str) -> str:
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return f"model {model!r} (provider {provider})"


# A re-review whose only new units are at most this many — and at most a quarter of the
# change — gives them the rule plan instead of a planner round trip: the planner's job is to
# spread depth over a change, the rest of which is already planned (cached), and the round
# trip would sit in front of every reviewer. Larger deltas are planned by the model.
INCREMENTAL_RULE_PLAN_MAX = 2


async def _plan(inputs: StageInputs, plans_in: list[UnitPlan], notes: list[str]) -> list[UnitPlan]:
    units = [p.unit for p in plans_in]
    cache = PlanCache(inputs.cache, inputs.client) if inputs.cache is not None else None
    known: dict[str, PlannedUnit | None] = {}
    if cache is not None:
        for u in units:
            found, planned = cache.get(u)
            if found:
                known[u.unit_id] = planned
    missing = [u for u in units if u.unit_id not in known]
    if known:
        notes.append(f"planner: {len(known)} of {len(units)} units reused their cached plan")
    if not missing:
        return [fuse_plan(u, known[u.unit_id]) for u in units]
    if known and len(missing) <= INCREMENTAL_RULE_PLAN_MAX and 4 * len(missing) <= len(units):
        notes.append(
            f"planner: {len(missing)} units without a cached plan got the rule plan (no planner "
            "call: the rest of the change is already planned)"
        )
        return [fuse_plan(u, known.get(u.unit_id)) for u in units]
    try:
        # While the planner answers, the files' sources and function spans are read for the
        # reviewers (the provider caches them): off the critical path.
        (proposals, _), _ = await asyncio.gather(
            run_planner(inputs.client, missing), asyncio.to_thread(_warm, inputs.provider, units)
        )
    except InvalidModelOutput as exc:
        notes.append(f"planner answer unusable ({exc.message}); the rule plan was used")
        return [fuse_plan(u, known.get(u.unit_id)) for u in units]
    except (RequestCapReached, RequestTooLarge) as exc:
        # Not the model's fault: the reviewers meet the same caps and list their files.
        notes.append(f"planner not asked ({exc.message}); the rule plan was used")
        return [fuse_plan(u, known.get(u.unit_id)) for u in units]
    except LLMError as exc:
        model = inputs.client.models_for("planner")[0][0]
        raise ModelUnavailable(
            f"{provider_label(model)} could not be used: {exc.message}", hint=exc.hint
        ) from exc
    for u in missing:
        known[u.unit_id] = proposals.get(u.unit_id)
        if cache is not None:
            cache.put(u, known[u.unit_id])
    return [fuse_plan(u, known[u.unit_id]) for u in units]


def _warm(provider: ContextProvider, units: list[ReviewUnit]) -> None:
    """Build the bundles of the first files the reviewers take (in path order) while the
    planner answers. Only as many files as the reader keeps: warming more would only push
    the first ones out again (repo_reader.MAX_SOURCES)."""
    first = set(sorted({u.file_path for u in units})[: provider.reader.max_sources // 2])
    for unit in (u for u in units if u.file_path in first):
        try:
            provider.bundle(unit, unit.rule_context_level)
        except Exception:  # a warm-up only: the reviewer's own bundle reports what failed
            continue


def _read_text(read_new: Callable[[str], bytes | None]) -> Callable[[str], str | None]:
    def read(path: str) -> str | None:
        try:
            data = read_new(path)
        # What a failed read raises (see ScopeDiff.read_new); a bug must not read as "no text".
        except (RedlineError, OSError, UnicodeError):
            return None
        return None if data is None else decode_text(data)[0]

    return read


async def _review_files(
    paths: list[str],
    by_file: dict[str, list[UnitPlan]],
    reviewer_inputs: ReviewerInputs,
    inputs: StageInputs,
    attempt: int,
) -> list[FileReview]:
    """Every file's reviewer in parallel (the client bounds concurrency; small files of a
    large change share calls, review/batching.py), reporting progress and each file's result
    as soon as it is ready. A cancelled run starts no further call."""
    done = 0
    results: dict[str, FileReview] = {}

    def finished(review: FileReview) -> None:
        nonlocal done
        done += 1
        results[review.path] = review
        inputs.report(
            Stage.REVIEWING,
            f"reviewing files: {done} of {len(paths)} done (attempt {attempt})",
            done,
            len(paths),
        )
        if inputs.on_file is not None:
            inputs.on_file(review)

    def uncached() -> Iterator[PreparedFile]:
        for path in paths:
            inputs.cancel.check()
            p = prepare_file(path, by_file[path], reviewer_inputs)
            if p.cached is not None:
                finished(p.cached)
            else:
                yield p

    # Files are prepared (context built, prompt part rendered) as their calls are about to
    # start, not all up front: a change of thousands of files holds the prompts of the calls
    # in flight, not every file's (issue 23). The calls and their order are the same.
    window = asyncio.Semaphore(in_flight(inputs.client))

    async def one(group: list[PreparedFile]) -> None:
        try:
            inputs.cancel.check()
            reviews = await review_group(group, reviewer_inputs)
            inputs.cancel.check()
            for review in reviews:
                finished(review)
        finally:
            window.release()

    tasks: list[asyncio.Task[None]] = []
    try:
        for group in stream_groups(uncached(), lambda p: p.tokens):
            await window.acquire()
            if any(t.done() and not t.cancelled() and t.exception() for t in tasks):
                window.release()
                break  # a call failed for good (cancelled, say): gather raises it below
            tasks.append(asyncio.ensure_future(one(group)))
    except BaseException:
        for task in tasks:  # the review is cancelled: no call it started goes on
            task.cancel()
        raise
    await asyncio.gather(*tasks)
    return [results[p] for p in paths]


def in_flight(client: LLMClient) -> int:
    """Reviewer calls started at once: twice the client's concurrency, so a call's slot is
    taken as soon as one frees while the next file's context is built."""
    return 2 * client.settings.llm.max_concurrency


async def run_model_stage(
    units_plans: list[UnitPlan],
    analyzer_findings: list[Finding],
    inputs: StageInputs,
) -> ModelStageResult:
    notes: list[str] = []
    inputs.cancel.check()
    inputs.report(Stage.PLANNING, f"planning {len(units_plans)} review units")
    plans = await _plan(inputs, units_plans, notes)
    result = ModelStageResult(findings=list(analyzer_findings), notes=notes)
    result.planner_skipped = [
        SkippedFile(path=p.unit.file_path, reason=p.skip_reason) for p in plans if p.skip_reason
    ]
    by_file: dict[str, list[UnitPlan]] = defaultdict(list)
    for p in plans:
        if p.skip_reason is None:
            by_file[p.unit.file_path].append(p)

    read_text = _read_text(inputs.read_new)
    retry_context = ""
    best: tuple[int, list[Finding], list[Finding]] | None = None
    pending = sorted(by_file)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        reviewer_inputs = ReviewerInputs(
            client=inputs.client,
            provider=inputs.provider,
            read_new=inputs.read_new,
            instructions=inputs.instructions_prompt,
            retry_context=retry_context,
            cache=inputs.cache,
            learnings=inputs.learnings,
        )
        inputs.cancel.check()
        inputs.report(
            Stage.REVIEWING,
            f"reviewing {plural(len(pending), 'file')} (attempt {attempt})",
            0,
            len(pending),
        )
        reviews = await _review_files(pending, by_file, reviewer_inputs, inputs, attempt)
        for review in reviews:
            if review.status == "cached" and review.model:
                result.cached_models.add(review.model)
            earlier = result.files.get(review.path)
            # A re-review that failed (e.g. at the request cap) keeps the file's earlier review.
            if review.ok or earlier is None or not earlier.ok:
                result.files[review.path] = review

        model_findings = [f for r in result.files.values() for f in r.findings]
        reviewed = {p for p, r in result.files.items() if r.ok}
        fused = fuse(model_findings, analyzer_findings, reviewed_files=reviewed)
        inputs.cancel.check()
        inputs.report(Stage.VERIFYING, f"verifying {plural(len(model_findings), 'model finding')}")
        checked = await verify_or_keep(
            inputs.client, fused, read_text, notes, cache=inputs.cache, when=f"in attempt {attempt}"
        )
        kept, dropped, score = checked.kept, checked.dropped, checked.quality_score
        feedback = checked.feedback
        result.cached_models |= checked.cached_models
        if checked.cached:
            notes.append(
                f"verifier: {checked.cached} verdicts reused from the cache in attempt "
                f"{attempt} (finding and code around it unchanged)"
            )
        failed = [p for p, r in result.files.items() if not r.ok]
        record = {
            "attempt": attempt,
            "files": {
                p: {"status": r.status, "reason": r.reason, "findings": len(r.findings)}
                for p, r in result.files.items()
            },
            "quality_score": score,
            "kept": len(kept),
            "dropped": len(dropped),
            "feedback": feedback,
            "retry_context": retry_context,
        }
        result.attempts.append(record)
        if inputs.on_attempt is not None:
            inputs.on_attempt(record)
        rank = score if score is not None else QUALITY_THRESHOLD
        if best is None or rank >= best[0]:
            best = (rank, kept, dropped)
            result.quality_score = score
        low_quality = score is not None and score < QUALITY_THRESHOLD
        if attempt == MAX_ATTEMPTS or not (low_quality or failed):
            break
        if inputs.client.request_cap_reached:
            notes.append(
                f"attempt {attempt}: no further attempt, the model request cap "
                f"({inputs.client.max_requests}) is reached"
            )
            break
        if low_quality:
            retry_context = feedback or "The previous attempt scored low: be precise and concrete."
            pending = sorted(by_file)  # a new attempt re-reviews everything with the feedback
        else:
            pending = failed  # only what failed is tried again
        notes.append(
            f"attempt {attempt}: "
            + (
                f"quality score {score} < {QUALITY_THRESHOLD}, re-reviewing with the verifier's "
                "feedback"
                if low_quality
                else f"retrying {plural(len(failed), 'file')} that failed"
            )
        )

    assert best is not None
    _, result.findings, result.dropped = best
    for path, review in result.files.items():
        if not review.ok:
            notes.append(f"{path}: not reviewed by the model: {review.reason}")
    # Files left unreviewed by the request caps (count, size) are listed one by one, not
    # turned into "the model is unavailable".
    capped = inputs.client.requests_refused > 0 or inputs.client.requests_too_large > 0
    if all(not r.ok for r in result.files.values()) and result.files and not capped:
        model = inputs.client.models_for("reviewer")[0][0]
        reasons = sorted({r.reason or "" for r in result.files.values()})
        raise ModelUnavailable(
            f"{provider_label(model)} failed on every file: {'; '.join(reasons)}"
        )

    inputs.cancel.check()
    inputs.report(Stage.SUMMARIZING, "summarizing")
    try:
        answer, responses = await summarize(
            inputs.client, inputs.scope_label, result.findings, cache=inputs.cache
        )
        result.summary = render_summary(answer)
        if not responses:
            notes.append("summary: reused from the cache (the same findings as before)")
    except (LLMError, InvalidModelOutput) as exc:
        result.summary = render_summary(None)
        notes.append(f"summary not written by the model ({exc.message})")
    return result
