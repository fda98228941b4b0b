"""Running a review for the editor: the job, its progress, and what it publishes.

`start_review` registers a job (replacing the folder's running one) and runs the engine in a
worker thread (`engine.review_sync`); it returns at once. The engine's typed progress events
become work-done progress (cancellable) and `redline/reviewState` notifications (started,
stage, progress with done/total, tokens and cost so far; finished with counts, cancelled or
failed); early findings are published file by file as they exist, and the final ones replace
them when the review ends. A cancel from the progress indicator reaches the job's CancelToken.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from redline.debate.events import DebateControl
from redline.errors import RedlineError
from redline.lsp import engine, landing, sidebar, uris
from redline.lsp.debate_stream import DebateStream
from redline.lsp.engine import PathTexts
from redline.lsp.folders import Folder, Snapshot, keep_run, kept_findings, run_kind
from redline.lsp.handlers import Handlers
from redline.lsp.reviews import ReviewJob, WorkerProgress
from redline.plural import plural
from redline.progress import Cancelled, ProgressEvent
from redline.redaction import get_redactor, redact, redact_data
from redline.requests import DebateRequest

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer
    from redline.model import Finding, Review
    from redline.requests import EngineRequest

log = logging.getLogger("redline.lsp")

HANDLERS = Handlers()
REVIEW_STATE = "redline/reviewState"
# How long a new review waits for the one it replaced to wind down before starting anyway.
SUPERSEDE_WAIT = 5.0
# How long a review waits for the client to accept its progress token: a client that never
# answers `window/workDoneProgress/create` gets a review without progress, not no review.
PROGRESS_CREATE_TIMEOUT = 2.0


def _state(
    ls: RedlineServer, folder: Folder, job: ReviewJob | None, state: str, **extra: Any
) -> None:
    """One `redline/reviewState` notification (what the sidebar and status bar show)."""
    payload: dict[str, Any] = {"folder": folder.uri, "state": state}
    if job is not None:
        payload["taskId"] = job.task_id
        payload["scope"] = job.request.kind
        payload["request"] = job.request.describe()
        payload["elapsed"] = round(time.monotonic() - job.started, 3)
    payload.update({k: v for k, v in extra.items() if v is not None})
    ls.protocol.notify(REVIEW_STATE, redact_data(payload))


def start_review(ls: RedlineServer, folder: Folder, request: EngineRequest) -> ReviewJob:
    """Register a job and run it in the background; returns at once."""
    loop = asyncio.get_running_loop()
    task_id = uuid.uuid4().hex[:12]
    job_ref: list[ReviewJob] = []

    def emit(event: ProgressEvent) -> None:
        # Called in the worker thread: hop to the server loop.
        with contextlib.suppress(RuntimeError):  # the loop is closing (server shutdown)
            loop.call_soon_threadsafe(_on_progress, ls, folder, job_ref[0], event)

    progress = WorkerProgress(emit)
    job = ReviewJob(
        task_id=task_id,
        folder=folder.uri,
        request=request,
        progress=progress,
        token=f"redline-review-{task_id}",
    )
    job_ref.append(job)
    if isinstance(request, DebateRequest):
        # Steered by redline.debateInterject / debateStop (debates.py); its events streamed.
        job.control = DebateControl()
        job.on_debate_event = DebateStream(ls, folder.uri, job, loop).on_event
    previous = ls.registry.start(job)
    if previous is not None:
        ls.log_message(
            f"Redline: review {previous.task_id} ({previous.request.describe()}) cancelled: "
            f"a new review {task_id} ({request.describe()}) was requested"
        )
    folder.last_request = request
    ls.last_folder = folder.uri
    kind = run_kind(request.kind)
    if folder.shown_runs is not None and kind not in folder.shown_runs:
        # The user asked for this run: its findings are shown beside the chosen ones.
        folder.shown_runs = (*folder.shown_runs, kind)
    job.task = loop.create_task(_run_job(ls, folder, job, previous))
    return job


def _on_progress(ls: RedlineServer, folder: Folder, job: ReviewJob, event: ProgressEvent) -> None:
    if not ls.registry.is_current(job):
        return
    fraction = event.fraction
    percentage = None if fraction is None else min(99, int(100 * fraction))
    if job.progress_begun:
        ls.work_done_progress.report(
            job.token,
            types.WorkDoneProgressReport(
                message=event.text, percentage=percentage, cancellable=True
            ),
        )
    _state(
        ls,
        folder,
        job,
        "progress" if event.done is not None else "stage",
        stage=event.stage.value,
        message=event.text,
        done=event.done,
        total=event.total,
        tokens=event.tokens,
        costUsd=event.cost_usd,
    )


async def _begin_progress(ls: RedlineServer, job: ReviewJob) -> None:
    window = ls.client_capabilities.window
    if not (window and window.work_done_progress) or ls.progress_create_unanswered:
        return
    create = asyncio.ensure_future(ls.work_done_progress.create_async(job.token))
    try:
        await asyncio.wait_for(asyncio.shield(create), PROGRESS_CREATE_TIMEOUT)
    except TimeoutError:
        log.info(
            "no answer to window/workDoneProgress/create in %g s: reviewing without progress, "
            "and not asking again until the client answers",
            PROGRESS_CREATE_TIMEOUT,
        )
        # Remembered for the connection (one per process: a second `initialize` is refused),
        # so the next reviews do not wait again; a late answer — a slow client, not a deaf
        # one — brings progress back.
        ls.progress_create_unanswered = True
        create.add_done_callback(lambda done: _late_create_answer(ls, job, done))
        return
    except Exception as exc:
        log.info("work-done progress not available: %s", exc)
        return
    if job.cancelled:
        return
    ls.work_done_progress.begin(
        job.token,
        types.WorkDoneProgressBegin(
            title=f"Redline {'debate' if job.control is not None else 'review'}",
            message=redact(job.request.describe()),
            cancellable=True,
            percentage=0,
        ),
    )
    job.progress_begun = True


def _late_create_answer(ls: RedlineServer, job: ReviewJob, done: asyncio.Future[Any]) -> None:
    if done.cancelled() or done.exception() is not None:
        return  # an error answer: still no progress for this client
    ls.progress_create_unanswered = False
    if not job.progress_begun:
        ls.work_done_progress.tokens.pop(job.token, None)  # the late answer registered it


def _end_progress(ls: RedlineServer, job: ReviewJob, message: str) -> None:
    if job.progress_begun:
        # A failure's message can quote a path or a model's text: redacted like the events.
        ls.work_done_progress.end(job.token, types.WorkDoneProgressEnd(message=redact(message)))
        job.progress_begun = False
    ls.work_done_progress.tokens.pop(job.token, None)


async def _run_job(
    ls: RedlineServer, folder: Folder, job: ReviewJob, previous: ReviewJob | None
) -> None:
    if previous is not None and previous.task is not None and not previous.task.done():
        await asyncio.wait({previous.task}, timeout=SUPERSEDE_WAIT)
    # A review asked for just after start-up may find detect-secrets still loading (server.py
    # starts it at `initialized`): its first redaction (the state below) would wait for it on
    # the loop, 0.1-0.3 s; here the wait is off the loop (at once once loaded).
    await asyncio.to_thread(engine.load_frozen, "redaction", get_redactor().load_plugins)
    _state(ls, folder, job, "started")
    end_message = "done"
    try:
        await _begin_progress(ls, job)
        job.cancel_token.check()
        snapshot = _snapshot(ls, folder)
        loop = asyncio.get_running_loop()

        def partial(root: Path, by_file: dict[str, list[Finding]], texts: PathTexts) -> None:
            # Worker thread → server loop; FIFO, so it never lands after the final results.
            loop.call_soon_threadsafe(_on_partial, ls, folder, job, root, by_file, texts)

        outcome = await asyncio.to_thread(
            engine.review_sync,
            folder.path,
            job.request,
            ls.settings,
            job.progress,
            job.cancel_token,
            job.task_id,
            partial,
            control=job.control,
            on_event=job.on_debate_event,
        )
        folder.root = outcome.root
        review, texts = outcome.review, outcome.texts
        if not ls.registry.is_current(job):
            raise Cancelled("superseded")
        await _finish(ls, folder, job, review, texts, snapshot)
        # Counted as shown: a finding already fixed or dismissed in the editor is not counted.
        shown = sidebar.shown_review(ls, folder) or review
        counts = {s.value: n for s, n in shown.counts_by_severity().items()}
        end_message = plural(len(shown.findings), "finding")
        if review.model_error:
            # The same one line the CLI prints (exit 3), shown once; the analyzers' findings
            # are published all the same, and the finished state carries the line.
            end_message = f"{plural(len(shown.findings), 'finding')} (static analyzers only)"
            ls.show_message(f"Redline: {review.model_error}")
        if review.failure:
            # A review that did not complete (an ask that never submitted) is a failure, not
            # "no findings"; its report (with the reason) stays available.
            end_message = f"failed: {review.failure}"
            if not review.model_error:  # else the line above said why, once is enough
                ls.show_message(f"Redline: the review failed: {review.failure}")
            _state(
                ls,
                folder,
                job,
                "failed",
                error=review.failure,
                label=review.scope_label,
                modelError=review.model_error,
            )
            return
        if not shown.findings and not review.model_error and not ls.settings.client_shows_outcome:
            # Else an empty review only clears the squiggles: nothing says it ran. Once per
            # review, at Info (the model error above already said how this one ended).
            ls.show_message(f"Redline: no findings ({review.scope_label})", types.MessageType.Info)
        _state(
            ls,
            folder,
            job,
            "finished",
            stage="done",
            label=review.scope_label,
            counts=counts,
            findings=len(shown.findings),
            tokens=review.coverage.tokens,
            costUsd=review.coverage.cost_usd,
            coverage=review.coverage.model_dump(mode="json"),
            summary=review.summary,
            modelError=review.model_error,
        )
    except asyncio.CancelledError:
        reason = job.cancel_reason or "cancelled"
        end_message = f"cancelled: {reason}"
        ls.log_message(f"Redline: review {job.task_id} cancelled ({reason})")
        _state(ls, folder, job, "cancelled", reason=reason)
        if not job.cancelled:  # the server itself is shutting down
            raise
    except RedlineError as exc:
        end_message = f"failed: {exc.message}"
        ls.show_message(f"Redline: {exc}")
        _state(ls, folder, job, "failed", error=str(exc))
    except Exception as exc:
        log.exception("review %s failed", job.task_id)
        end_message = f"failed: {type(exc).__name__}"
        ls.show_message(f"Redline: the review failed unexpectedly: {type(exc).__name__}: {exc}")
        _state(ls, folder, job, "failed", error=f"{type(exc).__name__}: {exc}")
    finally:
        _end_progress(ls, job, end_message)
        ls.registry.finish(job)


def _snapshot(ls: RedlineServer, folder: Folder) -> dict[str, Snapshot]:
    # By key: the client's spelling of its documents and of its folder can differ.
    prefix = uris.key(folder.uri).rstrip("/") + "/"
    keyed = ((uris.key(doc.uri), doc) for doc in list(ls.workspace.text_documents.values()))
    return {
        key: Snapshot(key, doc.version, doc.source) for key, doc in keyed if key.startswith(prefix)
    }


def _on_partial(
    ls: RedlineServer,
    folder: Folder,
    job: ReviewJob,
    root: Path,
    by_file: dict[str, list[Finding]],
    texts: dict[str, str | None],
) -> None:
    if not ls.registry.is_current(job):
        return  # a cancelled or superseded review publishes nothing more
    folder.root = root
    kind = run_kind(job.request.kind)

    def others(uri: str, early: set[str]) -> list[Finding]:
        # Beside the other runs' findings in the file: a run replaces only its own kind's.
        return [
            f
            for f in folder.findings.get(uri, [])
            if f.id not in early and _of_other_runs(folder, f.id, kind)
        ]

    # Landed in slices off this callback (landing.py), after the job's earlier landing.
    early = landing.land_early(
        ls, folder, lambda: ls.registry.is_current(job), root, by_file, texts, others
    )
    job.landing = asyncio.ensure_future(_after(job.landing, early))


async def _after(previous: asyncio.Future[None] | None, step: Coroutine[Any, Any, None]) -> None:
    if previous is not None:
        await asyncio.wait({previous})
    try:
        await step
    except Exception:
        log.exception("publishing a review's early findings failed")


def _of_other_runs(folder: Folder, finding_id: str, kind: str) -> bool:
    return any(k != kind for k in folder.run_index.get(finding_id, ()))


async def _finish(
    ls: RedlineServer,
    folder: Folder,
    job: ReviewJob,
    review: Review,
    texts: dict[str, str],
    snapshot: dict[str, Snapshot],
) -> None:
    """Keep the run as its kind's last, and publish every kept run's findings: this run's
    replace its kind's previous ones, the other runs' stay. Files left without any are cleared.
    Built off the loop and landed in slices (landing.py), after the job's early findings."""
    if job.landing is not None:
        await asyncio.wait({job.landing})
    root = folder.root or folder.path
    listed_before = {uri: [f.id for f in fs] for uri, fs in folder.findings.items()}
    kind = run_kind(job.request.kind)
    keep_run(folder, kind, review)
    for uri, before in snapshot.items():
        doc = ls.open_document(uri)
        if doc is not None and doc.version != before.version:
            log.info("%s changed during the review: findings re-anchored", uri)
    own = {f.file for f in review.findings}
    await landing.land_final(
        ls,
        folder,
        root,
        kept_findings(folder),
        own,
        texts,
        listed_before,
        lambda: folder.runs.get(kind) is review,
    )


# -- progress cancel ---------------------------------------------------------------------------


@HANDLERS.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
def on_progress_cancel(ls: RedlineServer, params: types.WorkDoneProgressCancelParams) -> None:
    job = ls.registry.by_token(params.token)
    if job is not None:
        job.cancel("cancelled from the progress indicator")
        what = "debate" if job.request.kind == "debate" else "review"
        ls.log_message(f"Redline: cancelling {what} {job.task_id}")
