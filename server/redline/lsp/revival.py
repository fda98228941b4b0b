"""Bringing back a finding whose code reappears: an undo, a line moved, the same text retyped.

Shifting (shifting.py) withdraws a finding whose code an edit deleted, and marks stale one whose
code an edit touched; `dd` then `u`, `J` then `u`, `ddp` or retyping a line puts the code back,
often with a range a client computed by diffing (Neovim's `dd` on `import os` above
`import subprocess` can arrive as "delete `os\\nimport `"), so no shifting of ranges can follow
it. Instead, after every edit the stale findings and the document's withdrawn ones
(`DocumentFindings.withdrawn`, bounded) are re-anchored by their code, as the review anchors a
finding by its quote: where its lines are exactly there again (trailing whitespace aside), it is
shown, fresh, on those whole lines — the nearest such place to where it was.

The code can only have come back where the edit's new text is, so only placements whose lines
include one of those lines are tried: an index of those few lines (a keystroke's one or two) is
built, each candidate looks its own lines up in it, and only hits are compared in full. With no
stale or withdrawn finding (the usual case) an edit costs nothing here. A closed finding (fixed
or dismissed) is never a candidate: the tracker removes it from the pool when it closes it.
"""

from __future__ import annotations

from redline.lsp.document_findings import ChangeResult, DocumentFindings, TrackedFinding


def revive(doc: DocumentFindings, first: int, last: int, result: ChangeResult) -> None:
    """Show again, fresh, each stale or withdrawn finding of `doc` whose code is now exactly on
    lines that are new: lines `a..b` with `b >= first` and `a <= last`, where `first..last`
    (0-based) are the lines an edit's new text is on. Lines above `first` and below `last` are
    as they were; when the edit only deleted whole lines, `first == last + 1` and only code
    spanning the seam between `last` and `first` is new.

    `result` is the edit's: a finding withdrawn or made stale by this very edit and back at once
    (a line replaced by identical text) is reported as moved, one from before as refreshed."""
    stale = [t for t in doc.findings if t.stale]
    if not stale and not doc.withdrawn:
        return
    lo, hi = max(min(first, last), 0), min(max(first, last), len(doc.lines) - 1)
    if lo > hi or last < 0 or first >= len(doc.lines):
        return
    index: dict[str, list[int]] = {}
    for i in range(lo, hi + 1):
        index.setdefault(doc.line_text(i).rstrip(), []).append(i)
    span = (first, last)
    for t in stale:
        at = _nearest(doc, t.code, index, span, t.start_line)
        if at is not None:
            _place(doc, t, at)
            _report(result, t.id, result.stale)
    for t in list(doc.withdrawn.values()):
        at = _nearest(doc, t.code, index, span, t.start_line)
        if at is not None:
            del doc.withdrawn[t.id]
            _place(doc, t, at)
            doc.findings.append(t)
            _report(result, t.id, result.withdrawn)


def revive_elsewhere(doc: DocumentFindings, result: ChangeResult) -> None:
    """A finding this very edit withdrew whose code is still, exactly, elsewhere in `doc` is
    shown there at once, the nearest such place: the edit deleted one of two copies (an undo
    whose diff removes the first of two identical lines, a duplicated line deleted). Not where
    another finding of the same code already is. Costs a pass over the lines, only on an edit
    that withdrew something."""
    lost = [doc.withdrawn[i] for i in result.withdrawn if i in doc.withdrawn]
    if not lost:
        return
    index: dict[str, list[int]] = {}
    for i in range(len(doc.lines)):
        index.setdefault(doc.line_text(i).rstrip(), []).append(i)
    taken = {(t.start_line, t.code) for t in doc.findings}
    for t in lost:
        at = _nearest(doc, t.code, index, (0, len(doc.lines) - 1), t.start_line)
        if at is None or (at, t.code) in taken:
            continue
        del doc.withdrawn[t.id]
        _place(doc, t, at)
        doc.findings.append(t)
        taken.add((at, t.code))
        _report(result, t.id, result.withdrawn)


def revive_anywhere(doc: DocumentFindings, result: ChangeResult) -> None:
    """`revive` over the whole document (a full replacement, a change on disk)."""
    if doc.withdrawn:
        revive(doc, 0, len(doc.lines) - 1, result)


def _nearest(
    doc: DocumentFindings,
    code: tuple[str, ...],
    index: dict[str, list[int]],
    span: tuple[int, int],
    hint: int,
) -> int | None:
    """The first line of the placement of `code` nearest `hint` among those that have a line
    in `index` and reach into `span` (see `revive`). Blank code is no anchor: any blank line
    would do."""
    if not any(code):
        return None
    first, last = span
    best: int | None = None
    for offset, line in enumerate(code):
        for hit in index.get(line, ()):
            start = hit - offset
            if start > last or start + len(code) - 1 < first:
                continue
            if best is not None and abs(start - hint) >= abs(best - hint):
                continue
            if doc.holds(code, start):
                best = start
    return best


def _place(doc: DocumentFindings, t: TrackedFinding, first: int) -> None:
    last = first + len(t.code) - 1
    t.move_to((first, 0), (last, len(doc.line_text(last))))
    t.stale = False


def _report(result: ChangeResult, finding_id: str, lost_now: list[str]) -> None:
    if finding_id in lost_now:
        lost_now.remove(finding_id)
        result.moved.append(finding_id)
    else:
        result.refreshed.append(finding_id)
