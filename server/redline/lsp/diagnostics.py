"""Diagnostics per workspace folder: a review's findings placed in each file and published.

`show_file` places a file's findings (without the dismissed ones) in its current text through
the tracker (`tracking.py`, which moves them with edits); `publish` sends them as
`textDocument/publishDiagnostics` in the negotiated encoding (publish.py converts) and
schedules the sidebar's update (sidebar.py); `publish_soon` coalesces the publishes of a burst
of edits.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types

from redline.lsp import publish as lsp_publish
from redline.lsp import uris
from redline.lsp.folders import is_shown
from redline.lsp.sidebar import FINDINGS_INTERVAL, schedule_findings

if TYPE_CHECKING:
    from redline.lsp.folders import Folder
    from redline.lsp.language_server import RedlineServer
    from redline.model import Finding
    from redline.store.dismissals import Dismissed


def folder_of_uri(ls: RedlineServer, uri: str) -> Folder | None:
    key = uris.key(uri)  # folder.findings is keyed by document keys, not by a spelling
    return next((f for f in ls.folders.values() if key in f.findings), None)


def show_file(
    ls: RedlineServer,
    folder: Folder,
    uri: str,
    findings: list[Finding],
    text: str | None,
    stored: Dismissed | None = None,
) -> None:
    """Place `findings` in the current text of `uri` and publish them (`stored`: the
    dismissals, read once for many files; None: read now)."""
    doc = ls.open_document(uri)
    if doc is not None:
        text = doc.source  # the buffer wins over disk
    if text is None:
        # The file is gone (deleted during the review): nothing to point at.
        folder.findings.pop(uri, None)
        ls.tracker.remove_file(uri)
        publish(ls, folder, uri)
        return
    kept = drop_dismissed(ls, folder, findings, text, stored)
    folder.findings[uri] = kept
    ls.tracker.set_findings(uri, text, kept)
    publish(ls, folder, uri)


def publish(ls: RedlineServer, folder: Folder, uri: str) -> None:
    doc = ls.tracker.document(uri)
    diagnostics: list[types.Diagnostic] = []
    if doc is not None and uri in folder.findings:
        # The files of the change (one finding names its file): per file, not per finding,
        # since this runs on every edit that moves a finding.
        known = {fs[0].file for fs in folder.findings.values() if fs}
        for tracked in ls.tracker.visible(uri, ls.settings.stale_display):
            finding = tracked.finding
            if finding.severity.rank < ls.settings.min_severity.rank:
                continue
            if not is_shown(folder, finding.id):
                continue  # another run's: the user chose to see only some runs
            rng = lsp_publish.client_range(lsp_publish.focus(tracked, doc), doc, ls.encoding)
            related = lsp_publish.related_information(finding, folder.root or folder.path, known)
            for info in related:
                info.location.uri = ls.uris.spelling(info.location.uri)
            diagnostics.append(
                lsp_publish.to_diagnostic(finding, rng, stale=tracked.stale, related=related)
            )
    if not diagnostics and uri not in folder.published:
        return  # never touch a file Redline has not published to
    buffer = ls.open_document(uri)
    version = buffer.version if buffer is not None else None
    spelled, before = ls.uris.publish_as(uri)  # as the client spelled it: editors compare text
    if before is not None and uri in folder.published:
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=before, diagnostics=[])
        )
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=spelled, diagnostics=diagnostics, version=version)
    )
    if diagnostics:
        folder.published.add(uri)
    else:
        folder.published.discard(uri)
    schedule_findings(ls, folder, uri)


def publish_soon(ls: RedlineServer, folder: Folder, uri: str) -> None:
    """Publish `uri`'s diagnostics after an edit moved its findings: this loop turn, or during
    a burst of edits at most once per FINDINGS_INTERVAL for the folder's edited files. Each
    publish costs a serialization and a write the client must read; a storm of keystrokes
    needs only the last. Hovers and code actions need none of it: they read the tracker,
    which every edit updates at once (and editors move their markers with the text)."""
    folder.publish_due.add(uri)
    if folder.publish_timer is not None:
        return
    loop = asyncio.get_running_loop()
    wait = max(0.0, folder.published_at + FINDINGS_INTERVAL - loop.time())
    folder.publish_timer = loop.call_later(wait, _publish_due, ls, folder)


def _publish_due(ls: RedlineServer, folder: Folder) -> None:
    folder.publish_timer = None
    folder.published_at = asyncio.get_running_loop().time()
    due = sorted(folder.publish_due)
    folder.publish_due.clear()
    for uri in due:
        publish(ls, folder, uri)


def republish_all(ls: RedlineServer) -> None:
    for folder in ls.folders.values():
        schedule_findings(ls, folder)  # the settings changed what every file lists
        for uri in set(folder.findings) | set(folder.published):
            publish(ls, folder, uri)


def republish_folder(ls: RedlineServer, folder: Folder) -> None:
    """Publish every file of the folder again, and its whole list (the runs shown changed)."""
    schedule_findings(ls, folder)
    for uri in set(folder.findings) | set(folder.published):
        publish(ls, folder, uri)


def clear_folder(ls: RedlineServer, folder: Folder) -> None:
    for uri in set(folder.published) | set(folder.findings):
        folder.findings.pop(uri, None)
        ls.tracker.remove_file(uri)
        publish(ls, folder, uri)
    folder.review = None
    folder.runs.clear()
    folder.run_index = {}
    folder.shown_runs = None
    schedule_findings(ls, folder)


# -- dismissed findings are not shown ---------------------------------------------------------


def dismissed_ids(ls: RedlineServer, folder: Folder) -> Dismissed:
    """What `.redline/dismissed.toml` dismisses (read afresh: a `git pull` may have changed
    it)."""
    from redline.store.dismissals import DismissalError, DismissalStore, Dismissed

    if folder.root is None:
        return Dismissed()
    try:
        return DismissalStore(folder.root).dismissed()
    except DismissalError as exc:
        ls.log_message(f"Redline: {exc.message}", types.MessageType.Warning)
        return Dismissed()


def drop_dismissed(
    ls: RedlineServer,
    folder: Folder,
    findings: list[Finding],
    text: str,
    stored: Dismissed | None = None,
) -> list[Finding]:
    """`findings` of one file without the dismissed ones (the file's current `text` holds
    its inline markers)."""
    from redline.store.dismissal_matching import split_dismissed

    stored = dismissed_ids(ls, folder) if stored is None else stored
    kept, _ = split_dismissed(findings, stored, lambda _path: text)
    return kept
