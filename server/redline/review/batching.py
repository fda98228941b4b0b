"""Small files share a reviewer call: one prompt with the instructions once and each file under
its own heading, one answer with an entry per file (`BatchReviewerAnswer`, strict like every
answer). Each file is then handled as if reviewed alone: its findings anchored in it, its answer
cached under its own key (so a later re-review of one file costs one single-file call), and a
file whose entry asks for context, or that the answer left out, is reviewed on its own — never
dropped. An invalid batch answer (after the usual re-ask) sends every file to its own call.

Batching only applies to changes with many files to review (BATCH_MIN_FILES): with a few, the
instructions repeated per file cost little, and one call per file is the fastest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from redline.agent.llm import LLMError
from redline.review.prompts import load_prompt
from redline.review.reviewer import (
    FileReview,
    PreparedFile,
    ReviewerInputs,
    anchor_all,
    changed_lines,
    needs_round,
    new_requests,
    remember,
    review_prepared,
    shared_prefix,
)
from redline.review.schemas import BatchReviewerAnswer, ReviewerAnswer
from redline.review.structured import InvalidModelOutput, ask_structured

BATCH_MIN_FILES = 8  # files to review (not cached) before any is batched
BATCH_FILES = 5  # files per batched call, at most
SMALL_FILE_TOKENS = 1_500  # a file whose context is larger is reviewed alone
BATCH_TOKENS = 5_000  # context tokens per batched call, at most


def group_sizes(tokens: Sequence[int]) -> list[list[int]]:
    """The calls to make for files of these context sizes, as lists of their indexes: one file
    alone (a large one, or too few files to batch) or several small ones, in the order given.
    Pure, so `--estimate` plans the calls the review will make."""
    if len(tokens) < BATCH_MIN_FILES:
        return [[i] for i in range(len(tokens))]
    groups: list[list[int]] = []
    current: list[int] = []
    for i, size in enumerate(tokens):
        if size > SMALL_FILE_TOKENS:
            groups.append([i])
            continue
        if current and (
            len(current) >= BATCH_FILES or sum(tokens[c] for c in current) + size > BATCH_TOKENS
        ):
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups


def group_files(prepared: list[PreparedFile]) -> list[list[PreparedFile]]:
    """Calls to make: lists of one file or of several small ones, in the order given."""
    return [[prepared[i] for i in group] for group in group_sizes([p.tokens for p in prepared])]


async def review_group(
    group: list[PreparedFile],
    inputs: ReviewerInputs,
    review_alone: Callable[..., Awaitable[FileReview]] = review_prepared,
) -> list[FileReview]:
    if len(group) == 1:
        return [await review_alone(group[0], inputs)]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": load_prompt("reviewer")},
        {
            "role": "user",
            "content": shared_prefix(inputs)
            + load_prompt("reviewer_batch")
            + "\n"
            + "\n\n".join(p.part for p in group),
        },
    ]
    try:
        answer, responses = await ask_structured(
            inputs.client, "reviewer", messages, BatchReviewerAnswer
        )
    except InvalidModelOutput:
        return list(await asyncio.gather(*(review_alone(p, inputs) for p in group)))
    except LLMError as exc:
        return [FileReview(path=p.path, status="not_reviewed", reason=exc.message) for p in group]
    model = responses[-1].model
    entries = {e.file.strip().removeprefix("./"): e for e in answer.files}
    out: dict[str, FileReview] = {}
    alone: list[tuple[PreparedFile, list[Any]]] = []
    for p in group:
        entry = entries.get(p.path)
        if entry is None or needs_round(entry, []):
            alone.append((p, new_requests(entry, []) if entry is not None else []))
            continue
        single = ReviewerAnswer(findings=entry.findings, summary=entry.summary)
        review = FileReview(path=p.path, responses=list(responses), summary=entry.summary)
        review.omitted = [o for b in p.bundles for o in b.omitted]
        review.findings = anchor_all(single, p.path, inputs, model, changed_lines(p.plans))
        remember(p, inputs, single, model)
        out[p.path] = review
    reviewed = await asyncio.gather(*(review_alone(p, inputs, asked) for p, asked in alone))
    out.update((r.path, r) for r in reviewed)
    return [out[p.path] for p in group]
