"""One reviewer per file: the file's units with their context go to the model, which answers
with structured findings and may ask for more context (at most two extra rounds). Findings are
anchored to the code they quote; a file whose review fails is reported, never lost."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from redline.agent.llm import LLMClient, LLMError, LLMResponse
from redline.context.provider import ContextBundle, ContextProvider
from redline.context.request import ContextRequest
from redline.encoding import decode_text
from redline.errors import RedlineError
from redline.model import Finding
from redline.review.anchoring import anchor_finding
from redline.review.planner import UnitPlan
from redline.review.prompts import load_prompt, prompt_version
from redline.review.schemas import ReviewerAnswer
from redline.review.structured import InvalidModelOutput, ask_structured
from redline.store.cache import AnswerCache

MAX_EXTRA_ROUNDS = 2


class CachedReview(BaseModel):
    """A file's reviewer answer in the answer cache, with the model that gave it (the
    findings' source)."""

    answer: ReviewerAnswer
    model: str = ""


@dataclass
class FileReview:
    path: str
    findings: list[Finding] = field(default_factory=list)
    status: str = "reviewed"  # reviewed | cached | not_reviewed
    reason: str | None = None
    rounds: int = 0
    responses: list[LLMResponse] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)
    summary: str = ""
    applied_learnings: list[str] = field(default_factory=list)  # ids the model says it applied
    model: str = ""  # the model whose answer a cached review is ("" when fresh, or unrecorded)

    @property
    def ok(self) -> bool:
        return self.status != "not_reviewed"


@dataclass
class ReviewerInputs:
    """What every file's reviewer shares within one attempt."""

    client: LLMClient
    provider: ContextProvider
    read_new: Callable[[str], bytes | None]
    instructions: str = ""
    retry_context: str = ""
    cache: AnswerCache | None = None
    # The team's learnings for a file, as the prompt block (review/learnings_use.py).
    learnings: Callable[[str], str] | None = None


def shared_prefix(inputs: ReviewerInputs) -> str:
    """What every file's reviewer shares in an attempt (the repository's guidance, the
    verifier's feedback): it comes first, so that with the system prompt it is a prefix that is
    the same for every reviewer call, and a provider's prompt caching applies to it."""
    parts: list[str] = []
    if inputs.instructions:
        parts += [inputs.instructions, ""]
    if inputs.retry_context:
        parts += [
            "# Feedback on the previous attempt of this review",
            "A verifier checked the previous attempt. Take this into account:",
            "",
            inputs.retry_context,
            "",
        ]
    return "\n".join(parts)


def file_part(path: str, bundles: list[ContextBundle], learnings: str = "") -> str:
    """The file's own part of a reviewer prompt: its heading, the team's learnings whose scope
    matches it (a delimited block, "" when none), its context."""
    head = [f"# File under review: `{path}`", ""]
    if learnings:
        head.append(learnings)
    return "\n".join([*head, *(b.render(legend=False) for b in bundles)])


def _learnings(inputs: ReviewerInputs, path: str) -> str:
    return inputs.learnings(path) if inputs.learnings is not None else ""


def _cache_key(inputs: ReviewerInputs, path: str, plans: list[UnitPlan], prompt: str) -> str:
    assert inputs.cache is not None
    models = ",".join(m for m, _ in inputs.client.models_for("reviewer"))
    return inputs.cache.key(models, prompt_version("reviewer"), path, prompt)


def _decode(data: bytes | None) -> str | None:
    return None if data is None else decode_text(data)[0]


def changed_lines(plans: list[UnitPlan]) -> set[int]:
    """The new-side lines the change added or modified in the file of `plans`."""
    return {n for p in plans for n in p.unit.added_lines}


def anchor_all(
    answer: ReviewerAnswer,
    path: str,
    inputs: ReviewerInputs,
    model: str,
    changed: set[int] | None = None,
) -> list[Finding]:
    """The answer's findings placed in their files; `changed` (this file's changed lines)
    breaks ties between equal quotes in favour of the change (`anchoring.locate`)."""
    findings = []
    texts: dict[str, str | None] = {}
    for mf in answer.findings:
        target = mf.file.strip().lstrip("./") if mf.file else path
        if target != path:
            # Only files of this change may be named; anything else is placed on this file.
            try:
                texts.setdefault(target, _decode(inputs.read_new(target)))
            # What a failed read raises (the model's path may not even encode: UnicodeError);
            # a bug must not be mistaken for "no such file".
            except (RedlineError, OSError, UnicodeError):
                texts[target] = None
            if texts[target] is None:
                target = path
        if target not in texts:
            texts[target] = _decode(inputs.read_new(target))
        mf = mf.model_copy(update={"file": target})
        here = changed if target == path else None
        findings.append(anchor_finding(mf, texts[target], source=f"model:{model}", changed=here))
    return findings


@dataclass
class PreparedFile:
    """A file's reviewer input: its context, its part of the prompt, its cache key, and the
    cached review when the answer cache has one."""

    path: str
    plans: list[UnitPlan]
    bundles: list[ContextBundle]
    part: str
    key: str | None
    cached: FileReview | None = None

    @property
    def tokens(self) -> int:
        return sum(b.tokens for b in self.bundles)


def prepare_file(path: str, plans: list[UnitPlan], inputs: ReviewerInputs) -> PreparedFile:
    bundles = [inputs.provider.bundle(p.unit, p.level, p.requests) for p in plans]
    part = file_part(path, bundles, _learnings(inputs, path))
    key = _cache_key(inputs, path, plans, shared_prefix(inputs) + part) if inputs.cache else None
    prepared = PreparedFile(path, plans, bundles, part, key)
    if key and inputs.cache is not None:
        cached = inputs.cache.lookup(key, CachedReview)
        if cached is not None:
            result = FileReview(
                path=path,
                status="cached",
                summary=cached.answer.summary,
                model=cached.model,
                applied_learnings=list(cached.answer.applied_learnings),
            )
            result.omitted = [o for b in bundles for o in b.omitted]
            result.findings = anchor_all(
                cached.answer, path, inputs, cached.model, changed_lines(plans)
            )
            prepared.cached = result
    return prepared


def remember(
    prepared: PreparedFile, inputs: ReviewerInputs, answer: ReviewerAnswer, model: str
) -> None:
    if prepared.key and inputs.cache is not None:
        inputs.cache.put(prepared.key, CachedReview(answer=answer, model=model))


async def review_file(path: str, plans: list[UnitPlan], inputs: ReviewerInputs) -> FileReview:
    prepared = prepare_file(path, plans, inputs)
    if prepared.cached is not None:
        return prepared.cached
    return await review_prepared(prepared, inputs)


async def review_prepared(
    prepared: PreparedFile, inputs: ReviewerInputs, asked: list[ContextRequest] | None = None
) -> FileReview:
    """The file's reviewer call, and its need_context rounds. `asked`: context the model
    already asked for (in a batched call), sent with the first call here."""
    path, plans, bundles = prepared.path, prepared.plans, prepared.bundles
    result = FileReview(path=path)
    requests: list[ContextRequest] = list(asked or [])
    if requests:
        bundles = [inputs.provider.bundle(p.unit, p.level, [*p.requests, *requests]) for p in plans]
    for b in bundles:
        result.omitted += b.omitted
    prompt = shared_prefix(inputs) + file_part(path, bundles, _learnings(inputs, path))
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": load_prompt("reviewer")},
        {"role": "user", "content": prompt},
    ]
    try:
        answer, responses = await ask_structured(
            inputs.client, "reviewer", messages, ReviewerAnswer
        )
        result.responses += responses
        while needs_round(answer, requests) and result.rounds < MAX_EXTRA_ROUNDS:
            result.rounds += 1
            requests += new_requests(answer, requests)
            extra = [
                inputs.provider.bundle(p.unit, p.level, [*p.requests, *requests]) for p in plans
            ]
            more = _additional_context(bundles, extra)
            bundles = extra
            last = responses[-1]
            messages += [
                {"role": "assistant", "content": last.content or ""},
                {
                    "role": "user",
                    "content": (
                        "Here is the additional context you asked for. "
                        + ("" if result.rounds < MAX_EXTRA_ROUNDS else "This was the last round: ")
                        + "answer with your findings now (need_context may stay empty).\n\n"
                        + (more or "(nothing more could be found for those requests)")
                    ),
                },
            ]
            answer, responses = await ask_structured(
                inputs.client, "reviewer", messages, ReviewerAnswer
            )
            result.responses += responses
    except InvalidModelOutput as exc:
        result.status, result.reason = "not_reviewed", f"invalid model output ({exc.message})"
        return result
    except LLMError as exc:
        result.status, result.reason = "not_reviewed", exc.message
        return result
    model = result.responses[-1].model if result.responses else ""
    result.findings = anchor_all(answer, path, inputs, model, changed_lines(plans))
    result.summary = answer.summary
    result.applied_learnings = list(answer.applied_learnings)
    remember(prepared, inputs, answer, model)
    return result


# Kinds whose empty target still names something: this unit's function, this file's old side.
_THIS_UNIT = ("function", "previous_version")


def new_requests(answer: ReviewerAnswer, asked: list[ContextRequest]) -> list[ContextRequest]:
    """The context the answer asks for that names what is missing and was not asked before."""
    seen = {(q.kind, q.target.strip()) for q in asked}
    out = []
    for r in answer.need_context:
        target = r.target.strip()
        if (target or r.kind in _THIS_UNIT) and (r.kind, target) not in seen:
            seen.add((r.kind, target))
            out.append(r)
    return out


def needs_round(answer: ReviewerAnswer, asked: list[ContextRequest]) -> bool:
    """Another reviewer round is worth a call when the answer names new context it needs, or
    asked for context without giving its findings (it must still give them). An answer with
    its findings and only unnamed or repeated requests is final."""
    if not answer.need_context:
        return False
    return bool(new_requests(answer, asked)) or "findings" not in answer.model_fields_set


def _additional_context(before: list[ContextBundle], after: list[ContextBundle]) -> str:
    """The sections of `after` that were not already sent in `before`."""
    sent = {(s.kind, s.title) for b in before for s in b.sections}
    out = []
    for b in after:
        for s in b.sections:
            if (s.kind, s.title) not in sent:
                sent.add((s.kind, s.title))
                out.append(f"## {s.title}\n\n{s.text}")
    return "\n\n".join(out)
