"""The review pipeline as it stands today: scope → units → rules → static analyzers → Review.

With no model configured this *is* the offline review; the LLM stages (planner, reviewers,
anchoring, fusion, verifier, summary) slot in between the rules and the Review in the next
issue. Every stage only adds to what the earlier ones produced, so a failure late in the
pipeline still leaves a Review with everything found so far.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from redline.analyzers import run_analyzers
from redline.config_models import Settings
from redline.diff import apply_rules, build_units
from redline.errors import RedlineError
from redline.git.scopes import ScopeDiff, ScopeRequest, resolve_scope
from redline.model import (
    Coverage,
    Finding,
    PatchType,
    Review,
    ReviewUnit,
    SkippedFile,
)
from redline.progress import NullProgress, Progress


@dataclass
class Plan:
    """What the review will look at, decided without calling any analyzer or model."""

    scope: ScopeDiff
    units: list[ReviewUnit]

    @property
    def reviewable(self) -> list[ReviewUnit]:
        return [u for u in self.units if u.skip_reason is None]

    @property
    def skipped(self) -> list[ReviewUnit]:
        return [u for u in self.units if u.skip_reason is not None]

    @property
    def empty(self) -> bool:
        return not self.scope.diff_text.strip()


@dataclass
class FileSet:
    """New content and changed lines of the files analyzers will read."""

    contents: dict[str, bytes] = field(default_factory=dict)
    changed_lines: dict[str, set[int]] = field(default_factory=dict)
    skipped: list[SkippedFile] = field(default_factory=list)


def plan_review(
    repo: Path,
    request: ScopeRequest,
    settings: Settings,
    progress: Progress | None = None,
    *,
    function_metrics: bool | None = None,
) -> Plan:
    """Scope, units and rules. Function metrics (tree-sitter) are computed when a model will
    use them (`function_metrics=None` decides from the settings) or when asked, as
    `--estimate` does to show the full plan."""
    progress = progress or NullProgress()
    if function_metrics is None:
        function_metrics = settings.models.model is not None
    progress.stage(f"collecting the diff ({request.kind})")
    scope = resolve_scope(repo, request, max_file_bytes=settings.review.max_file_bytes)
    progress.stage(f"splitting {scope.stats.files} files into review units")
    units = build_units(
        scope.diff_text,
        scope.read_new,
        settings.review,
        prefetch=scope.prefetch_new,
        functions=function_metrics,
    )
    units = apply_rules(units, settings.review)
    return Plan(scope=scope, units=units)


def collect_files(plan: Plan, settings: Settings) -> FileSet:
    """Read each reviewable file's new content once; oversized or unreadable files are skipped
    with the reason, never silently."""
    files = FileSet()
    limit = settings.review.max_file_bytes
    for unit in plan.reviewable:
        if unit.patch_type is PatchType.DELETE:
            continue
        path = unit.file_path
        files.changed_lines.setdefault(path, set()).update(unit.added_lines)
        if path in files.contents or any(s.path == path for s in files.skipped):
            continue
        try:
            content = plan.scope.read_new(path)
        except RedlineError as exc:
            files.skipped.append(SkippedFile(path=path, reason=exc.message))
            continue
        if content is None:
            files.skipped.append(SkippedFile(path=path, reason="not present on the new side"))
        elif len(content) > limit:
            files.skipped.append(
                SkippedFile(
                    path=path, reason=f"over the size limit ({len(content)} > {limit} bytes)"
                )
            )
        else:
            files.contents[path] = content
    for s in files.skipped:
        files.changed_lines.pop(s.path, None)
    return files


def _skipped_units(units: list[ReviewUnit]) -> list[SkippedFile]:
    seen: set[tuple[str, str]] = set()
    out: list[SkippedFile] = []
    for u in units:
        key = (u.file_path, u.skip_reason or "")
        if u.skip_reason and key not in seen:
            seen.add(key)
            out.append(SkippedFile(path=u.file_path, reason=u.skip_reason))
    return out


def new_task_id() -> str:
    return uuid.uuid4().hex[:12]


def run_review(plan: Plan, settings: Settings, progress: Progress | None = None) -> Review:
    """The offline review: static analyzers on the changed lines of the reviewable files."""
    progress = progress or NullProgress()
    scope = plan.scope
    coverage = Coverage(skipped=_skipped_units(plan.units))
    files = collect_files(plan, settings)
    coverage.skipped.extend(files.skipped)
    skipped_paths = {s.path for s in coverage.skipped}
    coverage.reviewed_files = sorted(
        {u.file_path for u in plan.reviewable if u.file_path not in skipped_paths}
        | set(files.contents)
    )

    findings: list[Finding] = []
    if files.contents:
        progress.stage(f"running static analyzers on {len(files.contents)} files")
        outcome = run_analyzers(files.contents, files.changed_lines, settings.analyzers)
        findings.extend(outcome.findings)
        coverage.analyzers = outcome.runs
        coverage.skipped.extend(outcome.skipped)
    else:
        coverage.notes.append("no file content to analyze")

    if settings.models.model:
        coverage.notes.append(
            f"model {settings.models.model!r} is configured, but model reviews are not "
            "available in this version: this review used the static analyzers only"
        )
    else:
        coverage.notes.append(
            "offline review: no model configured, so only the static analyzers ran"
        )

    shown = _at_or_above(findings, settings)
    if len(shown) < len(findings):
        coverage.notes.append(
            f"{len(findings) - len(shown)} findings below {settings.review.min_severity.value} "
            "hidden (review.min_severity)"
        )
    shown.sort(key=lambda f: (-f.severity.rank, f.file, f.line or 0))
    review = Review(
        task_id=new_task_id(),
        scope=scope.request.kind,
        scope_label=scope.label,
        repo=str(scope.repo_root),
        stats=scope.stats,
        findings=shown,
        coverage=coverage,
    )
    progress.done(f"review done: {len(shown)} findings")
    return review


def _at_or_above(findings: list[Finding], settings: Settings) -> list[Finding]:
    floor = settings.review.min_severity.rank
    return [f for f in findings if f.severity.rank >= floor]


def exceeds(review: Review, threshold_rank: int) -> bool:
    return any(f.severity.rank >= threshold_rank for f in review.findings)
