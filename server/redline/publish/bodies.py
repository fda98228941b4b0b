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
from redline.shorten import shorten

Forge = Literal["github", "gitlab"]

# GitHub refuses comment bodies over 65,536 characters; a margin for the marker and notes.
MAX_BODY: Final = 60_000
# A finding's title in the table: read at a glance, and one long title must not push every
# other row out of the comment.
_MAX_TITLE: Final = 300
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

    head = _head(review, kind, limit)
    if placement is not None and placement.capped:
        # In the head: cutting details for length never hides that comments were held back.
        head += f"\n> {capped_note(len(placement.capped), placement.cap)}\n"
    tail: list[str] = []
    coverage_section(review, tail)
    tail[0] = "### Coverage"  # under the comment's own "## Redline …" heading
    tail_text = "\n".join([*_lines_within(tail, limit // 4), summary_marker(kind)])

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


def _head(review: Review, kind: Kind, limit: int) -> str:
    """Headline, summary and the debate's summary: the model's prose cut to a third of the
    comment each, so that the table of findings and the coverage always fit after them."""
    label = shorten(review.scope_label.removeprefix("debate: "), _MAX_TITLE)
    out = [f"## Redline {kind}: {sanitize_inline(label)}", "", summary_line(review), ""]
    if not review.coverage.models and review.model_error is None and review.failure is None:
        if review.coverage.cached_models:
            out += [f"> {cached_review_line(review, inline_code)}", ""]
        else:
            out += ["> Offline review: no model ran. These results come from static analyzers.", ""]
    if review.summary and (
        review.debate is None or review.summary != review.debate.summary_markdown
    ):
        out += ["### Summary", "", _prose_within(review.summary, limit // 3), ""]
    if review.debate is not None:
        debate = review.debate
        cut = _prose_within(debate.summary_markdown, limit // 3, sanitized=False)
        debate_summary(debate.model_copy(update={"summary_markdown": cut}), out)
    return "\n".join(out)


_CUT_NOTE = "*(Cut here for the comment's length: the full report has the rest.)*"


def _prose_within(text: str, budget: int, *, sanitized: bool = True) -> str:
    """Model prose for the comment, at most about `budget` characters: a longer text is cut at
    a line (or word) boundary before it is sanitized — which closes a fence the cut left open —
    and says so. `sanitized=False`: the caller sanitizes (the debate's summary section)."""
    text = text.strip()
    if len(text) > budget:
        cut = text[: max(0, budget - len(_CUT_NOTE) - 16)]
        at = max(cut.rfind("\n"), cut.rfind(" "))
        cut = cut[:at] if at > len(cut) // 2 else cut
        text = sanitize_markdown(cut).rstrip() + "\n\n" + _CUT_NOTE
        return text
    return sanitize_markdown(text).strip() if sanitized else text


def _lines_within(lines: list[str], budget: int) -> list[str]:
    """Redline's own Markdown lines (a list: no fence spans two of them) up to `budget`
    characters, and a last line saying what was left out."""
    out: list[str] = []
    used = 0
    for line in lines:
        line = shorten(line, budget // 4) if len(line) > budget // 4 else line
        if used + len(line) + 1 > budget:
            out.append(f"- … {len(lines) - len(out)} more lines (see the full report)")
            break
        out.append(line)
        used += len(line) + 1
    return out


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
        f"{table_cell(sanitize_inline(shorten(finding.title, _MAX_TITLE)))} | {posted} |"
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
