"""Stopping to show a finding: dismissing it (in `.redline/dismissed.toml`) or forgetting it.

`dismiss` records a dismissal and `forget`s the finding (and, with `all_like_this`, every
occurrence of its base id); `forget` (a fix applied, or a dismissal) removes a finding from the
tracker, every folder's files and its last review, and re-publishes what it touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from redline.errors import UsageError
from redline.lsp import publish as lsp_publish
from redline.lsp.diagnostics import folder_of_uri, publish
from redline.lsp.folders import reindex
from redline.lsp.sidebar import schedule_findings

if TYPE_CHECKING:
    from redline.lsp.folders import Folder
    from redline.lsp.language_server import RedlineServer
    from redline.memory.learnings import Learning, Source
    from redline.model import Finding, Review


@dataclass(frozen=True)
class Learn:
    """`learn` on `redline.dismiss`: keep the reason as a learning (scoped to `paths`, else
    to the findings' files; in the user's private file with `private`)."""

    paths: tuple[str, ...] = ()
    private: bool = False


def check_learning(
    ls: RedlineServer, ids: list[str], reason: str, learn: Learn | None
) -> tuple[Path, Learning] | None:
    """The learning a dismissal with `learn` adds, and its repository; raises UsageError
    (before anything is dismissed) when it cannot be one."""
    if learn is None:
        return None
    from redline.memory.dismissal_learnings import from_findings

    found = [find_finding(ls, i) for i in ids]
    if any(f is None for f in found) or not found:
        raise UsageError(f"no current finding with id {ids[0]!r}")
    roots = {f[0].root for f in found if f is not None}
    (root,) = roots if len(roots) == 1 else (None,)
    if root is None:
        raise UsageError("learn: the findings must be in one reviewed folder")
    return root, from_findings([f[2] for f in found if f is not None], reason, learn.paths)


def learn(learned: tuple[Path, Learning], how: Learn | None) -> str:
    """Write the learning `check_learning` made; its id."""
    from redline.memory.learning_files import add_learning

    root, item = learned
    source: Source = "private" if how is not None and how.private else "committed"
    add_learning(root, item, source, exist_ok=True)  # the same reason twice: one learning
    return item.id


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
        for run in _runs(folder):
            ids.update(f.id for f in run.findings if f.family_id == base_id)
    return ids


def _runs(folder: Folder) -> list[Review]:
    """Every kept run of the folder, and its last review (one of them, unless a test or an
    older caller set it alone)."""
    runs = list(folder.runs.values())
    if folder.review is not None and all(r is not folder.review for r in runs):
        runs.append(folder.review)
    return runs


def forget(ls: RedlineServer, finding_id: str) -> None:
    """Never show this finding again in this session (fixed or dismissed)."""
    touched = set(ls.tracker.close(finding_id))
    for folder in ls.folders.values():
        for uri, findings in folder.findings.items():
            kept = [f for f in findings if f.id != finding_id]
            if len(kept) != len(findings):
                folder.findings[uri] = kept
                touched.add(uri)
        gone: list[Finding] = []
        for run in _runs(folder):
            gone.extend(f for f in run.findings if f.id == finding_id)
            run.findings = [f for f in run.findings if f.id != finding_id]
        if gone:
            reindex(folder)
            for f in gone:
                # An unanchored finding is in no tracked file: its file's list changes too.
                place = lsp_publish.path_uri(folder.root, f.file) if folder.root else None
                if place is not None:
                    schedule_findings(ls, folder, place)
    for uri in touched:
        folder_of = folder_of_uri(ls, uri)
        if folder_of is not None:
            publish(ls, folder_of, uri)
