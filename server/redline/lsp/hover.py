"""Hover text for a finding: the whole explanation and the suggested code, as safe Markdown.

Everything a model wrote (title, comment, evidence) goes through `report.sanitize`, and the
assembled text is sanitized once more, so no image, raw HTML or `command:` link reaches the
editor even if a piece slipped through. Code is shown in the report's fence (report/markup.py),
longer than any backtick run in it, so code cannot close the fence and turn into Markdown.
"""

from __future__ import annotations

import re

from redline.diff.functions import language_for
from redline.lsp.publish import first_paragraph
from redline.model import Finding
from redline.report.markup import fenced
from redline.report.sanitize import sanitize_inline, sanitize_markdown

_ID = re.compile(r"RL-[0-9a-f]{12}")
_VERDICTS = {
    "CORRECT": "verified correct",
    "PARTIALLY_CORRECT": "verified, partially correct",
    "INCORRECT": "verifier disagreed",
}


def _sources(sources: list[str]) -> str:
    # "ruff:F401" → "ruff F401", "model:gpt-4o" → "model gpt-4o": who said it, in words.
    return ", ".join(sanitize_inline(s.replace(":", " ", 1)) for s in sources)


def hover_markdown(
    finding: Finding, stale: bool = False, *, beside_diagnostic: bool = False
) -> str:
    """The hover for `finding` (`stale`: its code was edited since the review).

    `beside_diagnostic`: the client shows the diagnostic's message in the same hover, just above
    (VS Code does): the title and the comment's first paragraph are left out, not said twice."""
    parts: list[str] = []
    if not beside_diagnostic:
        parts.append(f"**Redline: {sanitize_inline(finding.title)}**")
    meta = [
        finding.severity.value,
        finding.category.value,
        f"confidence {round(finding.confidence * 100)}%",
    ]
    parts.append(" · ".join(meta))
    if stale:
        parts.append("_May be stale: the code changed since the review; review again to confirm._")
    if finding.sources:
        parts.append(f"Found by: {_sources(finding.sources)}")
    if finding.verification is not None:
        verdict = finding.verification.verdict.strip().upper()
        label = _VERDICTS.get(verdict, sanitize_inline(verdict.lower()))
        line = f"Verification: {label}"
        evidence = sanitize_inline(finding.verification.evidence)
        if evidence:
            line += f" — {evidence}"
        parts.append(line)
    # Sanitized, a fence the model left open is closed where its comment ends.
    comment_text = finding.comment.strip()
    if beside_diagnostic:
        first, _, rest = comment_text.partition("\n\n")
        # Only when the message holds the whole paragraph (it cuts a long one).
        if first_paragraph(comment_text) == " ".join(first.split()):
            comment_text = rest.strip()
    comment = sanitize_markdown(comment_text)
    if comment:
        parts.append(comment)
    if finding.improved_code is not None:
        if finding.improved_code.strip():
            parts.append("Suggested code:")
            parts.append(fenced(finding.improved_code, language_for(finding.file) or ""))
        else:
            parts.append("Suggested fix: delete these lines.")
    if _ID.fullmatch(finding.id):
        parts.append(f"`{finding.id}` · silence it: `redline: ignore[{finding.id}] <reason>`")
    return sanitize_markdown("\n\n".join(parts))
