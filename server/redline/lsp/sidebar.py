"""The sidebar's list: `redline/findings` notifications, and the review as the editor shows it.

The list is per workspace folder (`Folder`, folders.py): files, then findings with their current
lines (placed by `tracking.py`, which moves them with edits; unanchored findings under their
file without a line). Every change schedules a notification (`schedule_findings`): the whole
list for a new review (`full: true`), else only the files whose findings changed
(`full: false`), at most one per loop turn and per FINDINGS_INTERVAL, so a burst of edits costs
one small update. While a review's results land (landing.py) the list is held, then sent
whole by `send_whole`, its JSON made in a worker thread. `shown_review` is the folder's last
review as the sidebar lists it, for the report view, the export and the finished counts.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from redline.lsp import publish as lsp_publish
from redline.lsp.folders import RUN_KINDS, is_shown, kept_findings
from redline.lsp.protocol import RedlineProtocol
from redline.redaction import redact_data

if TYPE_CHECKING:
    from redline.lsp.folders import Folder
    from redline.lsp.language_server import RedlineServer
    from redline.model import Finding, Review

FINDINGS = "redline/findings"
FINDINGS_INTERVAL = 0.05  # s: at most one `redline/findings` per folder this often
ROWS_BATCH = 20  # findings redacted together off the loop (`prepare_rows`)


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
            if (line, end_line) != (f.line, f.end_line):
                # Copied only when moved: 1,200 copies cost ~30 ms of the loop at every finish.
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


async def release(ls: RedlineServer, folder: Folder) -> None:
    """After a landing (landing.py): send what it held back — the whole list if one is due (a
    new review's first, made as `send_whole` makes it), else the files it changed, as
    `schedule_findings` would have."""
    if folder.full_due or _task_of(ls, folder) != folder.sent_task:
        await send_whole(ls, folder)
    elif folder.changed:
        schedule_findings(ls, folder, next(iter(folder.changed)))


async def send_whole(ls: RedlineServer, folder: Folder) -> None:
    """The whole list, built now and sent once its JSON is made in a worker thread: a review's
    final results, before its `finished` state (a client that sees the review finished has its
    list). Made on the loop, the JSON of 1,200 rows (~0.6 MB) held it for 10-40 ms (the C
    encoder keeps the GIL for the whole object); the pure-Python encoder in a thread yields it.
    Updates meanwhile (an edit moves a file's findings) wait for it, then follow it."""
    folder.full_due = True
    if folder.findings_timer is not None:
        folder.findings_timer.cancel()
        folder.findings_timer = None
    ls.findings_pending.discard(folder.uri)
    head = _build_findings(ls, folder)
    if head is None:
        return
    protocol = ls.protocol
    if not isinstance(protocol, RedlineProtocol):
        protocol.notify(FINDINGS, head)
        return
    folder.landing += 1  # the updates of edits made meanwhile are held, then sent after it
    try:
        body = await asyncio.to_thread(
            _encode, {"jsonrpc": "2.0", "method": FINDINGS, "params": head}
        )
        protocol.write_json_text(body)
    finally:
        folder.landing -= 1
    if folder.changed:
        schedule_findings(ls, folder, next(iter(folder.changed)))


def _encode(message: dict[str, Any]) -> str:
    # Not `json.dumps`: its C encoder holds the GIL, and so the event loop, for the whole list.
    # ASCII (ensure_ascii): the frame's Content-Length counts characters (as pygls does).
    return "".join(json.JSONEncoder(ensure_ascii=True).iterencode(message))


def _send_findings(ls: RedlineServer, folder: Folder) -> None:
    ls.findings_pending.discard(folder.uri)
    folder.findings_timer = None
    head = _build_findings(ls, folder)
    if head is None:
        return
    # JSON-like already: written as it is (a review's whole list through `notify`'s cattrs
    # walk costs ~30 ms more on the loop).
    protocol = ls.protocol
    if isinstance(protocol, RedlineProtocol):
        protocol.notify_json(FINDINGS, head)
    else:
        protocol.notify(FINDINGS, head)


def _task_of(ls: RedlineServer, folder: Folder) -> str | None:
    """The review the list belongs to: the one in progress (its early findings) if one runs,
    else the last."""
    running = ls.registry.current(folder.uri)
    if running is not None:
        return running.task_id
    return folder.review.task_id if folder.review else None


def _build_findings(ls: RedlineServer, folder: Folder) -> dict[str, Any] | None:
    """The `redline/findings` params due now (None: none is, or a landing holds the list), the
    bookkeeping updated as if they were sent."""
    if folder.landing:
        return None  # results are landing (landing.py): the list goes out once, at the end
    review = folder.review
    task_id = _task_of(ls, folder)
    # Another review's list replaces the whole sidebar; within one review, only the files
    # that changed are sent (an edit moves the findings of one file).
    full = folder.full_due or task_id != folder.sent_task
    if not full and not folder.changed:
        return None  # sent already (`send_whole`): nothing changed since
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
                spelled = ls.uris.spelling(place)
                files.append({"uri": spelled, "path": path, "findings": unanchored[path]})
    folder.changed.clear()
    folder.full_due = False
    folder.sent_task = task_id
    folder.sent_at = asyncio.get_running_loop().time()
    if full:  # forget the rows of findings no longer listed
        listed = {row["id"] for entry in files for row in entry["findings"]}
        folder.rows = {i: hit for i, hit in folder.rows.items() if i in listed}
    # The rows are redacted already (`_rows`); the rest is redacted here, in one small pass.
    head: dict[str, Any] = redact_data(
        {
            "folder": folder.uri,
            "taskId": task_id,
            "scopeLabel": review.scope_label if review else None,
            "full": full,
            "runs": _runs_summary(folder),
            "shownRuns": list(folder.shown_runs) if folder.shown_runs is not None else None,
            "files": [{"uri": e["uri"], "path": e["path"]} for e in files],
        }
    )
    for entry, source in zip(head["files"], files, strict=True):
        entry["findings"] = source["findings"]
    return head


def _runs_summary(folder: Folder) -> list[dict[str, Any]]:
    """The kept runs, in RUN_KINDS order: what the editor offers to show or hide."""
    return [
        {
            "kind": kind,
            "taskId": run.task_id,
            "label": run.scope_label,
            "findings": len(run.findings),  # fixed and dismissed ones have left it
        }
        for kind in RUN_KINDS
        if (run := folder.runs.get(kind)) is not None
    ]


def prepare_rows(
    findings: list[Finding], cached: dict[str, tuple[Finding, dict[str, Any]]]
) -> dict[str, tuple[Finding, dict[str, Any]]]:
    """The rows of `findings` for `Folder.rows` (`cached`: a copy of it), dumped and redacted:
    in a worker thread while a review's results land (landing.py), so `_rows` finds them made.
    A finding equal to a cached one (the final list's, seen in the early list) keeps its row:
    redacting a review's 1,200 rows takes about a second.

    In batches: the redactor scans a batch's texts joined, and a regular expression holds the
    GIL for its whole scan, during which the event loop cannot run."""
    out: dict[str, tuple[Finding, dict[str, Any]]] = {}
    missing: list[Finding] = []
    for f in findings:
        hit = cached.get(f.id)
        if hit is not None and (hit[0] is f or hit[0] == f):
            out[f.id] = (f, hit[1])
        else:
            missing.append(f)
    for start in range(0, len(missing), ROWS_BATCH):
        batch = missing[start : start + ROWS_BATCH]
        dumped = redact_data([f.model_dump(mode="json") for f in batch])
        out.update((f.id, (f, row)) for f, row in zip(batch, dumped, strict=True))
    return out


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
        if t.finding.severity.rank >= floor and is_shown(folder, t.finding.id)
    ]
    rows = _rows(folder, [t.finding for t in shown])
    for row, tracked in zip(rows, shown, strict=True):
        row["line"] = tracked.start_line + 1
        row["end_line"] = tracked.end_line + 1
        row["stale"] = tracked.stale
        row["runs"] = list(folder.run_index.get(tracked.id, ()))
    path = _path_of(folder, uri)
    # The row names the file as the client spelled it (it matches its own documents by text).
    spelled = ls.uris.spelling(uri)
    return {"uri": spelled, "path": path, "findings": rows + unanchored.get(path, [])}


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
    out: dict[str, list[dict[str, Any]]] = {}
    if not folder.runs or folder.root is None:
        return out
    floor = ls.settings.min_severity.rank
    found = [
        f
        for f in kept_findings(folder)
        if f.line is None
        and f.severity.rank >= floor
        and not ls.tracker.is_closed(f.id)
        and is_shown(folder, f.id)
    ]
    for f, row in zip(found, _rows(folder, found), strict=True):
        row["stale"] = False
        row["unanchored"] = True
        row["runs"] = list(folder.run_index.get(f.id, ()))
        out.setdefault(f.file, []).append(row)
    return out
