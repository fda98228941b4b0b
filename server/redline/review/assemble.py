"""What every entry point does once its findings exist, in one place.

`redline review` (the pipeline), `redline ask` (one agent) and, next, the debate mode find
findings differently, but end the same way: the verifier checks the model's findings (and a
verifier that cannot run leaves them unverified, saying so), dismissed findings are left out
(and named), the severity floor hides what is below `review.min_severity` (saying how many),
the model usage is totalled into the coverage, the task record is written as the run goes and
closed with its outcome, and the last progress event says what was found and what it cost.
Each of those is a function here, so the three entry points cannot drift apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.config_models import Settings
from redline.errors import RedlineError
from redline.model import Coverage, Finding, Review, Severity, number_occurrences
from redline.plural import plural
from redline.progress import Progress, ProgressEvent, Stage
from redline.review.duplicates import merge_duplicates
from redline.review.fix_guard import withhold_worse_fixes
from redline.store import TaskRecord, TaskStore
from redline.store.dismissal_matching import DismissalSource, ReadText, filter_dismissed

if TYPE_CHECKING:
    # The model stages' types: imported where a model runs, not by an offline review.
    from redline.agent.llm import LLMClient
    from redline.review.verifier import Verified
    from redline.store.cache import AnswerCache

log = logging.getLogger(__name__)


# -- the task record ---------------------------------------------------------------------------


def open_record(
    store: TaskStore | None, task_id: str, content: dict[str, Any]
) -> TaskRecord | None:
    """The run's task record, or None without a store or when it cannot be created (the run
    goes on: a record is for later, the review is what the user waits for)."""
    if store is None:
        return None
    try:
        return store.create(task_id, content)
    except (RedlineError, OSError) as exc:
        log.warning("task record not written: %s", exc)
        return None


def record_update(record: TaskRecord | None, key: str, value: object) -> None:
    """One stage's result into the record; a write that fails (a full disk) loses the record,
    never the review."""
    if record is None:
        return
    try:
        record.update(key, value)
    except (OSError, TypeError, ValueError) as exc:
        log.warning("task record %s: could not write %s: %s", record.task_id, key, exc)


@contextlib.contextmanager
def recorded_run(record: TaskRecord | None) -> Iterator[None]:
    """A run that ends in an exception leaves its record saying why: "cancelled" for a cancel
    (or Ctrl-C), "failed" otherwise. The exception goes on."""
    try:
        yield
    except BaseException as exc:
        cancelled = isinstance(exc, KeyboardInterrupt | asyncio.CancelledError)
        record_update(record, "error", f"{type(exc).__name__}: {exc}")
        record_update(record, "status", "cancelled" if cancelled else "failed")
        raise


def close_record(record: TaskRecord | None, review: Review, *, error: str | None = None) -> None:
    """The finished review into the record: "done", or "failed" with the reason a run that
    produced a Review still failed for (an agent that never submitted)."""
    record_update(record, "review", review.model_dump(mode="json"))
    if error:
        record_update(record, "error", error)
    record_update(record, "status", "failed" if error else "done")


# -- verification ------------------------------------------------------------------------------


async def verify_or_keep(
    client: LLMClient,
    findings: list[Finding],
    read_text: Callable[[str], str | None],
    notes: list[str],
    *,
    cache: AnswerCache | None = None,
    when: str = "",
) -> Verified:
    """The verifier on the model's findings, once each: duplicates (the same problem reported
    twice, `review/duplicates.py`) are merged first, so they are neither verified nor shown
    twice. When no verifier is configured or it fails, every finding is kept unverified and a
    note says so (`when`: "in attempt 2", for the notes)."""
    from redline.agent.llm import LLMError
    from redline.review.structured import InvalidModelOutput
    from redline.review.verifier import Verified, verify

    findings, merged = merge_duplicates(findings)
    if merged:
        where = f" {when}" if when else ""
        notes.append(
            f"{plural(merged, 'duplicate finding')} merged{where} (same problem, same lines)"
        )
    if not findings:
        return Verified(kept=[])
    if not client.is_configured("verifier"):
        notes.append("no verifier model configured: findings are shown unverified")
        return Verified(kept=list(findings))
    try:
        return await verify(client, findings, read_text, cache=cache)
    except (LLMError, InvalidModelOutput) as exc:
        where = f" {when}" if when else ""
        notes.append(
            f"verification failed{where} ({exc.message[:300]}); findings are shown unverified"
        )
        return Verified(kept=list(findings))


# -- the review --------------------------------------------------------------------------------


def at_or_above(findings: list[Finding], floor: Severity) -> list[Finding]:
    return [f for f in findings if f.severity.rank >= floor.rank]


def shown_findings(findings: list[Finding], floor: Severity, notes: list[str]) -> list[Finding]:
    """What the user sees: at or above the severity floor (how many were hidden is noted),
    most serious first, then by file and line."""
    shown = at_or_above(findings, floor)
    if len(shown) < len(findings):
        notes.append(
            f"{plural(len(findings) - len(shown), 'finding')} below {floor.value} hidden "
            "(review.min_severity)"
        )
    shown.sort(key=lambda f: (-f.severity.rank, f.file, f.line or 0))
    return shown


def fill_usage(client: LLMClient, coverage: Coverage) -> None:
    """Models, calls, tokens and cost of the run into the coverage (cost None when a model
    had no price), and a note when the request caps (count, size) held calls back."""
    if client.requests_refused:
        coverage.notes.append(
            f"model request cap ({client.max_requests}) reached: {client.requests_refused} "
            f"model calls were not sent after {client.requests_sent} requests (raise "
            "llm.max_requests to allow more)"
        )
    if client.requests_too_large:
        coverage.notes.append(
            f"{client.requests_too_large} model requests were not sent: each was over "
            f"llm.max_request_bytes ({client.settings.llm.max_request_bytes:,} bytes)"
        )
    ledger = client.ledger
    coverage.models = sorted(set(coverage.models) | set(ledger.models))
    coverage.tokens = ledger.total_tokens
    coverage.model_calls = len(ledger.records)
    coverage.cost_usd = ledger.cost_usd if ledger.cost_complete else None


def build_review(
    settings: Settings,
    *,
    task_id: str,
    scope: str,
    scope_label: str,
    repo: Path,
    findings: list[Finding],
    coverage: Coverage,
    read_text: ReadText,
    dismissals: DismissalSource | None = None,
    **extra: Any,
) -> Review:
    """The Review every entry point returns. Dismissed findings (`.redline/dismissed.toml`,
    inline `redline: ignore[<id>]` markers, read through `read_text`; with `dismissals`, only
    those of that source — a review of commits: its base) are left out and named in the
    coverage; the rest is filtered by the severity floor and ordered for display. `extra`
    carries what only some runs have (stats, summary, quality score, attempts, dropped).

    This is where finding ids become unique within the review: every finding is known here
    (fused, deduplicated, verified), so identical findings in one file are numbered in line
    order (`model.number_occurrences`) before dismissals, reports and the task record see
    them. A fix that would keep a more severe finding in place is withheld here, before any
    renderer (`review/fix_guard.py`)."""
    findings = number_occurrences(findings)
    kept, dismissal_notes = filter_dismissed(findings, repo, read_text, dismissals)
    coverage.notes.extend(dismissal_notes)
    # Every output renders from here: a fix that keeps a worse defect is withheld once, for all.
    kept = withhold_worse_fixes(kept)
    shown = shown_findings(kept, settings.review.min_severity, coverage.notes)
    return Review(
        task_id=task_id,
        scope=scope,
        scope_label=scope_label,
        repo=str(repo),
        findings=shown,
        coverage=coverage,
        **extra,
    )


def report_done(progress: Progress, review: Review, text: str, *, model_ran: bool) -> None:
    """The run's last progress event: what it says, and the spend (None without a model)."""
    progress.report(
        ProgressEvent(
            Stage.DONE,
            text,
            tokens=review.coverage.tokens if model_ran else None,
            cost_usd=review.coverage.cost_usd if model_ran else None,
        )
    )
