"""`redline lsp`: the language server over stdio (pygls 2): the server object, its lifecycle
(initialize, settings, file watching, shutdown, `redline/debugInfo`) and `main`.

Features live in the module of their job, each declaring its handlers on a `Handlers`
(handlers.py) that `build_server` registers here:
- commands.py: `workspace/executeCommand` (review, ask, rerun, cancel, clear, dismiss, export,
  and the commands code actions carry);
- jobs.py: running a review in a worker thread, its work-done progress and
  `redline/reviewState` notifications, cancel from the progress indicator;
- display.py: what is shown per folder: diagnostics and the sidebar's `redline/findings`;
- actions.py: code actions and hovers; documents.py: open, edit, save, close, watched files.
The modules they use: reviews.py (editor requests, the registry of running reviews), engine.py
(the engine in a worker thread), publish.py (findings → diagnostics in the negotiated
encoding), tracking.py (findings that follow edits), fixes.py and hover.py, settings.py (editor
settings; never the model), store/dismissals.py.

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
import uuid
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from redline.errors import UsageError
from redline.lsp import actions, commands, display, documents, engine, jobs, publish
from redline.lsp.display import Folder
from redline.lsp.handlers import Handlers
from redline.lsp.reviews import ReviewRegistry
from redline.lsp.settings import LspSettings, merge_settings
from redline.lsp.tracking import FindingTracker
from redline.redaction import get_redactor, redact
from redline.redaction.logfilter import protect

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

DEBUG_INFO = "redline/debugInfo"


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
        self.findings_pending: set[str] = set()  # folders whose redline/findings is due
        self.last_folder: str | None = None  # the folder reviewed last (commands' default)

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
        if chosen is None and self.last_folder in candidates:
            chosen = self.last_folder
        chosen = chosen or candidates[0]
        folder = self.folders.get(chosen)
        if folder is None:
            path = publish.uri_path(chosen)
            if path is None:
                raise UsageError(f"{chosen} is not a local folder")
            folder = self.folders[chosen] = Folder(uri=chosen, path=path)
        return folder

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

    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        message = redact(message)
        log.info("%s", message)
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show_message(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        message = redact(message)
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))


HANDLERS = Handlers()  # the lifecycle's; the other modules declare their own


# -- lifecycle ---------------------------------------------------------------------------------


@HANDLERS.feature(types.INITIALIZE)
def on_initialize(ls: RedlineServer, params: types.InitializeParams) -> None:
    # Only what the client sent: no git, no engine import (initialize must answer at once).
    ls.settings = merge_settings(ls.settings, params.initialization_options)


@HANDLERS.feature(types.INITIALIZED)
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
        display.republish_all(ls)


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


@HANDLERS.feature(types.SHUTDOWN)
def on_shutdown(ls: RedlineServer, params: None) -> None:
    # Worker threads are joined at interpreter exit: stop them now, or `exit` would wait for a
    # model review to finish.
    for job in ls.registry.running():
        job.cancel("the server is shutting down")
    for folder in ls.folders.values():
        if folder.save_timer is not None:
            folder.save_timer.cancel()


@HANDLERS.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_configuration(ls: RedlineServer, params: types.DidChangeConfigurationParams) -> None:
    if isinstance(params.settings, dict) and params.settings:
        before = ls.settings
        ls.settings = merge_settings(ls.settings, params.settings)
        if ls.settings != before:
            display.republish_all(ls)
    else:
        await _pull_configuration(ls)


@HANDLERS.feature(DEBUG_INFO)
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


def build_server() -> RedlineServer:
    """The server with every module's handlers registered."""
    ls = RedlineServer()
    for handlers in (
        HANDLERS,
        commands.HANDLERS,
        jobs.HANDLERS,
        actions.HANDLERS,
        documents.HANDLERS,
    ):
        handlers.register(ls)
    return ls


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
    build_server().start_io(rpc_in, rpc_out)
    return 0
