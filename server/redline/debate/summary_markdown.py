"""The neutral summary as Markdown, and the plain listing that stands in when it failed.

Everything here is model text (the summarizer's, the debaters'): sanitized like every model
text in a report (report/sanitize.py), file names in code spans, positions in blockquotes so
a model's headings stay inside its entry. Headings start at level 3: the report puts this
under its own "## Neutral summary".
"""

from __future__ import annotations

from collections.abc import Sequence

from redline.debate.schemas import ActionItem, ConsensusPoint, DebateSummaryAnswer, Disagreement
from redline.model import DebatePosition
from redline.report.markup import inline_code, quoted
from redline.report.sanitize import sanitize_inline, sanitize_markdown

# The end of the debate shown when no debater stated a final position.
MAX_LISTED_TRANSCRIPT_CHARS = 6_000


def render_summary(answer: DebateSummaryAnswer) -> str:
    out = ["### Overview", "", sanitize_markdown(answer.overview).strip(), ""]
    out += ["### Consensus", ""]
    out += [_consensus(c) for c in answer.consensus] or ["No point had the support of all."]
    out.append("")
    out += ["### Disagreements", ""]
    if answer.disagreements:
        for d in answer.disagreements:
            _disagreement(d, out)
    else:
        out += ["None: the positions did not contradict each other.", ""]
    out += ["### Action items", ""]
    items = [f"{i}. {_action(a)}" for i, a in enumerate(answer.action_items, 1)]
    out += items or ["None."]
    return "\n".join(out).rstrip() + "\n"


def _support(labels: Sequence[str]) -> str:
    return ", ".join(sanitize_inline(label) for label in labels) or "no debater named"


def _where(file: str | None) -> str:
    return f" ({inline_code(file)})" if file else ""


def _consensus(point: ConsensusPoint) -> str:
    text = sanitize_inline(point.point)
    return f"- {text}{_where(point.file)} — *{_support(point.supported_by)}*"


def _disagreement(d: Disagreement, out: list[str]) -> None:
    out += [f"#### {sanitize_inline(d.topic)}", ""]
    for side in d.sides:
        line = f"- **{sanitize_inline(side.position)}** — *{_support(side.held_by)}*"
        if side.reasons.strip():
            line += f": {sanitize_inline(side.reasons)}"
        out.append(line)
    out.append("")


def _action(item: ActionItem) -> str:
    severity = (item.severity.value + " · ") if item.severity else ""
    head = f"**{sanitize_inline(item.title)}**{_where(item.file)} — {severity}"
    head += f"*{_support(item.supported_by)}*"
    detail = sanitize_inline(item.detail)
    return f"{head}: {detail}" if detail else head


def plain_listing(positions: Sequence[DebatePosition], why: str) -> str:
    """Each anonymous position under its label: what the summary would have summed up."""
    out = [f"*The neutral summary is not available ({sanitize_inline(why)}); the final "
           "positions follow as they were stated.*", ""]  # fmt: skip
    for position in positions:
        out += [f"### {position.label}", "", quoted(sanitize_markdown(position.text)), ""]
    return "\n".join(out).rstrip() + "\n"


def transcript_listing(transcript: str, why: str) -> str:
    """The end of the debate, when there are no final positions to list."""
    tail = transcript.strip()
    cut = len(tail) > MAX_LISTED_TRANSCRIPT_CHARS
    if cut:
        tail = tail[-MAX_LISTED_TRANSCRIPT_CHARS:]
        tail = tail[tail.find("\n") + 1 :] if "\n" in tail else tail
    out = [f"*No neutral summary ({sanitize_inline(why)}). The end of the debate:*", ""]
    if cut:
        out += ["…", ""]
    out.append(quoted(sanitize_markdown(tail)) if tail else "*(nothing was said)*")
    return "\n".join(out).rstrip() + "\n"
