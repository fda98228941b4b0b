"""The Markdown report: what a person reads in a terminal, a PR comment or the editor.

Findings are grouped by severity (most serious first), each headed `path:line — title` so a
terminal or editor can jump to it; every finding says where it came from and how sure it is; the
Coverage section says plainly what was and was not reviewed. Titles and comments are untrusted
text and pass through `sanitize_markdown`; code goes into fences longer than any backtick run
inside it, so it cannot break out.

Linear in the number of findings: reports with thousands of findings are benchmarked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from redline.model import AnalyzerRun, AnchorState, Finding, FixState, Review, Severity
from redline.money import UNPRICED
from redline.plural import plural
from redline.report.baseline import Comparison
from redline.report.debate_markdown import debate_sections, debate_summary
from redline.report.markup import dollars
from redline.report.markup import fenced as fenced
from redline.report.markup import inline_code as inline_code
from redline.report.sanitize import sanitize_inline, sanitize_markdown

# A long file list helps nobody; the JSON report keeps them all.
_MAX_LISTED_FILES = 100

_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "jsx", ".ts": "typescript", ".tsx": "tsx", ".go": "go",
    ".rs": "rust", ".java": "java", ".kt": "kotlin", ".swift": "swift", ".rb": "ruby",
    ".php": "php", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp",
    ".cs": "csharp", ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".sql": "sql",
    ".html": "html", ".css": "css", ".scss": "scss", ".json": "json", ".yml": "yaml",
    ".yaml": "yaml", ".toml": "toml", ".md": "markdown", ".xml": "xml", ".lua": "lua",
    ".scala": "scala", ".dart": "dart", ".r": "r", ".pl": "perl", ".ex": "elixir",
    ".exs": "elixir", ".tf": "hcl", ".vue": "vue", ".dockerfile": "dockerfile",
}  # fmt: skip
_FILENAMES = {"dockerfile": "dockerfile", "makefile": "makefile"}


def render_markdown(review: Review, baseline: Comparison | None = None) -> str:
    debate = review.debate
    what = "debate" if debate is not None else "review"
    label = (
        review.scope_label.removeprefix("debate: ") if debate is not None else review.scope_label
    )
    out: list[str] = [f"# Redline {what}: {sanitize_inline(label)}", ""]
    headline = summary_line(review)
    out.append(headline)
    out.append("")
    if baseline is not None:
        out += [_baseline_line(baseline), ""]
    # Not for nothing to review (nothing ran at all) nor for a model that could not be used
    # (the headline says so: a model was configured, this is no offline review).
    offline = (
        not review.coverage.models and review.model_error is None and headline != NOTHING_TO_REVIEW
    )
    if offline and review.coverage.cached_models:
        out += [f"> {cached_review_line(review, inline_code)}", ""]
    elif offline:
        out += [
            "> Offline review: no model ran. These results come from static analyzers only.",
            "",
        ]
    # A debate's summary is the neutral summary; a review summary equal to it is not repeated.
    if review.summary and (debate is None or review.summary != debate.summary_markdown):
        out += ["## Summary", "", sanitize_markdown(review.summary).strip(), ""]
    if debate is not None:
        debate_summary(debate, out)
    if review.findings:
        _findings(review.findings, out, baseline)
    elif review.failure is not None:
        out += ["No findings: the review did not complete.", ""]
    elif "No findings." not in headline:  # said once: the headline's counts often say it
        out += ["No findings.", ""]
    if debate is not None:
        debate_sections(debate, out)
    coverage_section(review, out)
    return "\n".join(out).rstrip("\n") + "\n"


def language_for(path: str) -> str:
    """Fence info string for a file, from its extension; empty when unknown."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in _FILENAMES:
        return _FILENAMES[name]
    dot = name.rfind(".")
    return _LANGUAGES.get(name[dot:], "") if dot > 0 else ""


def location(finding: Finding) -> str:
    if finding.line is None:
        return f"{inline_code(finding.file)} (location not found)"
    place = inline_code(f"{finding.file}:{finding.line}")
    if finding.anchor is AnchorState.APPROXIMATE:
        return f"{place} (approximate location)"
    return place


# Why improved code is shown as text rather than as a fix (see review/fix_check.py).
_NOT_APPLICABLE = {
    FixState.DOES_NOT_PARSE: "Suggested code (does not parse as is):",
    FixState.NOT_IN_FILE: "Suggested code (not applicable: the quoted code is not in the file):",
}


def not_applicable_label(fix: FixState) -> str:
    """How improved code that is not an applicable fix is introduced."""
    return _NOT_APPLICABLE.get(fix, _NOT_APPLICABLE[FixState.NOT_IN_FILE])


def cached_review_line(review: Review, code: Callable[[str], str]) -> str:
    """What stands under the headline of a review whose model answers all came from the answer
    cache: no model was called, but these are a model's findings — which model's, and from
    where (`code` quotes a model name: inline code in Markdown, as is on a terminal)."""
    names = ", ".join(code(m) for m in review.coverage.cached_models)
    return (
        f"Cached review: no model was called. The model's part is {names}'s earlier answers, "
        "reused from the answer cache (the code they are about is unchanged)."
    )


def summary_line(review: Review) -> str:
    if review.model_error is not None:
        # Before anything else: a clean-looking report from a model that never answered is
        # the mistake this line prevents (the CLI exits 3 with the same line).
        unusable = f"**The model could not be used:** {sanitize_inline(review.model_error)}."
        if review.failure is not None or review.debate is not None:
            return unusable
        only = "The findings below are the static analyzers' only."
        return f"{unusable} {only}\n\n{_counts_line(review)}"
    if review.failure is not None:
        # "No findings" would read as a clean result; nothing was reviewed.
        return f"**Review failed:** {sanitize_inline(review.failure)}."
    if review.stats.files == 0 and not review.findings and not review.coverage.reviewed_files:
        return NOTHING_TO_REVIEW
    return _counts_line(review)


def _counts_line(review: Review) -> str:
    stats = review.stats
    files = f"{stats.files} file{'s' if stats.files != 1 else ''} changed"
    lines = f"+{stats.added} −{stats.removed} lines"
    counts = review.counts_by_severity()
    if review.findings:
        by_severity = ", ".join(f"{counts[s]} {s.value}" for s in _ORDER if counts[s])
        found = f"{len(review.findings)} finding{'s' if len(review.findings) != 1 else ''}"
        return f"**{files}, {lines}.** {found}: {by_severity}."
    return f"**{files}, {lines}.** No findings."


_ORDER = sorted(Severity, key=lambda s: -s.rank)
NOTHING_TO_REVIEW = "**Nothing to review.**"


def _baseline_line(baseline: Comparison) -> str:
    fixed = baseline.absent
    line = (
        f"Compared with {inline_code(baseline.file)}: {len(baseline.new)} new, "
        f"{len(baseline.unchanged)} unchanged, {len(fixed)} fixed."
    )
    if fixed:
        shown = [
            f"{inline_code(f'{a.file}:{a.line}' if a.line else a.file)} {sanitize_inline(a.title)}"
            for a in fixed[:_MAX_LISTED_FILES]
        ]
        more = (
            f"; … and {len(fixed) - _MAX_LISTED_FILES} more"
            if len(fixed) > _MAX_LISTED_FILES
            else ""
        )
        line += f" Fixed: {'; '.join(shown)}{more}."
    return line


def _findings(findings: list[Finding], out: list[str], baseline: Comparison | None) -> None:
    groups: dict[Severity, list[Finding]] = {s: [] for s in _ORDER}
    for finding in findings:
        groups[finding.severity].append(finding)
    for severity in _ORDER:
        group = groups[severity]
        if not group:
            continue
        out += [f"## {severity.value} ({len(group)})", ""]
        for finding in group:
            finding_section(finding, out, baseline)


def finding_section(finding: Finding, out: list[str], baseline: Comparison | None = None) -> None:
    out += [f"### {location(finding)} — {sanitize_inline(finding.title)}", ""]
    comment = sanitize_markdown(finding.comment).strip()
    if comment:
        out += [comment, ""]
    # Sources and rule ids come from analyzers too (a custom one reads the repository's config).
    sources = sanitize_inline(", ".join(finding.sources)) if finding.sources else "unknown"
    meta = f"*{finding.category.value} · confidence {finding.confidence:.2f} · from {sources}"
    if finding.rule_id:
        meta += f" · rule {sanitize_inline(finding.rule_id)}"
    if finding.verification is not None:
        meta += f" · verified: {sanitize_inline(finding.verification.verdict)}"
    if baseline is not None:
        meta += f" · {baseline.state(finding.id)} since the baseline"
    out += [meta + "*", ""]
    language = language_for(finding.file)
    if finding.anchor is AnchorState.APPROXIMATE:
        # The model's own quote: the report never passes the file's text off as what it said.
        out += ["Quoted code (not found in the file; the location is approximate):", ""]
        out += [fenced(finding.existing_code, language), ""]
    if finding.improved_code is None:
        return
    if not finding.fix_applicable:
        out += [not_applicable_label(finding.fix), "", fenced(finding.improved_code, language), ""]
        return
    if finding.improved_code == "":
        out += ["Suggested fix: delete these lines.", ""]
        if finding.existing_code:
            out += [fenced(finding.existing_code, language), ""]
        return
    out += ["Suggested fix:", "", fenced(finding.improved_code, language), ""]


def coverage_section(review: Review, out: list[str]) -> None:
    """The Coverage section's lines (appended to `out`): also drawn by report/terminal.py."""
    coverage = review.coverage
    out += ["## Coverage", ""]
    reviewed = coverage.reviewed_files
    out.append(f"- Reviewed: {len(reviewed)} file{'s' if len(reviewed) != 1 else ''}"
               + (f": {_file_list(reviewed)}" if reviewed else ""))  # fmt: skip
    if coverage.skipped:
        out.append(f"- Skipped: {len(coverage.skipped)}")
        for skipped in coverage.skipped[:_MAX_LISTED_FILES]:
            out.append(f"  - {inline_code(skipped.path)}: {sanitize_inline(skipped.reason)}")
        if len(coverage.skipped) > _MAX_LISTED_FILES:
            out.append(f"  - … and {len(coverage.skipped) - _MAX_LISTED_FILES} more")
    else:
        out.append("- Skipped: none")
    if coverage.analyzers:
        out.append("- Analyzers:")
        out += [f"  - {_analyzer(run)}" for run in coverage.analyzers]
    else:
        out.append("- Analyzers: none ran")
    if coverage.models:
        out.append(f"- Models: {', '.join(inline_code(m) for m in coverage.models)}")
        calls = f"{coverage.model_calls} model calls · " if coverage.model_calls else ""
        out.append(f"- {calls}Tokens: {coverage.tokens:,} · cost: {_cost(review)}")
        if review.quality_score is not None:
            attempts = f" after {review.attempts} attempts" if review.attempts > 1 else ""
            out.append(f"- Verifier quality score: {review.quality_score}/100{attempts}")
        if review.dropped:
            out.append(f"- Rejected by the verifier: {plural(len(review.dropped), 'finding')}")
        if coverage.cached_models:
            out.append(f"- Reused from the answer cache: {_models(coverage.cached_models)}")
    elif coverage.cached_models:
        out.append(
            f"- Models: none called; {_models(coverage.cached_models)} answered before, "
            "reused from the answer cache"
        )
        if review.quality_score is not None:
            out.append(f"- Verifier quality score: {review.quality_score}/100 (cached)")
        if review.dropped:
            out.append(f"- Rejected by the verifier: {plural(len(review.dropped), 'finding')}")
    else:
        out.append("- Models: none (offline review by static analyzers only)")
        if coverage.tokens:
            out.append(f"- Tokens: {coverage.tokens:,} · cost: {_cost(review)}")
    if coverage.memory is not None:
        out.append(f"- Memory: {sanitize_inline(coverage.memory)}")
    if coverage.instructions_read:
        out.append(
            "- Repository instructions read: "
            + ", ".join(inline_code(p) for p in coverage.instructions_read)
        )
    for cut in coverage.instructions_truncated:
        out.append(f"  - truncated: {sanitize_inline(cut)}")
    for note in coverage.notes:
        out.append(f"- Note: {sanitize_inline(note)}")
    out.append("")


def _models(models: Iterable[str]) -> str:
    return ", ".join(inline_code(m) for m in models)


def _file_list(paths: Iterable[str]) -> str:
    items = list(paths)
    shown = ", ".join(inline_code(p) for p in items[:_MAX_LISTED_FILES])
    if len(items) > _MAX_LISTED_FILES:
        shown += f", … and {len(items) - _MAX_LISTED_FILES} more"
    return shown


def _analyzer(run: AnalyzerRun) -> str:
    name = sanitize_inline(run.name + (f" {run.version}" if run.version else ""))
    text = f"{name}: {run.status}"
    if run.status in ("ok", "partial"):
        files = f"{run.files} file{'s' if run.files != 1 else ''}"
        text += f", {files}, {run.findings} finding{'s' if run.findings != 1 else ''}"
    if run.seconds is not None and run.status != "missing":
        text += f", {run.seconds:.2f} s"
    if run.message:
        text += f" ({sanitize_inline(run.message)})"
    return text


def _cost(review: Review) -> str:
    cost = review.coverage.cost_usd
    if cost is None:
        return UNPRICED if review.coverage.tokens > 0 else dollars(0)
    return dollars(cost, 4)
