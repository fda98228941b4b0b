"""What Redline shows in the editor, per workspace folder: diagnostics and the sidebar's list.

A `Folder` (folders.py) holds the last finished review and the findings currently shown in each file
(placed by `tracking.py`, which moves them with edits). `show_file` and `publish` turn them
into `textDocument/publishDiagnostics` in the negotiated encoding; every change also schedules
one `redline/findings` notification per loop turn, the list the sidebar draws (files, then
findings with their current lines; unanchored findings under their file without a line).
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

FINDINGS = "redline/findings"


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


def schedule_findings(ls: RedlineServer, folder: Folder) -> None:
    """Send `redline/findings` once per loop turn, however many files changed in it."""
    if folder.uri in ls.findings_pending:
        return
    ls.findings_pending.add(folder.uri)
    asyncio.get_running_loop().call_soon(_send_findings, ls, folder)


def _send_findings(ls: RedlineServer, folder: Folder) -> None:
    ls.findings_pending.discard(folder.uri)
    files = []
    for uri in sorted(folder.findings):
        rows = []
        for tracked in ls.tracker.visible(uri, ls.settings.stale_display):
            f = tracked.finding
            if f.severity.rank < ls.settings.min_severity.rank:
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
    _add_unanchored(ls, folder, files)
    # The list belongs to the review in progress (its early findings) if one runs, else the last.
    running = ls.registry.current(folder.uri)
    task_id = running.task_id if running is not None else review.task_id if review else None
    ls.protocol.notify(
        FINDINGS,
        redact_data(
            {
                "folder": folder.uri,
                "taskId": task_id,
                "scopeLabel": review.scope_label if review else None,
                "files": files,
            }
        ),
    )


def _add_unanchored(ls: RedlineServer, folder: Folder, files: list[dict[str, Any]]) -> None:
    """Findings whose quoted code was not found get no diagnostic (there is no line to put
    it on), but the sidebar still lists them, marked unanchored, under their file."""
    review = folder.review
    if review is None or folder.root is None:
        return
    by_path = {entry["path"]: entry for entry in files}
    for f in review.findings:
        if f.line is not None or f.severity.rank < ls.settings.min_severity.rank:
            continue
        if ls.tracker.is_closed(f.id):
            continue
        row = f.model_dump(mode="json")
        row["stale"] = False
        row["unanchored"] = True
        entry = by_path.get(f.file)
        if entry is None:
            uri = lsp_publish.path_uri(folder.root, f.file)
            if uri is None:
                continue  # a path outside the repository is model text, not a place
            entry = {"uri": uri, "path": f.file, "findings": []}
            by_path[f.file] = entry
            files.append(entry)
        entry["findings"].append(row)


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
        known = {f.file for fs in folder.findings.values() for f in fs}
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
    schedule_findings(ls, folder)


def republish_all(ls: RedlineServer) -> None:
    for folder in ls.folders.values():
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


def dismissed_ids(ls: RedlineServer, folder: Folder) -> set[str]:
    """Ids in `.redline/dismissed.toml` (read afresh: a `git pull` may have changed it)."""
    if folder.root is None:
        return set()
    from redline.store.dismissals import DismissalError, DismissalStore

    try:
        return DismissalStore(folder.root).ids()
    except DismissalError as exc:
        ls.log_message(f"Redline: {exc.message}", types.MessageType.Warning)
        return set()


def drop_dismissed(
    ls: RedlineServer,
    folder: Folder,
    findings: list[Finding],
    text: str,
    stored: set[str] | None = None,
) -> list[Finding]:
    from redline.store.dismissals import inline_ignores

    stored = dismissed_ids(ls, folder) if stored is None else stored
    marked = inline_ignores(text)
    return [f for f in findings if f.id not in stored and f.id not in marked]


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


def dismiss(ls: RedlineServer, finding_id: str, reason: str) -> Finding:
    found = find_finding(ls, finding_id)
    if found is None:
        raise UsageError(f"no current finding with id {finding_id!r}")
    folder, _uri, finding = found
    if folder.root is None:
        raise UsageError("the folder has not been reviewed yet")
    from redline.store.dismissals import DismissalStore

    DismissalStore(folder.root).add(finding, reason)
    forget(ls, finding_id)
    return finding


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
            folder.review.findings = [f for f in folder.review.findings if f.id != finding_id]
    for uri in touched:
        folder_of = folder_of_uri(ls, uri)
        if folder_of is not None:
            publish(ls, folder_of, uri)
