"""The review summary: severity distribution (computed), plus the model's assessment,
priorities and focus. Without a model, or when the call fails, the summary is the
distribution alone — never an invented assessment."""

from __future__ import annotations

from redline.agent.llm import LLMClient, LLMResponse
from redline.model import Finding, Severity
from redline.review.prompts import load_prompt
from redline.review.schemas import SummaryAnswer
from redline.review.structured import ask_structured


def distribution(findings: list[Finding]) -> str:
    counts = {s: 0 for s in Severity}
    for f in findings:
        counts[f.severity] += 1
    parts = [f"{n} {s.value}" for s, n in counts.items() if n]
    return ", ".join(parts) if parts else "no findings"


def render_summary(findings: list[Finding], answer: SummaryAnswer | None) -> str:
    lines = [f"Severity distribution: {distribution(findings)}."]
    if answer is None:
        return "\n".join(lines)
    lines += ["", answer.assessment.strip()]
    if answer.priorities:
        lines += ["", "Priorities:"] + [f"{i}. {p}" for i, p in enumerate(answer.priorities, 1)]
    if answer.focus:
        lines += ["", "Review focus:"] + [f"- {f}" for f in answer.focus]
    return "\n".join(lines)


async def summarize(
    client: LLMClient, scope_label: str, findings: list[Finding]
) -> tuple[SummaryAnswer, list[LLMResponse]]:
    listing = "\n".join(
        f"- [{f.severity.value}] {f.file}:{f.line or '?'} — {f.title}" for f in findings
    )
    messages = [
        {"role": "system", "content": load_prompt("summarizer")},
        {
            "role": "user",
            "content": (
                f"Change: {scope_label}\nSeverity distribution: {distribution(findings)}\n\n"
                f"Findings:\n{listing or '(none)'}"
            ),
        },
    ]
    return await ask_structured(client, "summarizer", messages, SummaryAnswer)
