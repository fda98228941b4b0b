"""Driving the review engine from a worker thread: no pygls here.

`review_sync` runs one review (or `ask`) to the end in the calling thread, reporting early
findings through `on_partial` as they exist: the analyzers' as soon as they ran, then each
file's model review as it completes. It also reads the on-disk text of every file with
findings, so the server's event loop never waits on the disk or on git.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.lsp import publish
from redline.lsp.settings import LspSettings
from redline.progress import CancelToken, Progress, ProgressEvent, Stage
from redline.requests import AskRequest, DebateRequest, EngineRequest, ScopeKind, ScopeRequest

if TYPE_CHECKING:
    from redline.debate.events import DebateControl, OnEvent
    from redline.model import Finding, Review

log = logging.getLogger(__name__)

PathTexts = dict[str, str | None]  # repo-relative path → text on disk (None: gone)
OnPartial = Callable[[Path, "dict[str, list[Finding]]", PathTexts], None]

_loaded: set[str] = set()
_loading = threading.Lock()


def load_frozen(name: str, load: Callable[[], object]) -> None:
    """Run a heavy one-off import (`load`) once, with the cyclic GC paused, then freeze what
    exists so later collections skip it.

    Why: the GC stops every thread, the server's event loop included. litellm adds ~250k
    long-lived objects; while they are created the collector keeps rescanning the growing heap
    (full collections of 30-340 ms measured here, ~0.5 s in all per import) and editor requests
    wait them out; frozen, they are never scanned again. The cost: cyclic garbage made during
    the import is kept (litellm's: none found; ~2 MB of RSS in all), and objects other threads
    hold at that instant are frozen too (still freed by reference counting)."""
    if name in _loaded:
        return
    with _loading:
        if name in _loaded:
            return
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            load()
        finally:
            if was_enabled:
                gc.enable()
        gc.freeze()
        _loaded.add(name)


def _import_engine() -> None:
    import redline.config
    import redline.git.runner
    import redline.git.scopes
    import redline.review.pipeline
    import redline.store  # noqa: F401


def _import_litellm() -> None:
    from redline.agent.litellm_loader import load_and_warm

    load_and_warm()


def _log_warnings(warnings: list[str]) -> None:
    # Keys a repository file may not set, and the like: the server's log (the editor's output
    # channel); the review's coverage notes say them too.
    for warning in warnings:
        log.warning("%s", warning)


@dataclass
class Outcome:
    root: Path  # the git working tree that was reviewed
    review: Review
    texts: dict[str, str]  # on-disk text of every file with findings


def review_sync(
    folder: Path,
    request: EngineRequest,
    lsp_settings: LspSettings,
    progress: Progress,
    cancel: CancelToken,
    task_id: str,
    on_partial: OnPartial,
    *,
    control: DebateControl | None = None,
    on_event: OnEvent | None = None,
) -> Outcome:
    """Run the review; raises RedlineError (not a repository, bad ref, ...) or Cancelled.
    A debate is steered by `control` and reports its events to `on_event` (in this thread).

    The engine is imported here, on the first review, never at server start-up."""
    load_frozen("engine", _import_engine)
    from redline import config
    from redline.git.runner import find_repo_root
    from redline.model import number_occurrences
    from redline.review.pipeline import plan_review, run_review
    from redline.store import TaskStore

    root = find_repo_root(folder)
    # The user's settings; each run merges in the repository's of its ground (the base
    # revision for a review of commits, review/ground.py), never the change's.
    loaded = config.load_user_settings(lsp_settings.engine_flags())
    settings = loaded.settings
    # A model review imports litellm on its first call anyway; importing it here, from the
    # start of the review (in the background, overlapping the git, unit and analyzer work),
    # lets that import run without GC pauses (see load_frozen). No model: no litellm.
    wants_model = settings.models.model is not None
    if wants_model:
        from redline.agent.litellm_loader import start_background_import

        start_background_import(lambda: load_frozen("litellm", _import_litellm))
    partial: dict[str, dict[str, Finding]] = {}

    def post(findings: list[Finding]) -> None:
        # Early results, merged per file with what that file already showed.
        cancel.check()
        touched: dict[str, list[Finding]] = {}
        for f in findings:
            partial.setdefault(f.file, {})[f.id] = f
            touched[f.file] = list(partial[f.file].values())
        on_partial(root, touched, {path: disk_text(root, path) for path in touched})

    def on_file(file_review: Any) -> None:
        # One file's model findings, numbered among themselves (identical ones must not share
        # an id in `partial`); the final review's ids replace these.
        post(number_occurrences(file_review.findings))

    store = TaskStore.for_settings(settings)
    if isinstance(request, DebateRequest):
        from redline.debate.run import run_debate

        progress.report(ProgressEvent(Stage.DEBATING, "starting the debate"))
        # Debaters can name their own models without [models] model: always a model run.
        # Imported in the background (frozen, as reviews do): the scope and the change are
        # ready, and `started` is on screen, while litellm loads; the first turn waits for it.
        from redline.agent.litellm_loader import start_background_import

        start_background_import(lambda: load_frozen("litellm", _import_litellm))
        review = asyncio.run(
            run_debate(
                DebateRequest(_with_base(request.scope, lsp_settings), request.rounds),
                root,
                loaded,
                progress=progress,
                cancel=cancel,
                store=store,
                on_event=on_event,
                control=control,
                task_id=task_id,
            )
        )
    elif isinstance(request, AskRequest):
        from redline.review.ask import ask_settings, run_ask

        progress.report(ProgressEvent(Stage.ASKING, "starting the agent"))
        if wants_model:
            load_frozen("litellm", _import_litellm)
        asked, ground = ask_settings(root, loaded)
        _log_warnings(asked.warnings)
        review = asyncio.run(
            run_ask(
                request,
                root,
                asked.settings,
                ground=ground,
                progress=progress,
                cancel=cancel,
                store=store,
            )
        )
    else:
        scope = _with_base(request.scope, lsp_settings)
        plan = plan_review(root, scope, loaded, progress, cancel=cancel)
        _log_warnings(plan.loaded.warnings)
        cancel.check()
        if plan.empty:
            review = empty_review(task_id, plan)
        else:
            if wants_model:
                load_frozen("litellm", _import_litellm)
            review = run_review(
                plan,
                plan.settings,
                progress,
                cancel=cancel,
                model_hooks={"on_file": on_file},
                store=store,
                task_id=task_id,
                on_analyzers=post,
            )
    cancel.check()
    texts = {f.file: t for f in review.findings if (t := disk_text(root, f.file)) is not None}
    return Outcome(root=root, review=review, texts=texts)


def _with_base(scope: ScopeRequest, lsp_settings: LspSettings) -> ScopeRequest:
    """A branch scope without a base is against the editor's `baseBranch` setting."""
    if scope.kind is ScopeKind.BRANCH and scope.arg is None:
        return ScopeRequest(ScopeKind.BRANCH, lsp_settings.base_branch)
    return scope


def empty_review(task_id: str, plan: Any) -> Review:
    """Nothing changed in the scope: a Review that says so (and clears earlier diagnostics)."""
    from redline.model import Coverage, Review

    return Review(
        task_id=task_id,
        scope=plan.scope.request.kind,
        scope_label=plan.scope.label,
        repo=str(plan.scope.repo_root),
        stats=plan.scope.stats,
        coverage=Coverage(notes=[f"nothing to review: {plan.scope.label}"]),
    )


def disk_text(root: Path, rel: str) -> str | None:
    uri = publish.path_uri(root, rel)
    path = publish.uri_path(uri) if uri else None
    lines = publish.read_lines(path) if path is not None else None
    return None if lines is None else "".join(lines)
