"""What Redline shows in the editor, per workspace folder: diagnostics and the sidebar's list.

A `Folder` (folders.py) holds the last finished review and the findings currently shown in each file
(placed by `tracking.py`, which moves them with edits). `show_file` and `publish` turn them
into `textDocument/publishDiagnostics` in the negotiated encoding; every change also schedules
a `redline/findings` notification, the list the sidebar draws (files, then findings with their
current lines; unanchored findings under their file without a line): the whole list for a new
review (`full: true`), else only the files whose findings changed (`full: false`), at most one
per loop turn and per FINDINGS_INTERVAL, so a burst of edits costs one small update.
Dismissing or fixing a finding (`dismiss`, `forget`) removes it everywhere it is shown.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from redline.errors import UsageError
from redline.lsp import publish as lsp_publish
from redline.lsp.folders import Folder
from redline.redaction import redact_data

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer
    from redline.model import Finding, Review
    from redline.store.dismissals import Dismissed

FINDINGS = "redline/findings"
FINDINGS_INTERVAL = 0.05  # s: at most one `redline/findings` per folder this often


def folder_of_uri(ls: RedlineServer, uri: str) -> Folder | None:
    return next((f for f in ls.folders.values() if uri in f.findings), None)


def shown_review(ls: RedlineServer, folder: Folder) -> Review | None:
    """The folder's last finished review as the editor shows it: without the findings fixed or
    dismissed since, nor those withdrawn because their code is no longer in the file (edited,
    or fixed and saved — also in an earlier server session), which a coverage note counts, and
    with each finding at the lines the editor shows it on now. The report view, the export and
    the finished counts all say what the sidebar lists."""
    review = folder.review
    if review is None:
        return None
    # Where each finding is now (1-based): its lines move with the user's edits.
    shown_at = {
        t.id: (t.start_line + 1, t.end_line + 1)
        for uri in folder.findings
        for t in ls.tracker.visible(uri, ls.settings.stale_display)
    }
    tracked_paths = {fs[0].file for fs in folder.findings.values() if fs}
    kept: list[Finding] = []
    withdrawn = 0
    for f in review.findings:
        if ls.tracker.is_closed(f.id):
            continue
        if f.line is not None and f.file in tracked_paths:
            if f.id not in shown_at:
                withdrawn += 1
                continue
            line, end_line = shown_at[f.id]
            f = f.model_copy(update={"line": line, "end_line": end_line})
        kept.append(f)
    coverage = review.coverage
    if withdrawn:
        note = (
            f"{withdrawn} finding{'s' if withdrawn != 1 else ''} of this review "
            f"{'are' if withdrawn != 1 else 'is'} not shown: the code "
            f"{'they are' if withdrawn != 1 else 'it is'} about has changed in the editor since"
        )
        coverage = coverage.model_copy(update={"notes": [*coverage.notes, note]})
    return review.model_copy(update={"findings": kept, "coverage": coverage})


def schedule_findings(ls: RedlineServer, folder: Folder, uri: str | None = None) -> None:
    """Send `redline/findings` soon: for `uri` only (its list changed), or the whole list.

    One notification covers every change of a loop turn, and during a burst of edits (a paste,
    a macro, a storm of keystrokes) at most one partial list goes out per FINDINGS_INTERVAL: an
    editor redraws its list on each. A whole list (a review's results) is never held back."""
    if uri is None:
        folder.full_due = True
    else:
        folder.changed.add(uri)
    loop = asyncio.get_running_loop()
    if folder.uri in ls.findings_pending:
        if uri is None and folder.findings_timer is not None:
            # A new list is not held back behind a burst: it goes out this loop turn.
            folder.findings_timer.cancel()
            folder.findings_timer = None
            loop.call_soon(_send_findings, ls, folder)
        return
    ls.findings_pending.add(folder.uri)
    wait = folder.sent_at + FINDINGS_INTERVAL - loop.time()
    if wait > 0 and not folder.full_due:
        folder.findings_timer = loop.call_later(wait, _send_findings, ls, folder)
    else:
        loop.call_soon(_send_findings, ls, folder)


def _send_findings(ls: RedlineServer, folder: Folder) -> None:
    ls.findings_pending.discard(folder.uri)
    folder.findings_timer = None
    review = folder.review
    # The list belongs to the review in progress (its early findings) if one runs, else the last.
    running = ls.registry.current(folder.uri)
    task_id = running.task_id if running is not None else review.task_id if review else None
    # Another review's list replaces the whole sidebar; within one review, only the files
    # that changed are sent (an edit moves the findings of one file).
    full = folder.full_due or task_id != folder.sent_task
    uris = sorted(folder.findings) if full else sorted(folder.changed)
    unanchored = _unanchored(ls, folder)
    files: list[dict[str, Any]] = []
    for uri in uris:
        entry = _file_entry(ls, folder, uri, unanchored)
        if entry["findings"] or not full:
            files.append(entry)  # an empty entry in a partial list: the file has none left
    if full:
        # Files with only unanchored findings are listed too (no diagnostic, no tracked text).
        listed = {entry["path"] for entry in files}
        for path in sorted(set(unanchored) - listed):
            place = lsp_publish.path_uri(folder.root, path) if folder.root else None
            if place is not None:
                files.append({"uri": place, "path": path, "findings": unanchored[path]})
    folder.changed.clear()
    folder.full_due = False
    folder.sent_task = task_id
    folder.sent_at = asyncio.get_running_loop().time()
    if full:  # forget the rows of findings no longer listed
        listed = {row["id"] for entry in files for row in entry["findings"]}
        folder.rows = {i: hit for i, hit in folder.rows.items() if i in listed}
    # The rows are redacted already (`_rows`); the rest is redacted here, in one small pass.
    head = redact_data(
        {
            "folder": folder.uri,
            "taskId": task_id,
            "scopeLabel": review.scope_label if review else None,
            "full": full,
            "files": [{"uri": e["uri"], "path": e["path"]} for e in files],
        }
    )
    for entry, source in zip(head["files"], files, strict=True):
        entry["findings"] = source["findings"]
    ls.protocol.notify(FINDINGS, head)


def _rows(folder: Folder, findings: list[Finding]) -> list[dict[str, Any]]:
    """Each finding's JSON row (a copy, for the caller to add its place to), redacted.

    A finding's text does not change while it is shown, only its place: it is dumped and
    redacted once (the findings new since the last call, scanned together), not on every
    update — redacting a review's whole list costs about a second."""
    cache = folder.rows
    missing = [f for f in findings if (hit := cache.get(f.id)) is None or hit[0] is not f]
    if missing:
        dumped = redact_data([f.model_dump(mode="json") for f in missing])
        for f, row in zip(missing, dumped, strict=True):
            cache[f.id] = (f, row)
    return [dict(cache[f.id][1]) for f in findings]


def _file_entry(
    ls: RedlineServer, folder: Folder, uri: str, unanchored: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """One file's rows: its tracked findings at their current lines, then its unanchored ones."""
    floor = ls.settings.min_severity.rank
    shown = [
        t
        for t in ls.tracker.visible(uri, ls.settings.stale_display)
        if t.finding.severity.rank >= floor
    ]
    rows = _rows(folder, [t.finding for t in shown])
    for row, tracked in zip(rows, shown, strict=True):
        row["line"] = tracked.start_line + 1
        row["end_line"] = tracked.end_line + 1
        row["stale"] = tracked.stale
    path = _path_of(folder, uri)
    return {"uri": uri, "path": path, "findings": rows + unanchored.get(path, [])}


def _path_of(folder: Folder, uri: str) -> str:
    shown = folder.findings.get(uri)
    if shown:
        return shown[0].file
    file = lsp_publish.uri_path(uri)
    root = folder.root or folder.path
    if file is not None and file.is_relative_to(root):
        return file.relative_to(root).as_posix()
    return ""


def _unanchored(ls: RedlineServer, folder: Folder) -> dict[str, list[dict[str, Any]]]:
    """Findings whose quoted code was not found get no diagnostic (there is no line to put
    it on), but the sidebar still lists them, marked unanchored, under their file (by path)."""
    review = folder.review
    out: dict[str, list[dict[str, Any]]] = {}
    if review is None or folder.root is None:
        return out
    floor = ls.settings.min_severity.rank
    found = [
        f
        for f in review.findings
        if f.line is None and f.severity.rank >= floor and not ls.tracker.is_closed(f.id)
    ]
    for f, row in zip(found, _rows(folder, found), strict=True):
        row["stale"] = False
        row["unanchored"] = True
        out.setdefault(f.file, []).append(row)
    return out


# -- publishing ------------------------------------------------------------------------------


def show_file(
    ls: RedlineServer, folder: Folder, uri: str, findings: list[Finding], text: str | None
) -> None:
    """Place `findings` in the current text of `uri` and publish them."""
    if ls.is_open(uri):
        text = ls.workspace.get_text_document(uri).source  # the buffer wins over disk
    if text is None:
        # The file is gone (deleted during the review): nothing to point at.
        folder.findings.pop(uri, None)
        ls.tracker.remove_file(uri)
        publish(ls, folder, uri)
        return
    kept = drop_dismissed(ls, folder, findings, text)
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
            rng = lsp_publish.client_range(tracked, doc, ls.encoding)
            related = lsp_publish.related_information(finding, folder.root or folder.path, known)
            diagnostics.append(
                lsp_publish.to_diagnostic(finding, rng, stale=tracked.stale, related=related)
            )
    if not diagnostics and uri not in folder.published:
        return  # never touch a file Redline has not published to
    version = ls.workspace.get_text_document(uri).version if ls.is_open(uri) else None
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
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


def clear_folder(ls: RedlineServer, folder: Folder) -> None:
    for uri in set(folder.published) | set(folder.findings):
        folder.findings.pop(uri, None)
        ls.tracker.remove_file(uri)
        publish(ls, folder, uri)
    folder.review = None
    schedule_findings(ls, folder)


# -- dismissals ------------------------------------------------------------------------------


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


def find_finding(ls: RedlineServer, finding_id: str) -> tuple[Folder, str, Finding] | None:
    for uri, tracked in ls.tracker.find(finding_id):
        folder = folder_of_uri(ls, uri)
        if folder is not None:
            return folder, uri, tracked.finding
    for folder in ls.folders.values():
        for uri, findings in folder.findings.items():
            for f in findings:
                if f.id == finding_id:
                    return folder, uri, f
    return None


def dismiss(
    ls: RedlineServer, finding_id: str, reason: str, *, all_like_this: bool = False
) -> Finding:
    """Dismiss the current finding `finding_id` in dismissed.toml, and stop showing it; with
    `all_like_this`, every occurrence of its base id (identical code in its file) too."""
    found = find_finding(ls, finding_id)
    if found is None:
        raise UsageError(f"no current finding with id {finding_id!r}")
    folder, _uri, finding = found
    if folder.root is None:
        raise UsageError("the folder has not been reviewed yet")
    from redline.store.dismissals import DismissalStore

    DismissalStore(folder.root).add(finding, reason, all_like_this=all_like_this)
    forget(ls, finding_id)
    if all_like_this:
        for other in _occurrences(ls, finding.family_id):
            if other != finding_id:
                forget(ls, other)
    return finding


def _occurrences(ls: RedlineServer, base_id: str) -> set[str]:
    """The ids of the current findings whose base id is `base_id`."""
    ids: set[str] = set()
    for folder in ls.folders.values():
        for findings in folder.findings.values():
            ids.update(f.id for f in findings if f.family_id == base_id)
        if folder.review is not None:
            ids.update(f.id for f in folder.review.findings if f.family_id == base_id)
    return ids


def forget(ls: RedlineServer, finding_id: str) -> None:
    """Never show this finding again in this session (fixed or dismissed)."""
    touched = set(ls.tracker.close(finding_id))
    for folder in ls.folders.values():
        for uri, findings in folder.findings.items():
            kept = [f for f in findings if f.id != finding_id]
            if len(kept) != len(findings):
                folder.findings[uri] = kept
                touched.add(uri)
        if folder.review is not None:
            gone = [f for f in folder.review.findings if f.id == finding_id]
            folder.review.findings = [f for f in folder.review.findings if f.id != finding_id]
            for f in gone:
                # An unanchored finding is in no tracked file: its file's list changes too.
                place = lsp_publish.path_uri(folder.root, f.file) if folder.root else None
                if place is not None:
                    schedule_findings(ls, folder, place)
    for uri in touched:
        folder_of = folder_of_uri(ls, uri)
        if folder_of is not None:
            publish(ls, folder_of, uri)
