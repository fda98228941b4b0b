"""The review pipeline: scope → units → rules → static analyzers → model stages → Review.

`plan_review` decides what will be looked at (no analyzer, no model); `run_review` runs the
analyzers and, with a model configured, the model stages (`model_review.py`: planner,
reviewers, anchoring, fusion, verifier, summary), then ends like every entry point does
(`assemble.py`). With no model configured this *is* the offline review. Every stage only adds
to what the earlier ones produced, so a failure late in the pipeline still leaves a Review
with everything found so far.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.analyzers import run_analyzers
from redline.config import LoadedSettings
from redline.config_models import Settings
from redline.diff import apply_rules, review_index
from redline.diff.units import UnitBuilder
from redline.errors import RedlineError
from redline.gc_pause import gc_paused
from redline.git.scopes import ScopeRequest, resolve_scope
from redline.memory.probe import MemoryProbe
from redline.model import (
    Coverage,
    Finding,
    PatchType,
    Review,
    ReviewUnit,
    SkippedFile,
    Tag,
    number_occurrences,
)
from redline.plural import plural
from redline.progress import CancelToken, NullProgress, Progress, ProgressEvent, Stage
from redline.review.added_text import AddedText
from redline.review.assemble import (
    at_or_above,
    build_review,
    close_record,
    open_record,
    record_update,
    recorded_run,
    report_done,
)
from redline.review.changed_lines import ChangedLines
from redline.review.deleted import deleted_findings, find_uses
from redline.review.fix_guard import withhold_worse_fixes
from redline.review.ground import Ground, ground_of
from redline.review.plan import Plan
from redline.review.settings_change import settings_findings
from redline.review.unanalyzed import unanalyzed
from redline.store import TaskRecord, TaskStore
from redline.store.dismissal_matching import filter_dismissed

if TYPE_CHECKING:
    from redline.review.model_review import ModelOutcome

logger = logging.getLogger(__name__)


@dataclass
class FileSet:
    """New content and changed lines of the files analyzers will read."""

    contents: dict[str, bytes] = field(default_factory=dict)
    changed_lines: ChangedLines = field(default_factory=ChangedLines)
    skipped: list[SkippedFile] = field(default_factory=list)


def plan_review(
    repo: Path,
    request: ScopeRequest,
    settings: Settings | LoadedSettings,
    progress: Progress | None = None,
    *,
    cancel: CancelToken | None = None,
    function_metrics: bool | None = None,
    for_model: bool | None = None,
) -> Plan:
    """Scope, units and rules. Function metrics (tree-sitter) are computed when a model will
    use them (`function_metrics=None` decides from the settings) or when asked, as
    `--estimate` does to show the full plan. The security_sensitive tag is looked for when a
    model reads the units (`for_model=None`: one is configured), when function metrics are
    asked for (the full plan), or when bandit_scope = "security_sensitive" picks files by it.

    `settings` are the user's (a LoadedSettings keeps its layers apart; plain Settings all
    count as the user's). The repository's own settings come from the review's ground — the
    base revision for a review of commits (review/ground.py) — and are merged in once the
    scope is known: `plan.settings` is what the rest of the review runs with. What the scope
    needs before that (size limits, unit building) is the user's alone."""
    progress = progress or NullProgress()
    cancel = cancel or CancelToken()
    loaded = settings if isinstance(settings, LoadedSettings) else LoadedSettings.of(settings)
    user = loaded.settings
    if function_metrics is None:
        function_metrics = user.models.model is not None
    if for_model is None:
        for_model = user.models.model is not None
    security = for_model or function_metrics or user.analyzers.bandit_scope == "security_sensitive"
    cancel.check()
    progress.report(ProgressEvent(Stage.COLLECTING, f"collecting the diff ({request.kind})"))
    with gc_paused():
        # The diff is parsed (and, without function metrics, split into units) while git is
        # still writing it, and the new versions of its files are read meanwhile: they overlap.
        builder = UnitBuilder(user.review, functions=function_metrics, security=security)
        scope = resolve_scope(
            repo, request, max_file_bytes=user.review.max_file_bytes, consumer=builder
        )
        cancel.check()
        ground = ground_of(scope)
        loaded = loaded.with_repository(ground.repo_layer())
        scope.notes.extend(repository_notes(ground, loaded))
        progress.report(
            ProgressEvent(
                Stage.SPLITTING, f"splitting {plural(scope.stats.files, 'file')} into review units"
            )
        )
        units = builder.finish(scope.diff_text, scope.read_new, prefetch=scope.prefetch_new)
        units = apply_rules(units, loaded.settings.review)
        units = find_uses(units, scope)  # deleted files: the uses of their definitions left
        touched = {u.file_path for u in units} | {u.old_path for u in units if u.old_path}
        findings = settings_findings(scope, ground, touched)
    return Plan(scope=scope, units=units, loaded=loaded, ground=ground, settings_findings=findings)


def repository_notes(ground: Ground, loaded: LoadedSettings) -> list[str]:
    """What the coverage says about the repository's settings this review used."""
    layer = loaded.repository
    if ground.kind == "none":
        return [f"repository settings: none read ({ground.label}); your own settings apply"]
    if layer is None:
        return [f"repository settings: none at {ground.label}"]
    notes = [f"repository settings: {layer.origin}: {layer.describe()}"]
    notes += [f"repository settings: {w}" for w in loaded.warnings]
    return notes


def collect_files(plan: Plan, settings: Settings) -> FileSet:
    """Read each reviewable file's new content once; oversized or unreadable files are skipped
    with the reason, never silently. The reason says "not analyzed": a model may still review
    such a file's diff (a one-line change in a file over the read limit), and the report must
    not call a file skipped that a model was shown."""
    files = FileSet()
    limit = settings.review.max_file_bytes
    for unit in plan.reviewable:
        if unit.patch_type is PatchType.DELETE:
            continue
        path = unit.file_path
        files.changed_lines.add(unit)
        if path in files.contents or any(s.path == path for s in files.skipped):
            continue
        try:
            content = plan.scope.read_new(path)
        except RedlineError as exc:
            files.skipped.append(SkippedFile(path=path, reason=f"not analyzed: {exc.message}"))
            continue
        if content is None:
            files.skipped.append(
                SkippedFile(path=path, reason="not analyzed: not present on the new side")
            )
        elif len(content) > limit:
            files.skipped.append(
                SkippedFile(
                    path=path,
                    reason=f"not analyzed: over the size limit ({len(content)} > {limit} bytes)",
                )
            )
        else:
            files.contents[path] = content
    for s in files.skipped:
        files.changed_lines.discard(s.path)
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


def empty_review(plan: Plan) -> Review:
    """The Review of a scope with no changes: no findings, a note saying so. Rendered like any
    other, so `--output` and a piped `--format json|sarif` always hold a valid report."""
    scope = plan.scope
    return Review(
        task_id=new_task_id(),
        scope=scope.request.kind,
        scope_label=scope.label,
        repo=str(scope.repo_root),
        stats=scope.stats,
        coverage=Coverage(notes=[f"nothing to review: {scope.label}", *scope.notes]),
    )


def run_review(
    plan: Plan,
    settings: Settings,
    progress: Progress | None = None,
    *,
    cancel: CancelToken | None = None,
    model_hooks: dict[str, Any] | None = None,
    store: TaskStore | None = None,
    task_id: str | None = None,
    on_analyzers: Callable[[list[Finding]], None] | None = None,
) -> Review:
    """Static analyzers on the changed lines of the reviewable files, then — when a model is
    configured — the model stages (planner, reviewers, fusion, verifier, summary).

    `model_hooks` passes keyword arguments through to `run_model_review` (a client, and
    callbacks that persist each attempt and file as it completes). With a `store`, the task
    record is written as each stage completes.

    `task_id` lets a caller that announced the review before it ran (the language server) keep
    one id; `on_analyzers` receives the analyzer findings as soon as they exist, long before
    the model stages end."""
    progress = progress or NullProgress()
    cancel = cancel or CancelToken()
    task_id = task_id or new_task_id()
    record = open_record(store, task_id, _record_content(plan, settings))
    with recorded_run(record):
        review = _run_review(
            task_id, plan, settings, progress, cancel, record, model_hooks, on_analyzers
        )
    close_record(record, review)
    return review


def _record_content(plan: Plan, settings: Settings) -> dict[str, Any]:
    """What the task record says before any stage ran (a crash later loses nothing found)."""
    return {
        "scope_label": plan.scope.label,
        "scope": plan.scope.request.kind,
        "repo": str(plan.scope.repo_root),
        "stats": plan.scope.stats.model_dump(),
        "units": review_index(plan.units),
        "model": settings.models.model,
    }


def _run_review(
    task_id: str,
    plan: Plan,
    settings: Settings,
    progress: Progress,
    cancel: CancelToken,
    record: TaskRecord | None,
    model_hooks: dict[str, Any] | None,
    on_analyzers: Callable[[list[Finding]], None] | None = None,
) -> Review:
    scope = plan.scope
    # Read beside the review, taken as it is when the report is assembled: never waited for.
    memory = MemoryProbe(scope.repo_root, settings)
    coverage = Coverage(skipped=_skipped_units(plan.units), notes=list(scope.notes))
    files = collect_files(plan, settings)
    coverage.skipped.extend(files.skipped)
    skipped_paths = {s.path for s in coverage.skipped}
    coverage.reviewed_files = sorted(
        {u.file_path for u in plan.reviewable if u.file_path not in skipped_paths}
        | set(files.contents)
    )

    findings: list[Finding] = []
    given: dict[str, list[str]] = {}  # analyzer → the files it was handed
    cancel.check()
    if files.contents:
        progress.report(
            ProgressEvent(
                Stage.ANALYZING,
                f"running static analyzers on {plural(len(files.contents), 'file')}",
            )
        )
        outcome = run_analyzers(
            files.contents,
            files.changed_lines,
            settings.analyzers,
            cancel=cancel,
            security_sensitive={
                u.file_path for u in plan.reviewable if Tag.SECURITY_SENSITIVE in u.tags
            },
            # bandit's files are chosen by their added lines: the units' patches hold them.
            added_text=AddedText(plan.reviewable, files.contents),
        )
        findings.extend(outcome.findings)
        coverage.analyzers = outcome.runs
        coverage.skipped.extend(outcome.skipped)
        given = outcome.given
    else:
        coverage.notes.append("no file content to analyze")

    # A deleted file's definitions that the new tree still uses (found while planning).
    still_used = deleted_findings(plan.reviewable)
    if still_used:
        # Their files are outside the diff, and the dismissal check below reads each one: one
        # `cat-file --batch` for all instead of three git processes per file.
        # On a failure they are read one by one below, each failure on its own.
        with contextlib.suppress(RedlineError):
            scope.prefetch_new([f.file for f in still_used])
    findings.extend(still_used)
    record_update(record, "analyzers", [f.model_dump(mode="json") for f in findings])

    def read_text(path: str) -> bytes | None:
        try:
            return files.contents.get(path) or scope.read_new(path)
        except RedlineError:
            return None

    cancel.check()
    if on_analyzers is not None:
        # Dismissed findings must not flash in the editor before the final filter below.
        # Numbered as build_review will number them (the analyzers' findings alone: a model
        # finding in between can shift an occurrence; the final review's ids replace these).
        early, _ = filter_dismissed(
            number_occurrences([*findings, *plan.settings_findings]),
            scope.repo_root,
            read_text,
            plan.ground.dismissals(),
        )
        on_analyzers(at_or_above(withhold_worse_fixes(early), settings.review.min_severity))
    outcome_model: ModelOutcome | None = None
    if settings.models.model:
        # Imported here: the model stages (and what they bring) are not loaded offline.
        from redline.review.model_review import run_model_review_sync

        hooks = dict(model_hooks or {})
        if record is not None and "on_attempt" not in hooks:
            hooks["on_attempt"] = record.append_attempt
        outcome_model = run_model_review_sync(
            plan, settings, findings, coverage, progress=progress, cancel=cancel, **hooks
        )
        record_update(
            record,
            "verification",
            {
                "quality_score": outcome_model.quality_score,
                "dropped": [f.model_dump(mode="json") for f in outcome_model.dropped],
            },
        )
        findings = outcome_model.findings
    else:
        coverage.notes.append(
            "offline review: no model configured, so only the static analyzers ran"
        )

    if outcome_model is None or not outcome_model.ran:
        # Nothing but the analyzers looked at the files: those none of them read are not
        # reviewed (a model that ran set the reviewed files to those it answered for).
        left = unanalyzed(files.contents, given, coverage.analyzers)
        coverage.skipped.extend(left)
        gone = {s.path for s in left}
        coverage.reviewed_files = [p for p in coverage.reviewed_files if p not in gone]

    # After the model stages: no model answer can drop or merge away an edit to the settings.
    findings = [*findings, *plan.settings_findings]
    extra: dict[str, Any] = {"stats": scope.stats}
    if outcome_model is not None:
        extra.update(
            summary=outcome_model.summary,
            quality_score=outcome_model.quality_score,
            attempts=outcome_model.attempts,
            dropped=outcome_model.dropped,
            model_error=outcome_model.model_error,
        )
    coverage.memory = memory.state()
    review = build_review(
        settings,
        task_id=task_id,
        scope=scope.request.kind,
        scope_label=scope.label,
        repo=scope.repo_root,
        findings=findings,
        coverage=coverage,
        read_text=read_text,
        dismissals=plan.ground.dismissals(),
        **extra,
    )
    done = f"review done: {plural(len(review.findings), 'finding')}"
    if review.model_error is not None:
        done += " (static analyzers only: the model could not be used)"
    report_done(progress, review, done, model_ran=outcome_model is not None)
    return review
