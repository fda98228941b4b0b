"""The verifier checks model findings against the code before anyone sees them.

INCORRECT findings are dropped (kept in the detailed record), PARTIALLY_CORRECT ones are kept
with lower confidence and a corrected severity, CORRECT ones gain confidence. Analyzer-only
findings are deterministic and are not sent. The answer also scores the review (0–100); the
supervisor re-runs a review that scores below 50.

Verdicts are cached (when the caller passes a cache) under exactly what the verifier is shown
for the finding — its id, place, text and the numbered code around it — so a re-review does
not ask again about a finding whose code did not change. Each verdict keeps its call's quality
score, and the review's score stays the average over findings. Verdicts from a call that scored
below CACHE_MIN_SCORE are not kept: that attempt is re-reviewed, and must be verified afresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from redline.agent.llm import LLMClient, LLMResponse
from redline.model import AnchorState, Finding, Verification
from redline.review.anchoring import APPROXIMATE_CONFIDENCE
from redline.review.prompts import load_prompt, prompt_version
from redline.review.schemas import FindingVerdict, VerifierAnswer
from redline.review.structured import ask_structured
from redline.store.cache import AnswerCache

WINDOW = 12  # lines of code shown around each finding
BATCH = 20  # findings per verifier call
CACHE_MIN_SCORE = 50  # the supervisor's re-review threshold


class CachedVerdict(BaseModel):
    """One finding's verdict in the answer cache, with its call's quality score and model."""

    verdict: FindingVerdict
    score: int = Field(ge=0, le=100)
    model: str = ""


@dataclass
class Verified:
    kept: list[Finding]
    dropped: list[Finding] = field(default_factory=list)
    quality_score: int | None = None
    feedback: str = ""
    responses: list[LLMResponse] = field(default_factory=list)
    cached: int = 0  # verdicts reused from the cache
    cached_models: set[str] = field(default_factory=set)  # the models that gave those verdicts


def needs_verification(f: Finding) -> bool:
    return any(s.startswith("model:") for s in f.sources)


def _window(text: str | None, f: Finding) -> str:
    if text is None or f.line is None:
        return "(code not available)"
    lines = text.splitlines()
    start = max(1, f.line - WINDOW)
    end = min(len(lines), (f.end_line or f.line) + WINDOW)
    return "\n".join(f"{n:>5}  {lines[n - 1]}" for n in range(start, end + 1))


def _describe(f: Finding, text: str | None) -> str:
    where = f"{f.file}:{f.line}" if f.line else f"{f.file} (location not found)"
    fix = f"\nSuggested code:\n```\n{f.improved_code}\n```" if f.improved_code else ""
    return (
        f"## Finding {f.id}\n"
        f"- where: {where}\n- severity: {f.severity.value}\n- category: {f.category.value}\n"
        f"- title: {f.title}\n- comment: {f.comment}\n"
        f"Quoted code:\n```\n{f.existing_code}\n```{fix}\n"
        f"Code around it (new version, numbered):\n```\n{_window(text, f)}\n```\n"
    )


def apply_verdict(f: Finding, v: FindingVerdict, model: str) -> Finding | None:
    """The finding after its verdict, or None when it is dropped."""
    verification = Verification(verdict=v.verdict, evidence=v.evidence, model=model)
    if v.verdict == "INCORRECT":
        return None
    if v.verdict == "PARTIALLY_CORRECT":
        return f.model_copy(
            update={
                "verification": verification,
                "severity": v.corrected_severity or f.severity,
                "confidence": round(f.confidence * 0.8, 3),
            }
        )
    # A confirmed problem is likely, but one the review could only place approximately (its
    # quote is not in the file) keeps the anchoring's discount: where it is stays uncertain.
    floor = 0.8 * (APPROXIMATE_CONFIDENCE if f.anchor is AnchorState.APPROXIMATE else 1.0)
    return f.model_copy(
        update={"verification": verification, "confidence": max(f.confidence, round(floor, 3))}
    )


async def verify(
    client: LLMClient,
    findings: list[Finding],
    read_text: Callable[[str], str | None],
    *,
    cache: AnswerCache | None = None,
) -> Verified:
    to_check = [f for f in findings if needs_verification(f)]
    result = Verified(kept=[f for f in findings if not needs_verification(f)])
    if not to_check:
        return result
    scores: list[tuple[int, int]] = []
    feedback: list[str] = []
    described = [(f, _describe(f, read_text(f.file))) for f in to_check]
    keys: dict[str, str] = {}
    pending: list[tuple[Finding, str]] = []
    if cache is not None:
        models = ",".join(m for m, _ in client.models_for("verifier"))
        version = prompt_version("verifier")
        for f, text in described:
            key = cache.key("verdict", models, version, text)
            hit = cache.lookup(key, CachedVerdict)
            # The key covers the finding's id (it is in the text), so this is only a guard.
            if hit is None or hit.verdict.id != f.id:
                keys[f.id] = key
                pending.append((f, text))
                continue
            _apply(result, f, hit.verdict, hit.model)
            scores.append((hit.score, 1))
            result.cached += 1
            if hit.model:
                result.cached_models.add(hit.model)
    else:
        pending = described
    batches = [pending[start : start + BATCH] for start in range(0, len(pending), BATCH)]
    # The batches are independent: asked at once (the client bounds concurrency), their
    # answers applied in batch order. A failed batch fails the verification as before, once
    # the others have ended (none is left running).
    outcomes = await asyncio.gather(
        *(_ask(client, batch) for batch in batches), return_exceptions=True
    )
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    answers = [o for o in outcomes if not isinstance(o, BaseException)]
    for batch, (answer, responses) in zip(batches, answers, strict=True):
        result.responses += responses
        model = responses[-1].model
        verdicts = {v.id: v for v in answer.verdicts}
        for f, _ in batch:
            v = verdicts.get(f.id)
            if v is None:
                result.kept.append(f)  # unverified: shown, without a verification badge
                continue
            _apply(result, f, v, model)
            if cache is not None and answer.quality_score >= CACHE_MIN_SCORE:
                cache.put(
                    keys[f.id], CachedVerdict(verdict=v, score=answer.quality_score, model=model)
                )
        scores.append((answer.quality_score, len(batch)))
        if answer.feedback:
            feedback.append(answer.feedback)
    # The input's order, whichever verdicts came from the cache.
    position = {f.id: i for i, f in enumerate(findings)}
    result.kept.sort(key=lambda f: position.get(f.id, len(position)))
    result.dropped.sort(key=lambda f: position.get(f.id, len(position)))
    total = sum(n for _, n in scores)
    result.quality_score = round(sum(s * n for s, n in scores) / total) if total else None
    result.feedback = "\n".join(feedback)
    return result


async def _ask(
    client: LLMClient, batch: list[tuple[Finding, str]]
) -> tuple[VerifierAnswer, list[LLMResponse]]:
    body = "\n".join(text for _, text in batch)
    messages = [
        {"role": "system", "content": load_prompt("verifier")},
        {"role": "user", "content": f"Findings to verify ({len(batch)}):\n\n{body}"},
    ]
    return await ask_structured(client, "verifier", messages, VerifierAnswer)


def _apply(result: Verified, f: Finding, v: FindingVerdict, model: str) -> None:
    updated = apply_verdict(f, v, model)
    if updated is None:
        verification = Verification(verdict=v.verdict, evidence=v.evidence, model=model)
        result.dropped.append(f.model_copy(update={"verification": verification}))
    else:
        result.kept.append(updated)
