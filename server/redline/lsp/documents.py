"""Open documents and files on disk: findings follow what the user does with them.

An edit moves the findings below it and withdraws (or marks stale) the ones whose code it
touched (`tracking.py`) at once, and their diagnostics are published soon after (a burst of
edits publishes once: `diagnostics.publish_soon`); closing an unsaved buffer, a save, or a change
on disk reported by the client's file watcher re-anchors a file's findings in its text on disk.
With
`autoReviewOnSave`, a save re-runs the folder's last review after a short debounce.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types

from redline.errors import RedlineError
from redline.lsp import diagnostics, uris
from redline.lsp.handlers import Handlers
from redline.lsp.jobs import start_review
from redline.lsp.textlines import Range
from redline.requests import ReviewRequest, ScopeRequest

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer

HANDLERS = Handlers()


@HANDLERS.feature(types.TEXT_DOCUMENT_DID_OPEN)
def on_open(ls: RedlineServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = ls.uris.seen(params.text_document.uri)  # the key; the client's spelling is kept
    folder = diagnostics.folder_of_uri(ls, uri)
    if folder is None or ls.tracker.document(uri) is None:
        return
    if ls.tracker.text(uri) != params.text_document.text:
        ls.tracker.reanchor(uri, params.text_document.text)
    diagnostics.publish(ls, folder, uri)


@HANDLERS.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def on_change(ls: RedlineServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = ls.uris.seen(params.text_document.uri)
    ls.memory.activity()  # the user is typing: not idle
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
    folder = diagnostics.folder_of_uri(ls, uri)
    if changed and folder is not None:
        diagnostics.publish_soon(ls, folder, uri)  # a burst of edits: one publish


@HANDLERS.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: RedlineServer, params: types.DidCloseTextDocumentParams) -> None:
    # The buffer may be discarded unsaved: from now on the file on disk is the truth.
    _refresh_from_disk(ls, ls.uris.seen(params.text_document.uri))


@HANDLERS.feature(types.TEXT_DOCUMENT_DID_SAVE)
def on_save(ls: RedlineServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = ls.uris.seen(params.text_document.uri)
    ls.memory.saved(uri)
    if not ls.is_open(uri):
        _refresh_from_disk(ls, uri)
    if ls.settings.auto_review_on_save:
        _schedule_auto_review(ls, uri)


@HANDLERS.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def on_watched(ls: RedlineServer, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        uri = uris.key(change.uri)
        ls.memory.changed_on_disk(change.uri)
        if not ls.is_open(uri):  # an open buffer is the truth until it is closed
            _refresh_from_disk(ls, uri)


def _refresh_from_disk(ls: RedlineServer, uri: str) -> None:
    folder = diagnostics.folder_of_uri(ls, uri)
    if folder is None or ls.tracker.document(uri) is None:
        return
    text = ls.current_text(uri)
    if text is None:
        folder.findings.pop(uri, None)
        ls.tracker.remove_file(uri)
    elif text != ls.tracker.text(uri):
        ls.tracker.reanchor(uri, text)
    diagnostics.publish(ls, folder, uri)


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
