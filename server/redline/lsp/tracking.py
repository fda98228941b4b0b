"""Findings that follow the code while the user edits: moved, marked stale, or withdrawn.

A finding is placed on the whole lines of the code it quotes. After that, incremental edits
(`textDocument/didChange` ranges) only *shift* it — no re-anchoring on a keystroke, so an edit
costs O(findings) integer comparisons plus one splice of the stored line list:

- an edit wholly above a finding moves it by the edit's line delta (and, when the edit ends on
  the finding's first line, by the edit's character delta on that line);
- an edit wholly below it leaves it alone;
- an edit that touches the quoted code makes it *stale*: the code it talks about changed, so it
  is withdrawn or shown as "may be stale" (`visible(stale_mode=...)`). If a later edit (an
  undo, a retyped character) makes those lines equal the quoted code again, it is fresh again;
- an edit that deletes the whole quoted code withdraws the finding (there is nothing left to
  point at).

Inserting whole lines right above a finding (text ending with a line break at column 0 of its
first line) or right below it (text starting with a line break at the end of its last line)
does not touch the code. Trailing whitespace is not content: typing a space after the flagged
code leaves it fresh.

A full-text replacement (`range` None) and a change on disk (`reanchor`) re-anchor every finding
by its quoted code with `anchoring.locate`: an identical match (up to whitespace) places it
fresh, a fuzzy match places it stale, no match withdraws it. A finding the review could only
place approximately (its quote is not in the file) is placed by the fuzzy match, fresh.

Positions are 0-based `(line, character)` with characters counted in Python str code points
(not UTF-16 units); `from_client_units`/`to_client_units` convert a column on one line for the
server. Line breaks are `\\n`, `\\r\\n` and `\\r` (as in LSP); a column past the end of a line
means the end of the line, a line past the end of the document means the end of the document.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from redline.enums import AnchorState
from redline.lsp.textlines import (
    LINE_BREAKS,
    Encoding,
    Position,
    Range,
    from_client_units,
    line_content,
    split_keepends,
)

if TYPE_CHECKING:
    from redline.model import Finding

# `redline.review.anchoring` (hence pydantic and the model) is imported inside the functions
# that use it: the language server imports this module at start-up, before any finding exists.

StaleMode = Literal["withdraw", "mark"]


@dataclass
class TrackedFinding:
    """A finding and where it is in the current text of its document.

    For a fresh finding the range is the whole quoted lines: `(first, 0)` to the end of the last
    line's text (its line break excluded). Read-only for callers: the tracker updates it."""

    finding: Finding
    start_line: int
    start_char: int
    end_line: int
    end_char: int
    stale: bool = False

    @property
    def id(self) -> str:
        return self.finding.id

    @property
    def range(self) -> Range:
        return Range(self.start_line, self.start_char, self.end_line, self.end_char)

    @property
    def start(self) -> Position:
        return (self.start_line, self.start_char)

    @property
    def end(self) -> Position:
        return (self.end_line, self.end_char)

    def _set(self, start: Position, end: Position) -> None:
        self.start_line, self.start_char = start
        self.end_line, self.end_char = end


@dataclass
class ChangeResult:
    """What an operation did to a document's findings (finding ids, in document order)."""

    moved: list[str] = field(default_factory=list)  # same code, new position
    stale: list[str] = field(default_factory=list)  # newly stale: their code was edited
    refreshed: list[str] = field(default_factory=list)  # stale before, their code is back
    withdrawn: list[str] = field(default_factory=list)  # code gone: no longer tracked

    @property
    def changed(self) -> bool:
        """Whether the published diagnostics of the document need to be sent again."""
        return bool(self.moved or self.stale or self.refreshed or self.withdrawn)


def _quote(finding: Finding) -> list[str]:
    """The quoted lines as compared with the document: trailing whitespace is not content."""
    from redline.review.anchoring import split_lines

    return [line.rstrip() for line in split_lines(finding.existing_code)]


class DocumentFindings:
    """One document's current text (as a line list, for cheap splicing) and its findings."""

    def __init__(self, uri: str, text: str) -> None:
        self.uri = uri
        self.lines = split_keepends(text)
        self.findings: list[TrackedFinding] = []

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def line_text(self, line: int) -> str:
        """The text of a 0-based line without its line break ("" past the end)."""
        return line_content(self.lines[line]) if 0 <= line < len(self.lines) else ""

    def clamp(self, line: int, char: int) -> Position:
        """A position clamped into the document: past the end of a line is its end, past the
        last line is the end of the document (LSP's rule for out-of-range positions)."""
        if line < 0:
            return (0, 0)
        if line >= len(self.lines):
            last = len(self.lines) - 1
            return (last, len(line_content(self.lines[last])))
        return (line, max(0, min(char, len(line_content(self.lines[line])))))

    def matches(self, tracked: TrackedFinding) -> bool:
        """Whether the finding's lines hold exactly its quoted code (trailing space aside)."""
        want = _quote(tracked.finding)
        first, last = tracked.start_line, tracked.end_line
        if not want or tracked.start_char != 0 or last - first + 1 != len(want):
            return False
        if last >= len(self.lines):
            return False
        return all(
            line_content(self.lines[first + i]).rstrip() == quoted for i, quoted in enumerate(want)
        )

    def place(self, finding: Finding, first: int, last: int, *, stale: bool) -> TrackedFinding:
        """A finding on the whole 0-based lines first..last."""
        return TrackedFinding(finding, first, 0, last, len(self.line_text(last)), stale)


class FindingTracker:
    """Findings of every open document, kept in step with the document's edits.

    Not thread-safe: call it from the server's event loop only."""

    def __init__(self) -> None:
        self._docs: dict[str, DocumentFindings] = {}
        self._closed: set[str] = set()

    # -- queries -------------------------------------------------------------------------

    def document(self, uri: str) -> DocumentFindings | None:
        return self._docs.get(uri)

    def uris(self) -> list[str]:
        return list(self._docs)

    def text(self, uri: str) -> str | None:
        doc = self._docs.get(uri)
        return doc.text if doc is not None else None

    def visible(self, uri: str, stale_mode: StaleMode = "withdraw") -> list[TrackedFinding]:
        """Findings to publish for `uri`, in document order. With "mark", stale findings are
        included (their `stale` is True, so the server can say "may be stale")."""
        doc = self._docs.get(uri)
        if doc is None:
            return []
        shown = [t for t in doc.findings if stale_mode == "mark" or not t.stale]
        return sorted(shown, key=lambda t: (t.start, t.end))

    def at(self, uri: str, rng: Range, stale_mode: StaleMode = "mark") -> list[TrackedFinding]:
        """Visible findings whose range intersects `rng` (or touches it, for an empty range):
        what a code-action or hover request at `rng` is about."""
        return [
            t for t in self.visible(uri, stale_mode) if t.start <= rng.end and rng.start <= t.end
        ]

    def find(self, finding_id: str) -> list[tuple[str, TrackedFinding]]:
        """Every tracked finding with this id, with its document's uri."""
        return [
            (uri, t) for uri, doc in self._docs.items() for t in doc.findings if t.id == finding_id
        ]

    # -- updates -------------------------------------------------------------------------

    def set_findings(self, uri: str, text: str, findings: Iterable[Finding]) -> ChangeResult:
        """Replace the findings of `uri` whose current text is `text`.

        A finding whose lines in `text` still hold its quoted code is placed there. Otherwise
        (the editor's text differs from what the review saw) it is re-anchored by its code:
        moved when found identical up to whitespace, placed stale when only found fuzzily,
        withdrawn when not found. `result.moved` lists findings placed elsewhere than the
        review's line. Closed findings (see `close`) are left out.

        A finding already tracked in this very text (a review's early findings, shown again
        when it finishes) stays where the edits since moved it, if its code is still there:
        re-anchoring by code alone cannot tell two identical quoted lines apart."""
        old = self._docs.get(uri)
        doc = DocumentFindings(uri, text)
        tracked_here = (
            {t.id: t for t in old.findings if not t.stale}
            if old is not None and old.lines == doc.lines
            else {}
        )
        self._docs[uri] = doc
        result = ChangeResult()
        for finding in findings:
            if finding.id in self._closed:
                continue
            before = tracked_here.get(finding.id)
            if before is not None:
                kept = doc.place(finding, before.start_line, before.end_line, stale=False)
                if doc.matches(kept):
                    if finding.line != kept.start_line + 1:
                        result.moved.append(finding.id)
                    doc.findings.append(kept)
                    continue
            tracked = self._place_reviewed(doc, text, finding, result)
            if tracked is not None:
                doc.findings.append(tracked)
        doc.findings.sort(key=lambda t: (t.start, t.end))
        return result

    def apply_change(
        self,
        uri: str,
        rng: Range | None,
        new_text: str,
        encoding: Encoding = "utf-32",
    ) -> ChangeResult:
        """Apply one `contentChanges` entry to the stored text and move the findings with it.

        `rng` None is a full replacement: every finding is re-anchored. Otherwise `rng` is in
        `encoding` units of the text *before* this change (pass the client's raw range and its
        negotiated encoding: the conversion uses the tracker's own copy of the text, which is
        still the old one). Apply the entries of one notification in order. An untracked uri
        is ignored."""
        doc = self._docs.get(uri)
        if doc is None:
            return ChangeResult()
        if rng is None:
            return self.reanchor(uri, new_text)
        start = self._to_points(doc, rng.start_line, rng.start_char, encoding)
        end = self._to_points(doc, rng.end_line, rng.end_char, encoding)
        if end < start:
            start, end = end, start
        new_end = self._splice(doc, start, end, new_text)
        return self._shift(doc, start, end, new_end, new_text)

    def reanchor(self, uri: str, text: str) -> ChangeResult:
        """Re-anchor every finding of `uri` in `text` (full replacement, branch switch, pull):
        each is located by its quoted code near its current line."""
        doc = self._docs.get(uri)
        if doc is None:
            return ChangeResult()
        old = doc.findings
        fresh = DocumentFindings(uri, text)
        self._docs[uri] = fresh
        result = ChangeResult()
        for tracked in old:
            placed = self._locate(fresh, text, tracked.finding, tracked.start_line + 1)
            if placed is None:
                result.withdrawn.append(tracked.id)
                continue
            if placed.stale and not tracked.stale:
                result.stale.append(tracked.id)
            elif tracked.stale and not placed.stale:
                result.refreshed.append(tracked.id)
            elif placed.range != tracked.range:
                result.moved.append(tracked.id)
            fresh.findings.append(placed)
        fresh.findings.sort(key=lambda t: (t.start, t.end))
        return result

    def close(self, finding_id: str) -> list[str]:
        """Stop tracking a finding (its fix was applied, or it was dismissed) and never publish
        it again until `clear()`. Returns the uris whose diagnostics must be re-sent."""
        self._closed.add(finding_id)
        touched: list[str] = []
        for uri, doc in self._docs.items():
            kept = [t for t in doc.findings if t.id != finding_id]
            if len(kept) != len(doc.findings):
                doc.findings = kept
                touched.append(uri)
        return touched

    def is_closed(self, finding_id: str) -> bool:
        return finding_id in self._closed

    def remove_file(self, uri: str) -> None:
        self._docs.pop(uri, None)

    def clear(self) -> None:
        """Forget every document, finding and closed id (a new review starts from scratch)."""
        self._docs.clear()
        self._closed.clear()

    # -- internals -----------------------------------------------------------------------

    @staticmethod
    def _to_points(doc: DocumentFindings, line: int, char: int, encoding: Encoding) -> Position:
        if encoding != "utf-32" and 0 <= line < len(doc.lines):
            char = from_client_units(line_content(doc.lines[line]), char, encoding)
        return doc.clamp(line, char)

    def _place_reviewed(
        self, doc: DocumentFindings, text: str, finding: Finding, result: ChangeResult
    ) -> TrackedFinding | None:
        # An approximate finding's quote is not in the file by definition: it is placed by the
        # same fuzzy match the review made, not compared line for line.
        if finding.line is not None and finding.anchor is not AnchorState.APPROXIMATE:
            first = finding.line - 1
            last = max(first, (finding.end_line or finding.line) - 1)
            if first >= 0 and last < len(doc.lines):
                on_line = doc.place(finding, first, last, stale=False)
                # Without quoted code there is nothing to compare or re-anchor by: the review's
                # line is all there is, so trust it.
                if not finding.existing_code.strip() or doc.matches(on_line):
                    return on_line
        placed = self._locate(doc, text, finding, finding.line)
        if placed is None:
            result.withdrawn.append(finding.id)
        elif placed.stale:
            result.stale.append(finding.id)
        else:
            result.moved.append(finding.id)
        return placed

    @staticmethod
    def _locate(
        doc: DocumentFindings, text: str, finding: Finding, hint_line: int | None
    ) -> TrackedFinding | None:
        from redline.review.anchoring import locate

        # `text` is doc's text, passed in so a document with many findings is joined once.
        anchor = locate(finding.existing_code, text, hint_line)
        if anchor.start_line is None or anchor.end_line is None:
            return None
        # A fuzzy match is the same place with different code: the finding may no longer apply,
        # unless the review itself could only place it approximately.
        stale = anchor.method == "fuzzy" and finding.anchor is not AnchorState.APPROXIMATE
        return doc.place(finding, anchor.start_line - 1, anchor.end_line - 1, stale=stale)

    @staticmethod
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
        self,
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
                        t._set(new_start, new_finish)
                        result.moved.append(t.id)
                kept.append(t)
                continue
            # The edit overlaps the code.
            if es <= fs and ee >= fe and fs != fe:
                result.withdrawn.append(t.id)  # the whole quoted code was replaced
                continue
            new_start = fs if fs <= es else es
            new_finish = moved(fe) if fe > ee else new_end
            t._set(new_start, new_finish)
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
