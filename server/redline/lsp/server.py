"""`redline lsp`: the language server over stdio (pygls 2).

Wiring only: handlers are thin and delegate to the modules next to this one — reviews.py (the
registry of running reviews and their cancellation), publish.py (findings → diagnostics in the
negotiated encoding), tracking.py (findings that follow edits), fixes.py and hover.py (code
actions and hovers), settings.py (editor settings), store/dismissals.py (dismissals).

Start-up does no git work and imports nothing heavy: the review engine is imported when the
first review starts, and litellm only when a model review calls a model. What needs pydantic or
tree-sitter (the model, anchoring, hovers, dismissals, fix checks) is imported where it is first
used, so `initialize` is answered after little more than pygls' own import.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sys
import sysconfig
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from redline.errors import RedlineError, UsageError
from redline.lsp import engine, fixes, publish
from redline.lsp.engine import PathTexts
from redline.lsp.reviews import (
    ReviewJob,
    ReviewRegistry,
    WorkerProgress,
    ask_command,
    review_command,
)
from redline.lsp.settings import LspSettings, merge_settings
from redline.lsp.tracking import FindingTracker, Range, TrackedFinding, from_client_units
from redline.progress import Cancelled, ProgressEvent
from redline.redaction import get_redactor, redact, redact_data
from redline.redaction.logfilter import protect
from redline.requests import EngineRequest, ReviewRequest, ScopeRequest

if TYPE_CHECKING:
    from redline.model import Finding, Review

log = logging.getLogger("redline.lsp")


def _version() -> str:
    # The initialize response carries the version, so it is looked up before the first answer.
    # importlib.metadata costs ~17 ms to import (email, zipfile, csv, ...): a third of Redline's
    # own start-up. The installed distribution's METADATA names the version in a one-line
    # header. Only the environment's own site-packages is searched — never sys.path, whose
    # first entry can be the working directory, i.e. the repository under review. Anything
    # unusual falls back to importlib.metadata.
    site = Path(sysconfig.get_paths()["purelib"])
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for metadata in sorted(site.glob("redline-*.dist-info/METADATA")):
            for line in metadata.read_text(encoding="utf-8").splitlines():
                if not line:
                    break  # end of the headers
                if line.startswith("Version:"):
                    return line.removeprefix("Version:").strip()
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("redline")
    except PackageNotFoundError:
        return "0+unknown"


__version__ = _version()

REVIEW_STATE = "redline/reviewState"
FINDINGS = "redline/findings"
DEBUG_INFO = "redline/debugInfo"
# How long a new review waits for the one it replaced to wind down before starting anyway.
SUPERSEDE_WAIT = 5.0


@dataclass
class Folder:
    """A workspace folder and what Redline last showed in it."""

    uri: str  # as the client spelled it (echoed back unchanged)
    path: Path
    root: Path | None = None  # the git working tree; resolved off the loop on first review
    last_request: EngineRequest | None = None
    review: Review | None = None  # the last finished review
    findings: dict[str, list[Finding]] = field(default_factory=dict)  # uri → current findings
    published: set[str] = field(default_factory=set)  # uris holding Redline diagnostics
    save_timer: asyncio.TimerHandle | None = None


@dataclass
class Snapshot:
    """An open document as it was when a review started: (uri, version, text)."""

    uri: str
    version: int | None
    text: str


class RedlineServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "redline",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.settings = LspSettings()
        self.registry = ReviewRegistry()
        self.tracker = FindingTracker()
        self.folders: dict[str, Folder] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._findings_pending: set[str] = set()
        self._last_folder: str | None = None

    # -- folders and documents -----------------------------------------------------------

    def folder_for(self, hint: str | None = None) -> Folder:
        """The folder a command is about: the one containing `hint` (a folder or file URI),
        else the last one reviewed, else the first workspace folder, else the root URI."""
        candidates: list[str] = [f.uri for f in self.workspace.folders.values()]
        if not candidates and self.workspace.root_uri:
            candidates = [self.workspace.root_uri]
        if not candidates:
            raise UsageError("no workspace folder is open: open a folder inside a git repository")
        chosen = None
        if hint:
            for uri in sorted(candidates, key=len, reverse=True):
                if hint == uri or hint.startswith(uri.rstrip("/") + "/"):
                    chosen = uri
                    break
        if chosen is None and self._last_folder in candidates:
            chosen = self._last_folder
        chosen = chosen or candidates[0]
        folder = self.folders.get(chosen)
        if folder is None:
            path = publish.uri_path(chosen)
            if path is None:
                raise UsageError(f"{chosen} is not a local folder")
            folder = self.folders[chosen] = Folder(uri=chosen, path=path)
        return folder

    def folder_of_uri(self, uri: str) -> Folder | None:
        return next((f for f in self.folders.values() if uri in f.findings), None)

    def is_open(self, uri: str) -> bool:
        return uri in self.workspace.text_documents

    def current_text(self, uri: str) -> str | None:
        """The open buffer's text, else the file on disk (None if gone)."""
        if self.is_open(uri):
            return self.workspace.get_text_document(uri).source
        path = publish.uri_path(uri)
        lines = publish.read_lines(path) if path is not None else None
        return None if lines is None else "".join(lines)

    @property
    def encoding(self) -> publish.Encoding:
        return publish.encoding_of(self.workspace.position_encoding)

    # -- notifications -------------------------------------------------------------------

    def state(self, folder: Folder, job: ReviewJob | None, state: str, **extra: Any) -> None:
        payload: dict[str, Any] = {"folder": folder.uri, "state": state}
        if job is not None:
            payload["taskId"] = job.task_id
            payload["scope"] = job.request.kind
            payload["request"] = job.request.describe()
            payload["elapsed"] = round(time.monotonic() - job.started, 3)
        payload.update({k: v for k, v in extra.items() if v is not None})
        self.protocol.notify(REVIEW_STATE, redact_data(payload))

    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        message = redact(message)
        log.info("%s", message)
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show_message(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        message = redact(message)
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def schedule_findings(self, folder: Folder) -> None:
        """Send `redline/findings` once per loop turn, however many files changed in it."""
        if folder.uri in self._findings_pending:
            return
        self._findings_pending.add(folder.uri)
        asyncio.get_running_loop().call_soon(self._send_findings, folder)

    def _send_findings(self, folder: Folder) -> None:
        self._findings_pending.discard(folder.uri)
        files = []
        for uri in sorted(folder.findings):
            rows = []
            for tracked in self.tracker.visible(uri, self.settings.stale_display):
                f = tracked.finding
                if f.severity.rank < self.settings.min_severity.rank:
                    continue
                row = f.model_dump(mode="json")
                row["line"] = tracked.start_line + 1
                row["end_line"] = tracked.end_line + 1
                row["stale"] = tracked.stale
                rows.append(row)
            if rows:
                path = folder.findings[uri][0].file if folder.findings[uri] else ""
                files.append({"uri": uri, "path": path, "findings": rows})
        review = folder.review
        self._add_unanchored(folder, files)
        self.protocol.notify(
            FINDINGS,
            redact_data(
                {
                    "folder": folder.uri,
                    "taskId": review.task_id if review else None,
                    "scopeLabel": review.scope_label if review else None,
                    "files": files,
                }
            ),
        )

    def _add_unanchored(self, folder: Folder, files: list[dict[str, Any]]) -> None:
        """Findings whose quoted code was not found get no diagnostic (there is no line to put
        it on), but the sidebar still lists them, marked unanchored, under their file."""
        review = folder.review
        if review is None or folder.root is None:
            return
        by_path = {entry["path"]: entry for entry in files}
        for f in review.findings:
            if f.line is not None or f.severity.rank < self.settings.min_severity.rank:
                continue
            if self.tracker.is_closed(f.id):
                continue
            row = f.model_dump(mode="json")
            row["stale"] = False
            row["unanchored"] = True
            entry = by_path.get(f.file)
            if entry is None:
                uri = publish.path_uri(folder.root, f.file)
                if uri is None:
                    continue  # a path outside the repository is model text, not a place
                entry = {"uri": uri, "path": f.file, "findings": []}
                by_path[f.file] = entry
                files.append(entry)
            entry["findings"].append(row)

    # -- publishing ----------------------------------------------------------------------

    def show_file(
        self, folder: Folder, uri: str, findings: list[Finding], text: str | None
    ) -> None:
        """Place `findings` in the current text of `uri` and publish them."""
        if self.is_open(uri):
            text = self.workspace.get_text_document(uri).source  # the buffer wins over disk
        if text is None:
            # The file is gone (deleted during the review): nothing to point at.
            folder.findings.pop(uri, None)
            self.tracker.remove_file(uri)
            self.publish(folder, uri)
            return
        kept = self.drop_dismissed(folder, findings, text)
        folder.findings[uri] = kept
        self.tracker.set_findings(uri, text, kept)
        self.publish(folder, uri)

    def publish(self, folder: Folder, uri: str) -> None:
        doc = self.tracker.document(uri)
        diagnostics: list[types.Diagnostic] = []
        if doc is not None and uri in folder.findings:
            known = {f.file for fs in folder.findings.values() for f in fs}
            for tracked in self.tracker.visible(uri, self.settings.stale_display):
                finding = tracked.finding
                if finding.severity.rank < self.settings.min_severity.rank:
                    continue
                rng = publish.client_range(tracked, doc, self.encoding)
                related = publish.related_information(finding, folder.root or folder.path, known)
                diagnostics.append(
                    publish.to_diagnostic(finding, rng, stale=tracked.stale, related=related)
                )
        if not diagnostics and uri not in folder.published:
            return  # never touch a file Redline has not published to
        version = self.workspace.get_text_document(uri).version if self.is_open(uri) else None
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )
        if diagnostics:
            folder.published.add(uri)
        else:
            folder.published.discard(uri)
        self.schedule_findings(folder)

    def republish_all(self) -> None:
        for folder in self.folders.values():
            for uri in set(folder.findings) | set(folder.published):
                self.publish(folder, uri)

    def clear_folder(self, folder: Folder) -> None:
        for uri in set(folder.published) | set(folder.findings):
            folder.findings.pop(uri, None)
            self.tracker.remove_file(uri)
            self.publish(folder, uri)
        folder.review = None
        self.schedule_findings(folder)

    # -- dismissals ----------------------------------------------------------------------

    def dismissed_ids(self, folder: Folder) -> set[str]:
        """Ids in `.redline/dismissed.toml` (read afresh: a `git pull` may have changed it)."""
        if folder.root is None:
            return set()
        from redline.store.dismissals import DismissalError, DismissalStore

        try:
            return DismissalStore(folder.root).ids()
        except DismissalError as exc:
            self.log_message(f"Redline: {exc.message}", types.MessageType.Warning)
            return set()

    def drop_dismissed(
        self, folder: Folder, findings: list[Finding], text: str, stored: set[str] | None = None
    ) -> list[Finding]:
        from redline.store.dismissals import inline_ignores

        stored = self.dismissed_ids(folder) if stored is None else stored
        marked = inline_ignores(text)
        return [f for f in findings if f.id not in stored and f.id not in marked]

    def find_finding(self, finding_id: str) -> tuple[Folder, str, Finding] | None:
        for uri, tracked in self.tracker.find(finding_id):
            folder = self.folder_of_uri(uri)
            if folder is not None:
                return folder, uri, tracked.finding
        for folder in self.folders.values():
            for uri, findings in folder.findings.items():
                for f in findings:
                    if f.id == finding_id:
                        return folder, uri, f
        return None

    def dismiss(self, finding_id: str, reason: str) -> Finding:
        found = self.find_finding(finding_id)
        if found is None:
            raise UsageError(f"no current finding with id {finding_id!r}")
        folder, _uri, finding = found
        if folder.root is None:
            raise UsageError("the folder has not been reviewed yet")
        from redline.store.dismissals import DismissalStore

        DismissalStore(folder.root).add(finding, reason)
        self.forget(finding_id)
        return finding

    def forget(self, finding_id: str) -> None:
        """Never show this finding again in this session (fixed or dismissed)."""
        touched = set(self.tracker.close(finding_id))
        for folder in self.folders.values():
            for uri, findings in folder.findings.items():
                kept = [f for f in findings if f.id != finding_id]
                if len(kept) != len(findings):
                    folder.findings[uri] = kept
                    touched.add(uri)
            if folder.review is not None:
                folder.review.findings = [f for f in folder.review.findings if f.id != finding_id]
        for uri in touched:
            folder_of = self.folder_of_uri(uri)
            if folder_of is not None:
                self.publish(folder_of, uri)


server = RedlineServer()


# -- lifecycle ---------------------------------------------------------------------------------


@server.feature(types.INITIALIZE)
def on_initialize(ls: RedlineServer, params: types.InitializeParams) -> None:
    # Only what the client sent: no git, no engine import (initialize must answer at once).
    ls.settings = merge_settings(ls.settings, params.initialization_options)


@server.feature(types.INITIALIZED)
async def on_initialized(ls: RedlineServer, params: types.InitializedParams) -> None:
    ls.loop = asyncio.get_running_loop()
    # detect-secrets (~0.2 s of imports) is loaded now, off the event loop: the first message
    # redacted on the loop (a review's first state notification) must not wait for it.
    ls.loop.run_in_executor(None, engine.load_frozen, "redaction", get_redactor().load_plugins)
    for warning in ls.settings.warnings:
        ls.log_message(f"Redline: {warning}", types.MessageType.Warning)
    await _pull_configuration(ls)
    await _watch_files(ls)


async def _pull_configuration(ls: RedlineServer) -> None:
    caps = ls.client_capabilities.workspace
    if not (caps and caps.configuration):
        return
    try:
        # Shielded: a cancelled task with a pending server→client request breaks pygls 2.1.1.
        result = await asyncio.shield(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="redline")])
            )
        )
    except Exception as exc:  # a client without configuration support answers an error
        log.info("workspace/configuration not available: %s", exc)
        return
    before = ls.settings
    for item in result or []:
        ls.settings = merge_settings(ls.settings, item)
    for warning in ls.settings.warnings[len(before.warnings) :]:
        ls.log_message(f"Redline: {warning}", types.MessageType.Warning)
    if ls.settings != before:
        ls.republish_all()


async def _watch_files(ls: RedlineServer) -> None:
    caps = ls.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps else None
    if not (watched and watched.dynamic_registration):
        return
    registration = types.Registration(
        id=f"redline-watch-{uuid.uuid4().hex[:8]}",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
        ),
    )
    try:
        await asyncio.shield(
            ls.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        )
    except Exception as exc:
        log.info("file watching not available: %s", exc)


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: RedlineServer, params: None) -> None:
    # Worker threads are joined at interpreter exit: stop them now, or `exit` would wait for a
    # model review to finish.
    for job in ls.registry.running():
        job.cancel("the server is shutting down")
    for folder in ls.folders.values():
        if folder.save_timer is not None:
            folder.save_timer.cancel()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_configuration(ls: RedlineServer, params: types.DidChangeConfigurationParams) -> None:
    if isinstance(params.settings, dict) and params.settings:
        before = ls.settings
        ls.settings = merge_settings(ls.settings, params.settings)
        if ls.settings != before:
            ls.republish_all()
    else:
        await _pull_configuration(ls)


@server.feature(DEBUG_INFO)
def debug_info(ls: RedlineServer, params: Any) -> dict[str, Any]:
    """For tests and bug reports: what is loaded and running (never secrets). With
    `probeStdout`, first write to stdout the ways a stray print or a child process would: the
    guard in `main` must send all of it to stderr, or the client's connection breaks."""
    if getattr(params, "probeStdout", False):
        sys.stdout.write("redline: stdout probe (sys.stdout, as print() would)\n")
        sys.stdout.flush()
        os.write(1, b"redline: stdout probe (fd 1)\n")
    return {
        "version": __version__,
        "pid": os.getpid(),
        "litellmLoaded": "litellm" in sys.modules,
        "engineLoaded": "redline.review.pipeline" in sys.modules,
        "positionEncoding": ls.encoding,
        "running": [
            {"taskId": j.task_id, "folder": j.folder, "scope": j.request.kind}
            for j in ls.registry.running()
        ],
        "settings": {
            "minSeverity": ls.settings.min_severity.value,
            "staleDisplay": ls.settings.stale_display,
            "autoReviewOnSave": ls.settings.auto_review_on_save,
        },
    }


# -- commands ----------------------------------------------------------------------------------


def _arg(args: tuple[Any, ...]) -> dict[str, Any]:
    """Commands take one object argument; clients that send none get {}."""
    if not args or args[0] is None:
        return {}
    first = args[0]
    if isinstance(first, dict):
        return first
    if isinstance(first, str):
        return {"value": first}
    raise UsageError("expected one object argument")


def _command(ls: RedlineServer, fn: Callable[[], Any]) -> Any:
    """Run a command body; a user error becomes a message, not a JSON-RPC failure trace."""
    try:
        return fn()
    except RedlineError as exc:
        ls.show_message(f"Redline: {exc}")
        return {"error": str(exc)}


@server.command("redline.review")
def cmd_review(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        request = review_command(args[0] if args else None)
        folder = ls.folder_for(request.folder)
        return {"taskId": start_review(ls, folder, request.request).task_id}

    result: dict[str, Any] = _command(ls, run)
    return result


@server.command("redline.ask")
def cmd_ask(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        request = ask_command(args[0] if args else None)
        folder = ls.folder_for(request.folder)
        return {"taskId": start_review(ls, folder, request.request).task_id}

    result: dict[str, Any] = _command(ls, run)
    return result


@server.command("redline.rerun")
def cmd_rerun(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        data = _arg(args)
        folder = ls.folder_for(data.get("folder") or data.get("uri"))
        request = folder.last_request
        if request is None:
            raise UsageError("nothing to re-run yet: start a review first (redline.review)")
        return {"taskId": start_review(ls, folder, request).task_id}

    result: dict[str, Any] = _command(ls, run)
    return result


@server.command("redline.cancel")
def cmd_cancel(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    data = _arg(args)
    task_id = data.get("taskId") or data.get("task_id") or data.get("value")
    if task_id:
        jobs = [j for j in [ls.registry.get(str(task_id))] if j is not None]
    else:
        jobs = ls.registry.running()
    for job in jobs:
        job.cancel("cancelled by the user")
        ls.log_message(f"Redline: cancelling review {job.task_id}")
    return {"cancelled": [j.task_id for j in jobs]}


@server.command("redline.clear")
def cmd_clear(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    for folder in ls.folders.values():
        ls.clear_folder(folder)
    ls.tracker.clear()
    return {"cleared": True}


def _id_arg(args: tuple[Any, ...]) -> str:
    """A finding id from `{id}` or from fixes.py's positional `[uri, id]`."""
    if len(args) >= 2 and isinstance(args[1], str):
        return args[1]
    data = _arg(args)
    value = data.get("id") or data.get("findingId") or data.get("value")
    if not value:
        raise UsageError("which finding? pass {id: 'RL-...'}")
    return str(value)


@server.command(fixes.FIX_APPLIED)
def cmd_fix_applied(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    """Run by the client right after it applied a quick fix: the finding is done with."""

    def run() -> dict[str, Any]:
        finding_id = _id_arg(args)
        ls.forget(finding_id)
        return {"closed": finding_id}

    result: dict[str, Any] = _command(ls, run)
    return result


@server.command("redline.dismiss")
def cmd_dismiss(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        data = _arg(args)
        reason = str(data.get("reason") or "").strip()
        ids = data.get("ids") or [_id_arg(args)]
        done = [ls.dismiss(str(i), reason).id for i in ids]
        return {"dismissed": done}

    result: dict[str, Any] = _command(ls, run)
    return result


@server.command(fixes.DISMISS)
def cmd_dismiss_finding(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        finding = ls.dismiss(_id_arg(args), "dismissed in the editor")
        return {"dismissed": [finding.id]}

    result: dict[str, Any] = _command(ls, run)
    return result


@server.command(fixes.DISMISS_FILE)
def cmd_dismiss_file(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        uri = args[0] if args and isinstance(args[0], str) else _arg(args).get("uri")
        if not uri:
            raise UsageError("which file? pass [uri]")
        reason = "dismissed in the editor (all findings in the file)"
        ids = [t.id for t in ls.tracker.visible(str(uri), "mark")]
        return {"dismissed": [ls.dismiss(i, reason).id for i in ids]}

    result: dict[str, Any] = _command(ls, run)
    return result


@server.command(fixes.SHOW_SUGGESTED)
def cmd_show_suggested(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        found = ls.find_finding(_id_arg(args))
        if found is None:
            raise UsageError("that finding is no longer current")
        finding = found[2]
        code = finding.improved_code or ""
        ls.show_message(
            f"Redline suggests for {finding.file}: {finding.title}\n\n{code}",
            types.MessageType.Info,
        )
        return {"id": finding.id, "improvedCode": code}

    result: dict[str, Any] = _command(ls, run)
    return result


@server.command("redline.export")
def cmd_export(ls: RedlineServer, *args: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        from redline.report import render

        data = _arg(args)
        fmt = str(data.get("format") or "markdown").lower()
        if fmt not in ("markdown", "json", "json-simple", "sarif"):
            raise UsageError(f"unknown export format {fmt!r}; use markdown, json or sarif")
        folder = ls.folder_for(data.get("folder"))
        review = folder.review
        if review is None:
            raise UsageError("nothing to export yet: run a review first")
        closed = {f.id for f in review.findings if ls.tracker.is_closed(f.id)}
        shown = review.model_copy(
            update={"findings": [f for f in review.findings if f.id not in closed]}
        )
        text = render(shown, fmt)
        raw = data.get("path")
        if not raw:
            return {"format": fmt, "content": text}
        target = Path(str(raw)).expanduser()
        if not target.is_absolute():
            target = (folder.root or folder.path) / target
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
        return {"format": fmt, "path": str(target), "findings": len(shown.findings)}

    result: dict[str, Any] = _command(ls, run)
    return result


# -- reviews -----------------------------------------------------------------------------------


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
    previous = ls.registry.start(job)
    if previous is not None:
        ls.log_message(
            f"Redline: review {previous.task_id} ({previous.request.describe()}) cancelled: "
            f"a new review {task_id} ({request.describe()}) was requested"
        )
    folder.last_request = request
    ls._last_folder = folder.uri
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
    ls.state(
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
    if not (window and window.work_done_progress):
        return
    try:
        await asyncio.shield(ls.work_done_progress.create_async(job.token))
    except Exception as exc:
        log.info("work-done progress not available: %s", exc)
        return
    if job.cancelled:
        return
    ls.work_done_progress.begin(
        job.token,
        types.WorkDoneProgressBegin(
            title="Redline review",
            message=job.request.describe(),
            cancellable=True,
            percentage=0,
        ),
    )
    job.progress_begun = True


def _end_progress(ls: RedlineServer, job: ReviewJob, message: str) -> None:
    if job.progress_begun:
        ls.work_done_progress.end(job.token, types.WorkDoneProgressEnd(message=message))
        job.progress_begun = False
    ls.work_done_progress.tokens.pop(job.token, None)


async def _run_job(
    ls: RedlineServer, folder: Folder, job: ReviewJob, previous: ReviewJob | None
) -> None:
    if previous is not None and previous.task is not None and not previous.task.done():
        await asyncio.wait({previous.task}, timeout=SUPERSEDE_WAIT)
    ls.state(folder, job, "started")
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
        )
        folder.root = outcome.root
        review, texts = outcome.review, outcome.texts
        if not ls.registry.is_current(job):
            raise Cancelled("superseded")
        _finish(ls, folder, job, review, texts, snapshot)
        counts = {s.value: n for s, n in review.counts_by_severity().items()}
        end_message = f"{len(review.findings)} findings"
        ls.state(
            folder,
            job,
            "finished",
            stage="done",
            label=review.scope_label,
            counts=counts,
            findings=len(review.findings),
            tokens=review.coverage.tokens,
            costUsd=review.coverage.cost_usd,
            coverage=review.coverage.model_dump(mode="json"),
            summary=review.summary,
        )
    except asyncio.CancelledError:
        reason = job.cancel_reason or "cancelled"
        end_message = f"cancelled: {reason}"
        ls.log_message(f"Redline: review {job.task_id} cancelled ({reason})")
        ls.state(folder, job, "cancelled", reason=reason)
        if not job.cancelled:  # the server itself is shutting down
            raise
    except RedlineError as exc:
        end_message = f"failed: {exc.message}"
        ls.show_message(f"Redline: {exc}")
        ls.state(folder, job, "failed", error=str(exc))
    except Exception as exc:
        log.exception("review %s failed", job.task_id)
        end_message = f"failed: {type(exc).__name__}"
        ls.show_message(f"Redline: the review failed unexpectedly: {type(exc).__name__}: {exc}")
        ls.state(folder, job, "failed", error=f"{type(exc).__name__}: {exc}")
    finally:
        _end_progress(ls, job, end_message)
        ls.registry.finish(job)


def _snapshot(ls: RedlineServer, folder: Folder) -> dict[str, Snapshot]:
    prefix = folder.uri.rstrip("/") + "/"
    return {
        uri: Snapshot(uri, doc.version, doc.source)
        for uri, doc in ls.workspace.text_documents.items()
        if uri.startswith(prefix)
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
    for path, findings in by_file.items():
        uri = publish.path_uri(root, path)
        if uri is not None:
            ls.show_file(folder, uri, findings, texts.get(path))


def _finish(
    ls: RedlineServer,
    folder: Folder,
    job: ReviewJob,
    review: Review,
    texts: dict[str, str],
    snapshot: dict[str, Snapshot],
) -> None:
    """Publish the final findings; files that no longer have any are cleared."""
    root = folder.root or folder.path
    by_uri: dict[str, list[Finding]] = {}
    paths: dict[str, str] = {}
    for finding in review.findings:
        if finding.line is None:
            continue  # unanchored: in the report and the sidebar, never on a guessed line
        uri = publish.path_uri(root, finding.file)
        if uri is None:
            continue
        by_uri.setdefault(uri, []).append(finding)
        paths[uri] = finding.file
    for uri, before in snapshot.items():
        doc = ls.workspace.text_documents.get(uri)
        if uri in by_uri and doc is not None and doc.version != before.version:
            log.info("%s changed during the review: findings re-anchored", uri)
    for uri, findings in by_uri.items():
        ls.show_file(folder, uri, findings, texts.get(paths[uri]))
    for uri in (set(folder.published) | set(folder.findings)) - set(by_uri):
        folder.findings.pop(uri, None)
        ls.tracker.remove_file(uri)
        ls.publish(folder, uri)
    folder.review = review
    ls.schedule_findings(folder)


# -- progress cancel ---------------------------------------------------------------------------


@server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
def on_progress_cancel(ls: RedlineServer, params: types.WorkDoneProgressCancelParams) -> None:
    job = ls.registry.by_token(params.token)
    if job is not None:
        job.cancel("cancelled from the progress indicator")
        ls.log_message(f"Redline: cancelling review {job.task_id}")


# -- code actions and hover -------------------------------------------------------------------


def _points(ls: RedlineServer, uri: str, rng: types.Range) -> Range | None:
    doc = ls.tracker.document(uri)
    if doc is None:
        return None
    enc = ls.encoding
    start = from_client_units(doc.line_text(rng.start.line), rng.start.character, enc)
    end = from_client_units(doc.line_text(rng.end.line), rng.end.character, enc)
    return Range(rng.start.line, start, rng.end.line, end)


def _shown_at(ls: RedlineServer, uri: str, rng: Range) -> list[TrackedFinding]:
    floor = ls.settings.min_severity.rank
    return [
        t
        for t in ls.tracker.at(uri, rng, ls.settings.stale_display)
        if t.finding.severity.rank >= floor
    ]


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
)
def on_code_action(
    ls: RedlineServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    doc = ls.tracker.document(uri)
    rng = _points(ls, uri, params.range)
    if doc is None or rng is None:
        return None
    found = _shown_at(ls, uri, rng)
    if not found:
        return None
    path = found[0].finding.file
    specs = fixes.code_actions_for(found, doc.text, path, params.context.only, uri=uri)
    version = ls.workspace.get_text_document(uri).version if ls.is_open(uri) else None
    theirs = {
        publish.finding_id_of(d): d for d in params.context.diagnostics if d.source == "redline"
    }
    actions = []
    for spec in specs:
        edit = None
        if spec.edit is not None:
            fake = TrackedFinding(found[0].finding, *_unpack(spec.edit.range))
            text_edit = types.TextEdit(
                range=publish.client_range(fake, doc, ls.encoding, whole=True),
                new_text=spec.edit.new_text,
            )
            edit = _workspace_edit(ls, uri, version, text_edit)
        command = None
        if spec.command is not None:
            command = types.Command(
                title=spec.title, command=spec.command.name, arguments=list(spec.command.arguments)
            )
        diagnostics = [theirs[i] for i in spec.finding_ids if i in theirs]
        actions.append(
            types.CodeAction(
                title=spec.title,
                kind=spec.kind,
                diagnostics=diagnostics or None,
                edit=edit,
                command=command,
                is_preferred=spec.is_preferred or None,
            )
        )
    return actions


@server.feature(types.TEXT_DOCUMENT_HOVER)
def on_hover(ls: RedlineServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    doc = ls.tracker.document(uri)
    point = types.Range(start=params.position, end=params.position)
    rng = _points(ls, uri, point)
    if doc is None or rng is None:
        return None
    found = _shown_at(ls, uri, rng)
    if not found:
        return None
    from redline.lsp.hover import hover_markdown

    text = redact("\n\n---\n\n".join(hover_markdown(t.finding, t.stale) for t in found))
    caps = ls.client_capabilities.text_document
    formats = caps.hover.content_format if caps and caps.hover else None
    kind = (
        types.MarkupKind.Markdown
        if not formats or types.MarkupKind.Markdown in formats
        else types.MarkupKind.PlainText
    )
    return types.Hover(
        contents=types.MarkupContent(kind=kind, value=text),
        range=publish.client_range(found[0], doc, ls.encoding),
    )


def _unpack(rng: Range) -> tuple[int, int, int, int]:
    return rng.start_line, rng.start_char, rng.end_line, rng.end_char


def _workspace_edit(
    ls: RedlineServer, uri: str, version: int | None, edit: types.TextEdit
) -> types.WorkspaceEdit:
    caps = ls.client_capabilities.workspace
    versioned = bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)
    if versioned:
        # With the version, a client refuses the edit if the buffer moved on since.
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=[edit],
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: [edit]})


# -- documents ---------------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def on_open(ls: RedlineServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    folder = ls.folder_of_uri(uri)
    if folder is None or ls.tracker.document(uri) is None:
        return
    if ls.tracker.text(uri) != params.text_document.text:
        ls.tracker.reanchor(uri, params.text_document.text)
    ls.publish(folder, uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def on_change(ls: RedlineServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if ls.tracker.document(uri) is None:
        return
    changed = False
    for change in params.content_changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            rng = Range(
                change.range.start.line,
                change.range.start.character,
                change.range.end.line,
                change.range.end.character,
            )
            result = ls.tracker.apply_change(uri, rng, change.text, ls.encoding)
        else:
            result = ls.tracker.reanchor(uri, change.text)
        changed = changed or result.changed
    folder = ls.folder_of_uri(uri)
    if changed and folder is not None:
        ls.publish(folder, uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: RedlineServer, params: types.DidCloseTextDocumentParams) -> None:
    # The buffer may be discarded unsaved: from now on the file on disk is the truth.
    _refresh_from_disk(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def on_save(ls: RedlineServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if not ls.is_open(uri):
        _refresh_from_disk(ls, uri)
    if ls.settings.auto_review_on_save:
        _schedule_auto_review(ls, uri)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def on_watched(ls: RedlineServer, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        if not ls.is_open(change.uri):  # an open buffer is the truth until it is closed
            _refresh_from_disk(ls, change.uri)


def _refresh_from_disk(ls: RedlineServer, uri: str) -> None:
    folder = ls.folder_of_uri(uri)
    if folder is None or ls.tracker.document(uri) is None:
        return
    text = ls.current_text(uri)
    if text is None:
        folder.findings.pop(uri, None)
        ls.tracker.remove_file(uri)
    elif text != ls.tracker.text(uri):
        ls.tracker.reanchor(uri, text)
    ls.publish(folder, uri)


def _schedule_auto_review(ls: RedlineServer, uri: str) -> None:
    try:
        folder = ls.folder_for(uri)
    except RedlineError:
        return
    if folder.save_timer is not None:
        folder.save_timer.cancel()
    request = folder.last_request or ReviewRequest(ScopeRequest())

    def fire() -> None:
        folder.save_timer = None
        ls.log_message(f"Redline: file saved, re-reviewing ({request.describe()})")
        start_review(ls, folder, request)

    folder.save_timer = asyncio.get_running_loop().call_later(ls.settings.save_debounce, fire)


# -- entry point -------------------------------------------------------------------------------


def _configure_logging() -> None:
    level = os.environ.get("REDLINE_LSP_LOG", "INFO").upper()
    handler: logging.Handler
    log_file = os.environ.get("REDLINE_LSP_LOG_FILE")
    handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    protect(handler)  # every record, ours and the libraries', is redacted before it is written
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level, logging.INFO))
    # pygls logs every message body at INFO: code under review would end up in the log.
    logging.getLogger("pygls").setLevel(logging.WARNING)


def _private_stdout() -> BinaryIO:
    """A private handle on the real stdout for JSON-RPC; file descriptor 1 then points at
    stderr, so neither a stray print nor a child process or C library writing to fd 1 can
    put a byte into the protocol stream."""
    try:
        fd = sys.stdout.fileno()
        private = os.dup(fd)
        os.dup2(sys.stderr.fileno(), fd)
    except (AttributeError, OSError, ValueError):  # no real descriptors (embedded, tests)
        return sys.stdout.buffer
    return os.fdopen(private, "wb")


def main() -> int:
    """`redline lsp`: serve over stdio until the client says exit."""
    # The real stdout carries JSON-RPC only: keep its binary stream for pygls and point
    # sys.stdout at stderr, so a stray print (ours or a library's) cannot corrupt the stream.
    rpc_in = sys.stdin.buffer
    rpc_out = _private_stdout()
    sys.stdout = sys.stderr
    _configure_logging()
    # What is loaded now lives as long as the server: frozen, a full collection (which stops
    # every thread, the event loop included) no longer rescans it: ~30-70 ms each otherwise.
    # (Importing with the collector off would start ~40 ms sooner but keeps ~10 MB of import
    # garbage resident for good: not worth it.)
    gc.freeze()
    # The engine runs in a worker thread and keeps the CPU busy for a whole review; with
    # CPython's default 5 ms switch interval, each of the several thread hand-offs a request
    # needs (pygls reads stdin in its thread pool) can wait that long for the GIL. 1 ms keeps
    # hovers and code actions quick during a review, at a negligible cost to the review.
    sys.setswitchinterval(0.001)
    log.info("redline %s language server starting (pid %d)", __version__, os.getpid())
    server.start_io(rpc_in, rpc_out)
    return 0
