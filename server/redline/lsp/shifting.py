"""Moving a document's findings with one incremental edit (a `textDocument/didChange` range).

An edit only *shifts* findings — no re-anchoring on a keystroke, so it costs O(findings) integer
comparisons plus one splice of the stored line list:

- an edit wholly above a finding moves it by the edit's line delta (and, when the edit ends on
  the finding's first line, by the edit's character delta on that line);
- an edit wholly below it leaves it alone;
- an edit that touches the quoted code makes it *stale*: the code it talks about changed, so it
  is withdrawn or shown as "may be stale" (`FindingTracker.visible(stale_mode=...)`). If a later
  edit (an undo, a retyped character) makes those lines equal the quoted code again, it is
  fresh again;
- an edit that deletes the whole quoted code withdraws the finding (there is nothing left to
  point at); the document keeps it, and
- after the shift, a stale or withdrawn finding whose code is exactly on lines of the edit's new
  text is shown there again, fresh (revival.py: an undo, a moved line, retyped code).

Inserting whole lines right above a finding (text ending with a line break at column 0 of its
first line) or right below it (text starting with a line break at the end of its last line)
does not touch the code. Trailing whitespace is not content: typing a space after the flagged
code leaves it fresh.

The edit's range is in the client's units of the text *before* it; a column past the end of a
line means the end of the line, a line past the end of the document the end of the document.
"""

from __future__ import annotations

from redline.lsp.document_findings import ChangeResult, DocumentFindings, TrackedFinding
from redline.lsp.revival import revive, revive_elsewhere
from redline.lsp.textlines import (
    LINE_BREAKS,
    Encoding,
    Position,
    Range,
    from_client_units,
    line_content,
    split_keepends,
)


def apply_edit(
    doc: DocumentFindings, rng: Range, new_text: str, encoding: Encoding
) -> ChangeResult:
    """Replace `rng` (in `encoding` units of `doc`'s current text) with `new_text` in `doc`'s
    stored lines and move its findings with the edit."""
    start = _to_points(doc, rng.start_line, rng.start_char, encoding)
    end = _to_points(doc, rng.end_line, rng.end_char, encoding)
    if end < start:
        start, end = end, start
    if start == end and not new_text:
        return ChangeResult()
    # The start line is kept whole when the new text opens a line after its end.
    keeps_start_line = new_text[:1] in LINE_BREAKS and start[1] == len(doc.line_text(start[0]))
    new_end = _splice(doc, start, end, new_text)
    result = _shift(doc, start, end, new_end, new_text)
    # The lines the new text is on, for revival: a line wholly kept from before (the start line
    # when the new text opens a line after it, the end line when the edit ended at its start)
    # is not new; a deletion of whole lines leaves none (`first == last + 1`: only the seam).
    first = start[0] + 1 if keeps_start_line else start[0]
    last = new_end[0] - 1 if new_end[1] == 0 and end[1] == 0 else new_end[0]
    revive(doc, first, last, result)
    revive_elsewhere(doc, result)
    return result


def _to_points(doc: DocumentFindings, line: int, char: int, encoding: Encoding) -> Position:
    if encoding != "utf-32" and 0 <= line < len(doc.lines):
        char = from_client_units(line_content(doc.lines[line]), char, encoding)
    return doc.clamp(line, char)


def _splice(doc: DocumentFindings, start: Position, end: Position, new_text: str) -> Position:
    """Replace start..end with `new_text` in the stored lines; the new end of the inserted
    text, in the new document."""
    lines = doc.lines
    (sl, sc), (el, ec) = start, end
    prefix = line_content(lines[sl])[:sc]
    suffix = lines[el][ec:]  # the rest of the end line, with its line break
    segment = prefix + new_text + suffix
    lo = sl
    if segment.startswith("\n") and lo > 0 and lines[lo - 1].endswith("\r"):
        # "\r" + "\n" is one line break: re-split across the join.
        lo -= 1
        segment = lines[lo] + segment
    parts = split_keepends(segment)
    if el < len(lines) - 1:
        parts.pop()  # the segment ends with the end line's break; the next line follows
    before = len(lines)
    lines[lo : el + 1] = parts
    new_end_line = el + len(lines) - before
    tail = line_content(suffix)
    return (new_end_line, len(line_content(lines[new_end_line])) - len(tail))


def _shift(
    doc: DocumentFindings,
    es: Position,
    ee: Position,
    new_end: Position,
    new_text: str,
) -> ChangeResult:
    result = ChangeResult()
    el, ec = ee
    nel, nec = new_end
    line_delta = nel - el
    starts_with_break = new_text[:1] in LINE_BREAKS
    noop = es == ee and not new_text

    def moved(pos: Position) -> Position:
        # A position at or after the edit's end, in the new text.
        if pos[0] == el:
            return (nel, nec + pos[1] - ec)
        return (pos[0] + line_delta, pos[1])

    if noop:
        return result
    kept: list[TrackedFinding] = []
    for t in doc.findings:
        fs, fe = t.start, t.end
        # After the edit, or new lines opened right after the code: untouched.
        if es > fe or (es == fe and starts_with_break):
            kept.append(t)
            continue
        # Before the edit's end, and the code still starts where it did (at a line start,
        # when it started at one): shifted.
        if ee < fs or (ee == fs and (fs[1] > 0 or nec == 0)):
            if line_delta or fs[0] == el:
                new_start, new_finish = moved(fs), moved(fe)
                if (new_start, new_finish) != (fs, fe):
                    t.move_to(new_start, new_finish)
                    result.moved.append(t.id)
            kept.append(t)
            continue
        # The edit overlaps the code.
        if es <= fs and ee >= fe and fs != fe:
            result.withdrawn.append(t.id)  # the whole quoted code was replaced
            doc.withdraw(t)  # until it comes back (revival.py)
            continue
        new_start = fs if fs <= es else es
        new_finish = moved(fe) if fe > ee else new_end
        t.move_to(new_start, new_finish)
        if doc.matches(t):
            # Same code again (an undo, trailing whitespace): fresh, on whole lines.
            t.end_char = len(doc.line_text(t.end_line))
            if t.stale:
                t.stale = False
                result.refreshed.append(t.id)
            elif (new_start, new_finish) != (fs, fe):
                result.moved.append(t.id)
        elif not t.stale:
            t.stale = True
            result.stale.append(t.id)
        kept.append(t)
    doc.findings = kept
    return result
