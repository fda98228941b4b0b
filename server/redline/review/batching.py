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
import itertools
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

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

T = TypeVar("T")


def group_sizes(tokens: Sequence[int]) -> list[list[int]]:
    """The calls to make for files of these context sizes, as lists of their indexes: one file
    alone (a large one, or too few files to batch) or several small ones, in the order given.
    Pure, so `--estimate` plans the calls the review will make."""
    return list(stream_groups(range(len(tokens)), tokens.__getitem__))


def stream_groups(items: Iterable[T], size: Callable[[T], int]) -> Iterator[list[T]]:
    """group_sizes' calls, each yielded as soon as it is decided: at most BATCH_MIN_FILES
    items are read ahead (to know whether to batch at all), then a batch closes when the next
    small item would not fit. A large item is its own call, yielded at once (before the batch
    that was open when it came, as group_sizes lists it)."""
    it = iter(items)
    head = list(itertools.islice(it, BATCH_MIN_FILES))
    if len(head) < BATCH_MIN_FILES:
        for item in head:
            yield [item]
        return
    current: list[T] = []
    total = 0
    for item in itertools.chain(head, it):
        tokens = size(item)
        if tokens > SMALL_FILE_TOKENS:
            yield [item]
            continue
        if current and (len(current) >= BATCH_FILES or total + tokens > BATCH_TOKENS):
            yield current
            current, total = [], 0
        current.append(item)
        total += tokens
    if current:
        yield current


def group_files(prepared: list[PreparedFile]) -> list[list[PreparedFile]]:
    """Calls to make: lists of one file or of several small ones, in the order given."""
    return list(stream_groups(prepared, lambda p: p.tokens))


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
        single = ReviewerAnswer(
            findings=entry.findings,
            summary=entry.summary,
            applied_learnings=entry.applied_learnings,
        )
        review = FileReview(
            path=p.path,
            responses=list(responses),
            summary=entry.summary,
            applied_learnings=list(entry.applied_learnings),
        )
        review.omitted = [o for b in p.bundles for o in b.omitted]
        review.findings = anchor_all(single, p.path, inputs, model, changed_lines(p.plans))
        remember(p, inputs, single, model)
        out[p.path] = review
    reviewed = await asyncio.gather(*(review_alone(p, inputs, asked) for p, asked in alone))
    out.update((r.path, r) for r in reviewed)
    return [out[p.path] for p in group]
