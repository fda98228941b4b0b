"""The server object: the state every handler shares, and the few helpers they all use.

`RedlineServer` holds the editor settings, the registry of running reviews, the finding
tracker and the workspace folders (what is shown in each: `diagnostics.py`, `sidebar.py`); it
finds the folder a command is about, reads a document's current text, and sends log and user
messages (redacted). The handlers live in the modules named in `server.py`, which builds the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sysconfig
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from redline.errors import UsageError
from redline.lsp import publish, uris
from redline.lsp.folders import Folder
from redline.lsp.memory_refresh import MemoryRefresher
from redline.lsp.protocol import RedlineProtocol
from redline.lsp.reviews import ReviewRegistry
from redline.lsp.settings import LspSettings
from redline.lsp.tracking import FindingTracker
from redline.redaction import redact

if TYPE_CHECKING:
    from pygls.server import ServerErrors

_WARNINGS = (types.MessageType.Error, types.MessageType.Warning)
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


class RedlineServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "redline",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=RedlineProtocol,
        )
        self.settings = LspSettings()
        self.registry = ReviewRegistry()
        self.tracker = FindingTracker()
        self.uris = uris.ClientUris()  # documents are keyed by uris.key; answered as spelled
        self.folders: dict[str, Folder] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.findings_pending: set[str] = set()  # folders whose redline/findings is due
        self.last_folder: str | None = None  # the folder reviewed last (commands' default)
        # The client left a `window/workDoneProgress/create` unanswered (jobs.py): reviews
        # run without progress instead of waiting for it again, until it answers.
        self.progress_create_unanswered = False
        self.memory = MemoryRefresher(self)  # project memory refreshed in the background

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
            # Compared by key: the hint may be spelled otherwise than the folder (`c++` and
            # `c%2B%2B`, `%c3%a9` and `%C3%A9`).
            hint_key = uris.key(hint)
            for uri in sorted(candidates, key=lambda c: len(uris.key(c)), reverse=True):
                folder_key = uris.key(uri)
                if hint_key == folder_key or hint_key.startswith(folder_key.rstrip("/") + "/"):
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

    def open_document(self, uri: str) -> TextDocument | None:
        """The client's open buffer of `uri` (any spelling), or None: never the file on disk.
        pygls keys its documents by the client's own string (2.1.1: unquoted), so the buffer
        is looked up by the spelling the client opened it with, and checked by key."""
        key = uris.key(uri)
        documents = self.workspace.text_documents
        spelled = self.uris.spelling(key)
        for name in dict.fromkeys((spelled, unquote(spelled), uri)):
            doc = documents.get(name)
            if doc is not None and uris.key(doc.uri) == key:
                return doc
        return None

    def is_open(self, uri: str) -> bool:
        return self.open_document(uri) is not None

    def current_text(self, uri: str) -> str | None:
        """The open buffer's text, else the file on disk (None if gone)."""
        doc = self.open_document(uri)
        if doc is not None:
            return doc.source
        path = publish.uri_path(uri)
        lines = publish.read_lines(path) if path is not None else None
        return None if lines is None else "".join(lines)

    @property
    def exit_code(self) -> int:
        """The process's exit code: what `exit` said (0 after shutdown, else 1); 0 when the
        client closed the stream without a word."""
        protocol = self.protocol
        code = protocol.exit_code if isinstance(protocol, RedlineProtocol) else None
        return 0 if code is None else code

    @property
    def encoding(self) -> publish.Encoding:
        return publish.encoding_of(self.workspace.position_encoding)

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        # pygls' read loop reports a frame it could not read as `JsonRpcException` itself
        # (the other sources are its subclasses): answered as JSON-RPC says (protocol.py),
        # where pygls would pop up "Error in server" and stop its thread pool.
        if source is JsonRpcException and isinstance(self.protocol, RedlineProtocol):
            self.protocol.answer_unreadable(error)
            return
        super().report_server_error(error, source)

    # -- notifications -------------------------------------------------------------------

    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        message = redact(message)
        log.info("%s", message)
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show_message(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        message = redact(message)
        # Logged at the message's own level: an editor shows the server's stderr (Kate puts every
        # line in its output pane), and "no findings" is no warning.
        level = logging.WARNING if kind in _WARNINGS else logging.INFO
        log.log(level, "%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))
