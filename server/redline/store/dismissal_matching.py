"""Applying dismissals to findings: the stored ones (store/dismissals.py) and inline markers.

Inline markers work without the file: `redline: ignore[RL-0123456789ab] reason` in a comment
(`#`, `//`, `--`, `/* */`, `<!-- -->`, or a ` * ` continuation line of a block comment)
anywhere in the finding's file; `ignore[RL-a, RL-b]` names several. A marker on the finding's
own line changes the code its id is a fingerprint of, so it is matched against the ids the
finding had without it (`_ids_without_markers`).

`filter_dismissed` is what the review pipeline calls: a broken dismissed.toml becomes a coverage
note, and every dismissed finding is named there (a marker can come from the author of the
change under review).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from redline.analyzers.rules import family
from redline.files import DISMISSED_FILE
from redline.model import Finding, finding_id, occurrence_id
from redline.plural import plural
from redline.store.dismissals import DismissalError, DismissalStore, Dismissed, parse_dismissed

_ID = r"RL-[0-9A-Fa-f]{12}"
# A comment opener, then the marker later on the same line. `.*?` stays on the line.
_MARKER = re.compile(
    r"(?:#|//|--|/\*|<!--|^[ \t]*\*)[^\n]*?\bredline:[ \t]*ignore[ \t]*"
    rf"\[[ \t]*({_ID}(?:[ \t]*,[ \t]*{_ID})*)[ \t]*\]([^\n]*)",
    re.MULTILINE,
)
_MARKER_TEXT = re.compile(r"\bredline:[ \t]*ignore[ \t]*\[[^\]\n]*\][^\n]*")
_COMMENT_CLOSE = re.compile(r"[ \t]*(?:\*/|-->).*$")

ReadText = Callable[[str], str | bytes | None]


# -- inline markers --------------------------------------------------------------------------


def inline_ignores(text: str) -> dict[str, str]:
    """`redline: ignore[<id>] <reason>` markers in comments: id → reason ("" when none)."""
    if "redline" not in text:  # most files: skip the regex
        return {}
    found: dict[str, str] = {}
    for match in _MARKER.finditer(text):
        reason = _COMMENT_CLOSE.sub("", match.group(2)).strip()
        for ident in match.group(1).split(","):
            found["RL-" + ident.strip()[3:].lower()] = reason
    return found


# -- applying --------------------------------------------------------------------------------


def apply_dismissals(
    findings: Iterable[Finding],
    store: DismissalStore | None,
    read_text: ReadText,
) -> tuple[list[Finding], list[Finding]]:
    """(kept, dismissed): a finding is dismissed when the store dismisses it (its id, or its
    base id with `all = true`) or an inline marker with its id is in its file's current text
    (`read_text(path)`, None if unknown).

    Raises DismissalError when the store's file is unreadable; `filter_dismissed` is the
    forgiving form for the review pipeline."""
    return split_dismissed(
        findings, store.dismissed() if store is not None else Dismissed(), read_text
    )


def split_dismissed(
    findings: Iterable[Finding],
    stored: Dismissed,
    read_text: ReadText,
    *,
    markers_in: Callable[[str], set[str]] | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """(kept, dismissed) for findings numbered together (`model.number_occurrences`), by
    `stored` and the inline markers in each file's text (`markers_in(path)`, when given: the
    ids a file's honoured markers name)."""
    items = list(findings)
    per_file: dict[str, int] = {}
    for finding in items:
        per_file[finding.file] = per_file.get(finding.file, 0) + 1
    markers: dict[str, set[str]] = {}
    for finding in items:
        if finding.file not in markers:
            markers[finding.file] = (
                markers_in(finding.file)
                if markers_in is not None
                else set(inline_ignores(_decode(read_text(finding.file))))
            )
    # A marker on the finding's own line changed the code its id is a fingerprint of (and so
    # maybe its occurrence number): it is matched against the ids the finding had without it,
    # and then serves that finding only, not an identical line that now inherits the id.
    own: set[int] = set()
    consumed: dict[str, set[str]] = {}
    for index, finding in enumerate(items):
        bases = _ids_without_markers(finding)
        if not bases:
            continue
        marked = markers[finding.file]
        candidates = {
            occurrence_id(b, n) for b in bases for n in range(1, per_file[finding.file] + 1)
        }
        named = candidates & marked
        if named or candidates & stored.one or bases & stored.every:
            own.add(index)
            consumed.setdefault(finding.file, set()).update(named)
    kept: list[Finding] = []
    dismissed: list[Finding] = []
    for index, finding in enumerate(items):
        marked = markers[finding.file] - consumed.get(finding.file, set())
        if index in own or stored.covers(finding) or finding.id in marked:
            dismissed.append(finding)
        else:
            kept.append(finding)
    return kept, dismissed


def _ids_without_markers(finding: Finding) -> set[str]:
    """The base ids the finding had before a marker was written into its own lines.

    The natural place for `# redline: ignore[<id>]` is the flagged line itself, but the id is a
    fingerprint of that line, so the marker changes it. The id of the code without the marker
    is recomputed the way analyzers (rule family) and model findings (no title) compute it."""
    code = finding.existing_code
    if "redline" not in code or not _MARKER.search(code):
        return set()
    variants = {
        _MARKER.sub("", code),  # the whole marker comment
        _MARKER_TEXT.sub("", code),  # only the marker, in a comment that says more
    }
    titles = {"", finding.title, finding.rule_id or ""}
    for source in finding.sources:
        tool, _, rule = source.partition(":")
        if rule:
            titles.add(family(tool, rule))
    category = finding.category.value
    return {finding_id(finding.file, v, category, t) for v in variants for t in titles}


def _decode(content: str | bytes | None) -> str:
    if content is None:
        return ""
    if isinstance(content, bytes):
        return content.decode("utf-8", errors="replace")
    return content


@dataclass(frozen=True)
class DismissalSource:
    """Where the dismissals a review honours come from when that is not the work tree: a
    review of commits honours those of its base revision only (review/ground.py), so the change
    under review cannot dismiss its own findings — neither in dismissed.toml nor with a marker."""

    label: str  # "the base 1a2b3c4", for the notes
    stored: Callable[[], bytes | None]  # its .redline/dismissed.toml, None when it has none
    read_text: ReadText  # a file's text there (for inline markers), None when absent


def filter_dismissed(
    findings: list[Finding],
    repo_root: Path,
    read_text: ReadText,
    source: DismissalSource | None = None,
) -> tuple[list[Finding], list[str]]:
    """Findings without the dismissed ones, and the coverage notes to add. A broken
    dismissed.toml never fails the review: its error becomes a note and inline markers still
    apply.

    Without `source`, the work tree's dismissed.toml and the markers in `read_text` (the new
    side) apply. With it, only `source`'s do; what the work tree and the new side would have
    dismissed besides is named as not honoured."""
    notes: list[str] = []
    stored = _work_tree_dismissed(repo_root, notes if source is None else [])
    honoured_store = stored
    if source is None:
        kept, dismissed = split_dismissed(findings, stored, read_text)
    else:
        honoured_store = _source_dismissed(source, notes)
        kept, dismissed = split_dismissed(
            findings, honoured_store, read_text, markers_in=_kept_base_markers(source, read_text)
        )
        _, proposed = split_dismissed(findings, stored, read_text)
        honoured = {id(f) for f in dismissed}
        refused = [f for f in proposed if id(f) not in honoured]
        for f in refused[:20]:
            how = "dismissed.toml" if stored.covers(f) else "inline marker"
            where = f"{f.file}:{f.line}" if f.line else f.file
            notes.append(
                f"dismissal not honoured ({how}): {f.id} {where} — {f.title}: this review "
                f"honours the dismissals of {source.label} only; one the change adds applies "
                "once it is merged"
            )
        if len(refused) > 20:
            notes.append(f"… and {len(refused) - 20} more dismissals not honoured")
    if dismissed:
        where_from = "" if source is None else f" of {source.label}"
        notes.append(
            f"{plural(len(dismissed), 'finding')} dismissed (.redline/dismissed.toml or inline "
            f"markers{where_from})"
        )
        # Named, not just counted: an inline marker can come from the author of the change under
        # review, so what was hidden must stay auditable in the report.
        for f in dismissed[:20]:
            how = "dismissed.toml" if honoured_store.covers(f) else "inline marker"
            where = f"{f.file}:{f.line}" if f.line else f.file
            notes.append(f"dismissed ({how}): {f.id} {where} — {f.title}")
        if len(dismissed) > 20:
            notes.append(f"… and {len(dismissed) - 20} more dismissed findings")
    return kept, notes


def _kept_base_markers(source: DismissalSource, read_text: ReadText) -> Callable[[str], set[str]]:
    """The markers of a file that count in a review with `source`: those its version there
    holds and the change keeps. The base version is read only for a file whose new text has a
    marker at all (most have none)."""

    def markers_in(path: str) -> set[str]:
        new = set(inline_ignores(_decode(read_text(path))))
        if not new:
            return set()
        return new & set(inline_ignores(_decode(source.read_text(path))))

    return markers_in


def _work_tree_dismissed(repo_root: Path, notes: list[str]) -> Dismissed:
    try:
        return DismissalStore(repo_root).dismissed()
    except DismissalError as exc:
        notes.append(f"dismissals not applied: {exc.message}")
        return Dismissed()


def _source_dismissed(source: DismissalSource, notes: list[str]) -> Dismissed:
    data = source.stored()
    if data is None:
        return Dismissed()
    try:
        return parse_dismissed(data, f"{DISMISSED_FILE} at {source.label}")
    except DismissalError as exc:
        notes.append(f"dismissals not applied: {exc.message}")
        return Dismissed()
