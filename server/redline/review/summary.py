"""The review summary: the model's assessment, priorities and focus. Without a model, or when
the call fails, there is none — never an invented assessment.

The severity distribution is in the summarizer's prompt, not in the summary: the counts are
said once, by the report's headline, from the findings it lists. A distribution computed here
counted the findings before the severity floor, the dismissals and the editor's edits took
some away, and disagreed with the headline (issue 24).

With a cache, the model's part is reused when the findings listed (severity, place, title) are
exactly those of an earlier summary, in whatever order they come: the assessment is about the
findings, and the change's label — which names commits, so differs after every push — is left
out of the key.
"""

from __future__ import annotations

from pydantic import BaseModel

from redline.agent.llm import LLMClient, LLMResponse
from redline.model import Finding, Severity
from redline.review.prompts import load_prompt, prompt_version
from redline.review.schemas import SummaryAnswer
from redline.review.structured import ask_structured
from redline.store.cache import AnswerCache


class CachedSummary(BaseModel):
    """The model's part of a summary in the answer cache."""

    answer: SummaryAnswer


def distribution(findings: list[Finding]) -> str:
    counts = {s: 0 for s in Severity}
    for f in findings:
        counts[f.severity] += 1
    parts = [f"{n} {s.value}" for s, n in counts.items() if n]
    return ", ".join(parts) if parts else "no findings"


def render_summary(answer: SummaryAnswer | None) -> str | None:
    """The model's summary as Markdown; None without one."""
    if answer is None:
        return None
    lines = [answer.assessment.strip()]
    if answer.priorities:
        lines += ["", "Priorities:"] + [f"{i}. {p}" for i, p in enumerate(answer.priorities, 1)]
    if answer.focus:
        lines += ["", "Review focus:"] + [f"- {f}" for f in answer.focus]
    return "\n".join(lines)


def _listing(findings: list[Finding]) -> list[str]:
    """One line per finding, in a content order (severity, place, title): the same findings
    list the same way whatever order the stages produced them in (cached verdicts come back
    before fresh ones), so the prompt — and the cache key — depend on content only."""
    rank = {s: i for i, s in enumerate(Severity)}
    ordered = sorted(findings, key=lambda f: (rank[f.severity], f.file, f.line or 0, f.title))
    return [f"- [{f.severity.value}] {f.file}:{f.line or '?'} — {f.title}" for f in ordered]


async def summarize(
    client: LLMClient,
    scope_label: str,
    findings: list[Finding],
    *,
    cache: AnswerCache | None = None,
) -> tuple[SummaryAnswer, list[LLMResponse]]:
    """The model's summary and the responses it took (none when it came from the cache)."""
    listing = "\n".join(_listing(findings))
    body = f"Severity distribution: {distribution(findings)}\n\nFindings:\n{listing or '(none)'}"
    key = None
    if cache is not None:
        models = ",".join(m for m, _ in client.models_for("summarizer"))
        key = cache.key("summary", models, prompt_version("summarizer"), body)
        cached = cache.lookup(key, CachedSummary)
        if cached is not None:
            return cached.answer, []
    messages = [
        {"role": "system", "content": load_prompt("summarizer")},
        {"role": "user", "content": f"Change: {scope_label}\n{body}"},
    ]
    answer, responses = await ask_structured(client, "summarizer", messages, SummaryAnswer)
    if key is not None and cache is not None:
        cache.put(key, CachedSummary(answer=answer))
    return answer, responses
