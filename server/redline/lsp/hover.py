"""Hover text for a finding: the whole explanation and the suggested code, as safe Markdown.

Everything a model wrote (title, comment, evidence) goes through `report.sanitize`, and the
assembled text is sanitized once more, so no image, raw HTML or `command:` link reaches the
editor even if a piece slipped through. Code is shown in a fence longer than any backtick run
in it, so code cannot close the fence and turn into Markdown.
"""

from __future__ import annotations

import re

from redline.diff.functions import language_for
from redline.model import Finding
from redline.report.sanitize import sanitize_inline, sanitize_markdown

_BACKTICKS = re.compile(r"`+")
_ID = re.compile(r"RL-[0-9a-f]{12}")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_VERDICTS = {
    "CORRECT": "verified correct",
    "PARTIALLY_CORRECT": "verified, partially correct",
    "INCORRECT": "verifier disagreed",
}


def fence(code: str, language: str | None = None) -> str:
    """`code` in a backtick fence longer than any backtick run inside it."""
    longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
    ticks = "`" * max(3, longest + 1)
    body = code if code.endswith("\n") else code + "\n"
    return f"{ticks}{_info(language)}\n{body}{ticks}"


def _info(language: str | None) -> str:
    # An info string is shown to nobody but picks the highlighter; keep it a plain word.
    return language if language and re.fullmatch(r"[A-Za-z0-9_+-]+", language) else ""


def _close_open_fence(markdown: str) -> str:
    """Close a fence the model left open, so it cannot swallow the sections after it."""
    open_fence: str | None = None
    for line in markdown.splitlines():
        match = _FENCE_LINE.match(line)
        if not match:
            continue
        marker = match.group(1)
        if open_fence is None:
            open_fence = marker
        elif (
            marker[0] == open_fence[0]
            and len(marker) >= len(open_fence)
            and not match.group(2).strip()
        ):
            open_fence = None
    if open_fence is None:
        return markdown
    return markdown.rstrip("\n") + "\n" + open_fence + "\n"


def _sources(sources: list[str]) -> str:
    # "ruff:F401" → "ruff F401", "model:gpt-4o" → "model gpt-4o": who said it, in words.
    return ", ".join(sanitize_inline(s.replace(":", " ", 1)) for s in sources)


def hover_markdown(finding: Finding, stale: bool = False) -> str:
    """The hover for `finding` (`stale`: its code was edited since the review)."""
    parts: list[str] = [f"**Redline: {sanitize_inline(finding.title)}**"]
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
    comment = _close_open_fence(sanitize_markdown(finding.comment.strip()))
    if comment:
        parts.append(comment)
    if finding.improved_code is not None:
        if finding.improved_code.strip():
            parts.append("Suggested code:")
            parts.append(fence(finding.improved_code, language_for(finding.file)))
        else:
            parts.append("Suggested fix: delete these lines.")
    if _ID.fullmatch(finding.id):
        parts.append(f"`{finding.id}` · silence it: `redline: ignore[{finding.id}] <reason>`")
    return sanitize_markdown("\n\n".join(parts))
