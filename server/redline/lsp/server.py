"""`redline lsp`: the language server over stdio (pygls 2): the server object, its lifecycle
(initialize, settings, file watching, shutdown, `redline/debugInfo`) and `main`.

Features live in the module of their job, each declaring its handlers on a `Handlers`
(handlers.py) that `build_server` registers here:
- commands.py: `workspace/executeCommand` (review, ask, rerun, cancel, clear, dismiss, export,
  and the commands code actions carry);
- debates.py: `redline.debate` (a debate run as a job) and steering it (`debateInterject`,
  `debateStop`); debate_stream.py forwards its events as `redline/debate`;
- jobs.py: running a review in a worker thread, its work-done progress and
  `redline/reviewState` notifications, cancel from the progress indicator;
- diagnostics.py: what is shown per folder, as diagnostics; sidebar.py: the sidebar's list,
  `redline/findings`; dismissals.py: dismissing and forgetting findings;
- actions.py: code actions and hovers; documents.py: open, edit, save, close, watched files;
- queries.py: requests for an editor's views (`redline/report`, `redline/refs` for the
  pickers, `redline/userConfig`).
The modules they use: reviews.py (editor requests, the registry of running reviews), engine.py
(the engine in a worker thread), publish.py (findings → diagnostics in the negotiated
encoding), tracking.py (findings that follow edits; document_findings.py holds one document's,
shifting.py moves them with an edit), fixes.py and hover.py, settings.py (editor settings; never
the model), store/dismissals.py and store/dismissal_matching.py.

Start-up does no git work and imports nothing heavy: the review engine is imported when the
first review starts, and litellm only when a model review calls a model. What needs pydantic or
tree-sitter (the model, anchoring, hovers, dismissals, fix checks) is imported where it is first
used, so `initialize` is answered after little more than pygls' own import.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import uuid
from typing import Any, BinaryIO

from lsprotocol import types

from redline.lsp import (
    actions,
    commands,
    debates,
    diagnostics,
    documents,
    engine,
    jobs,
    memory_process,
    queries,
)
from redline.lsp.handlers import Handlers, QuietCommandErrors
from redline.lsp.language_server import RedlineServer, __version__
from redline.lsp.protocol import RoutineAtInfo
from redline.lsp.settings import merge_settings
from redline.redaction import get_redactor
from redline.redaction.logfilter import protect

log = logging.getLogger("redline.lsp")


DEBUG_INFO = "redline/debugInfo"


HANDLERS = Handlers()  # the lifecycle's; the other modules declare their own


# -- lifecycle ---------------------------------------------------------------------------------


@HANDLERS.feature(types.INITIALIZE)
def on_initialize(ls: RedlineServer, params: types.InitializeParams) -> None:
    # Only what the client sent: no git, no engine import (initialize must answer at once).
    ls.settings = merge_settings(ls.settings, params.initialization_options)


@HANDLERS.feature(types.INITIALIZED)
async def on_initialized(ls: RedlineServer, params: types.InitializedParams) -> None:
    ls.loop = asyncio.get_running_loop()
    ls.log_message(f"Redline {__version__} language server started (pid {os.getpid()})")
    # detect-secrets (~0.2 s of imports) is loaded now, off the event loop: the first message
    # redacted on the loop (a review's first state notification) must not wait for it.
    ls.loop.run_in_executor(None, engine.load_frozen, "redaction", get_redactor().load_plugins)
    for warning in ls.settings.warnings:
        ls.log_message(f"Redline: {warning}", types.MessageType.Warning)
    await _pull_configuration(ls)
    ls.memory.start()  # after the settings: they may turn it off
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
        diagnostics.republish_all(ls)
        ls.memory.settings_changed()


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
    ls.memory.stop()  # a memory build running is killed, with what it started


@HANDLERS.feature(types.EXIT)
def on_exit(ls: RedlineServer, params: None) -> None:
    # Leave now. pygls would raise SystemExit in the event loop, and asyncio.run then joins
    # the worker threads — a review winding down after `shutdown` cancelled it: seconds for an
    # editor waiting on our exit. What a review keeps is already written (task records are
    # atomic), and `shutdown` cancelled it, killing its analyzer processes.
    code = ls.exit_code
    analyzers = sys.modules.get("redline.analyzers.base")  # loaded once a review ran
    if analyzers is not None:
        analyzers.kill_running()
    memory_process.kill_running()
    log.info("exit (code %d)", code)
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)


@HANDLERS.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_configuration(ls: RedlineServer, params: types.DidChangeConfigurationParams) -> None:
    if isinstance(params.settings, dict) and params.settings:
        before = ls.settings
        ls.settings = merge_settings(ls.settings, params.settings)
        if ls.settings != before:
            diagnostics.republish_all(ls)
            ls.memory.settings_changed()
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
        "memoryRefresh": ls.memory.describe(),
    }


# -- entry point -------------------------------------------------------------------------------


def _configure_logging() -> None:
    handler: logging.Handler
    log_file = os.environ.get("REDLINE_LSP_LOG_FILE")
    # Editors log every line a server writes to stderr as an error (Neovim does): there, only
    # warnings by default; the start-up line reaches the client as an Info `window/logMessage`.
    level = os.environ.get("REDLINE_LSP_LOG", "INFO" if log_file else "WARNING").upper()
    handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    protect(handler)  # every record, ours and the libraries', is redacted before it is written
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level, logging.INFO))
    # pygls logs every message body at INFO: code under review would end up in the log.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(QuietCommandErrors())
    logging.getLogger("pygls.protocol.json_rpc").addFilter(RoutineAtInfo())


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
        debates.HANDLERS,
        jobs.HANDLERS,
        actions.HANDLERS,
        documents.HANDLERS,
        queries.HANDLERS,
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
    server = build_server()
    try:
        server.start_io(rpc_in, rpc_out)
    finally:  # the client closed the stream without `exit`: no memory build outlives us
        memory_process.kill_running()
    return server.exit_code
