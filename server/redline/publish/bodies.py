"""The text Redline posts: the summary comment and one inline comment per finding.

Everything from the review is untrusted (model and analyzer text, file names): it goes through
the report's sanitizers and fences, as in the Markdown report. Each body ends with its hidden
marker on a line of its own (markers.py). The summary stays under GitHub's 65,536-character
limit for a comment by leaving out details first and table rows second, and says so.
"""

from __future__ import annotations

from typing import Final, Literal

from redline.model import Finding, Review, Severity
from redline.publish.markers import Kind, finding_marker, summary_marker
from redline.publish.placement import InlineComment, Placement
from redline.report.debate_markdown import debate_summary
from redline.report.markdown import (
    cached_review_line,
    coverage_section,
    finding_section,
    language_for,
    summary_line,
)
from redline.report.markup import fenced, inline_code, suggestion_fence, table_cell
from redline.report.sanitize import sanitize_inline, sanitize_markdown

Forge = Literal["github", "gitlab"]

# GitHub refuses comment bodies over 65,536 characters; a margin for the marker and notes.
MAX_BODY: Final = 60_000
_ORDER: Final = sorted(Severity, key=lambda s: -s.rank)
_ICON: Final = {"critical": "🛑", "high": "🔴", "medium": "🟠", "low": "🟡", "info": "🔵"}


def summary_body(
    review: Review,
    kind: Kind,
    placement: Placement | None = None,
    *,
    limit: int = MAX_BODY,
) -> str:
    """The summary comment: headline, summary, a table of every finding, the details of those
    not posted inline (all of them without --inline), coverage, models and cost."""
    findings = sorted(review.findings, key=lambda f: (-f.severity.rank, f.file, f.line or 0))
    inline_ids = {c.finding.id for c in placement.inline} if placement else set()
    earlier_ids = {f.id for f in placement.already} if placement else set()
    detailed = [f for f in findings if f.id not in inline_ids and f.id not in earlier_ids]

    head = _head(review, kind)
    if placement is not None and placement.capped:
        # In the head: cutting details for length never hides that comments were held back.
        head += f"\n> {capped_note(len(placement.capped), placement.cap)}\n"
    tail: list[str] = []
    coverage_section(review, tail)
    tail[0] = "### Coverage"  # under the comment's own "## Redline …" heading
    tail += [summary_marker(kind)]
    tail_text = "\n".join(tail)

    rows = [_row(f, inline_ids, earlier_ids) for f in findings]
    details = [_details(f) for f in detailed]
    # Cut details first (the table still names every finding), then rows.
    while details or rows:
        text = _assemble(head, rows, len(findings), details, len(detailed), placement, tail_text)
        if len(text) <= limit:
            return text
        if details:
            details.pop()
        else:
            rows.pop()
    return _assemble(head, rows, len(findings), details, len(detailed), placement, tail_text)


def _head(review: Review, kind: Kind) -> str:
    label = review.scope_label.removeprefix("debate: ")
    out = [f"## Redline {kind}: {sanitize_inline(label)}", "", summary_line(review), ""]
    if not review.coverage.models and review.model_error is None and review.failure is None:
        if review.coverage.cached_models:
            out += [f"> {cached_review_line(review, inline_code)}", ""]
        else:
            out += ["> Offline review: no model ran. These results come from static analyzers.", ""]
    if review.summary and (
        review.debate is None or review.summary != review.debate.summary_markdown
    ):
        out += ["### Summary", "", sanitize_markdown(review.summary).strip(), ""]
    if review.debate is not None:
        debate_summary(review.debate, out)
    return "\n".join(out)


def capped_note(count: int, cap: int) -> str:
    findings = f"{count} finding{'s' if count != 1 else ''}"
    return f"{findings} not posted inline: write cap of {cap} reached (`publish.max_writes`)"


def _row(finding: Finding, inline_ids: set[str], earlier_ids: set[str]) -> str:
    where = inline_code(f"{finding.file}:{finding.line}" if finding.line else finding.file)
    if finding.id in inline_ids:
        posted = "inline"
    elif finding.id in earlier_ids:
        posted = "inline (earlier run)"
    else:
        posted = "below"
    icon = _ICON.get(finding.severity.value.lower(), "")
    return (
        f"| {icon} {finding.severity.value} | {table_cell(where)} | "
        f"{table_cell(sanitize_inline(finding.title))} | {posted} |"
    )


def _details(finding: Finding) -> str:
    out: list[str] = []
    finding_section(finding, out)
    return "\n".join(out)


def _assemble(
    head: str,
    rows: list[str],
    total_rows: int,
    details: list[str],
    total_details: int,
    placement: Placement | None,
    tail: str,
) -> str:
    out = [head]
    if total_rows:
        out += ["### Findings", "", "| Severity | Where | Finding | Posted |", "|---|---|---|---|"]
        out += rows
        if len(rows) < total_rows:
            out.append(f"\n… and {total_rows - len(rows)} more findings (see the full report).")
        out.append("")
    if total_details:
        title = "Details"
        if placement is not None:
            title = "Not posted inline" if placement.capped else "Not on a line of the diff"
        out += [f"### {title}", ""]
        if placement is not None and placement.outside:
            out += [
                "These findings are on lines the pull request's diff does not show, so they "
                "cannot be inline comments.",
                "",
            ]
        if placement is not None and placement.capped:
            out += [capped_note(len(placement.capped), placement.cap) + ".", ""]
        out += details
        if len(details) < total_details:
            out += [f"… and {total_details - len(details)} more (see the full report).", ""]
    out.append(tail)
    return "\n".join(out).rstrip("\n") + "\n"


def inline_body(comment: InlineComment, forge: Forge) -> str:
    """One finding as a review comment; with a suggestion block when it replaces exactly the
    commented lines (GitHub: the span; GitLab: `suggestion:-N+0` from the line it sits on)."""
    finding = comment.finding
    icon = _ICON.get(finding.severity.value.lower(), "")
    out = [f"{icon} **{finding.severity.value}** · {sanitize_inline(finding.title)}", ""]
    text = sanitize_markdown(finding.comment).strip()
    if text:
        out += [text, ""]
    if comment.suggestion and finding.improved_code is not None:
        info = "suggestion"
        if forge == "gitlab":
            info = f"suggestion:-{comment.last - comment.first}+0"
        out += [suggestion_fence(finding.improved_code.removesuffix("\n"), info), ""]
    elif finding.improved_code is not None:
        out += [
            "Suggested code:",
            "",
            fenced(finding.improved_code, language_for(finding.file)),
            "",
        ]
    sources = sanitize_inline(", ".join(finding.sources)) or "unknown"
    out += [
        f"*{finding.category.value} · confidence {finding.confidence:.2f} · from {sources}*",
        "",
        finding_marker(finding.id),
    ]
    return "\n".join(out) + "\n"
