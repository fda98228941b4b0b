"""Findings that follow the code while the user edits: moved, marked stale, or withdrawn.

`FindingTracker` keeps every open document's text and findings (`DocumentFindings`,
document_findings.py). A finding is placed on the whole lines of the code it quotes. After
that, incremental edits (`textDocument/didChange` ranges) only *shift* it (shifting.py: moved,
made stale, fresh again, or withdrawn by the edit, at the cost of a few integer comparisons).

A full-text replacement (`range` None) and a change on disk (`reanchor`) re-anchor every finding
by its quoted code with `anchoring.locate`: an identical match (up to whitespace) places it
fresh, a fuzzy match places it stale, no match withdraws it. A withdrawn finding is kept (a
bounded number per document) and shown again when its code reappears (revival.py: an undo, a
moved line); a closed one (`close`: fixed or dismissed) never comes back. A finding the review
could only place approximately (its quote is not in the file) is placed by the fuzzy match,
fresh.

Positions are 0-based `(line, character)` with characters counted in Python str code points
(not UTF-16 units); `from_client_units`/`to_client_units` convert a column on one line for the
server. Line breaks are `\\n`, `\\r\\n` and `\\r` (as in LSP); a column past the end of a line
means the end of the line, a line past the end of the document means the end of the document.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from redline.enums import AnchorState
from redline.lsp.document_findings import (
    ChangeResult,
    DocumentFindings,
    TrackedFinding,
    quote_code,
)
from redline.lsp.revival import revive_anywhere
from redline.lsp.shifting import apply_edit
from redline.lsp.textlines import Encoding, Range

if TYPE_CHECKING:
    from redline.model import Finding

# `redline.review.anchoring` (hence pydantic and the model) is imported inside the functions
# that use it: the language server imports this module at start-up, before any finding exists.

StaleMode = Literal["withdraw", "mark"]


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
                kept = doc.place(
                    finding, before.start_line, before.end_line, stale=False, code=before.code
                )
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
        return apply_edit(doc, rng, new_text, encoding)

    def reanchor(self, uri: str, text: str) -> ChangeResult:
        """Re-anchor every finding of `uri` in `text` (full replacement, branch switch, pull):
        each is located by its quoted code near its current line."""
        doc = self._docs.get(uri)
        if doc is None:
            return ChangeResult()
        old = doc.findings
        fresh = DocumentFindings(uri, text)
        fresh.withdrawn = doc.withdrawn
        self._docs[uri] = fresh
        result = ChangeResult()
        for tracked in old:
            placed = self._locate(fresh, text, tracked.finding, tracked.start_line + 1)
            if placed is None:
                result.withdrawn.append(tracked.id)
                fresh.withdraw(tracked)
                continue
            if placed.stale and not tracked.stale:
                result.stale.append(tracked.id)
            elif tracked.stale and not placed.stale:
                result.refreshed.append(tracked.id)
            elif placed.range != tracked.range:
                result.moved.append(tracked.id)
            fresh.findings.append(placed)
        revive_anywhere(fresh, result)  # withdrawn findings whose code is back
        fresh.findings.sort(key=lambda t: (t.start, t.end))
        return result

    def close(self, finding_id: str) -> list[str]:
        """Stop tracking a finding (its fix was applied, or it was dismissed) and never publish
        it again until `clear()`. Returns the uris whose diagnostics must be re-sent."""
        self._closed.add(finding_id)
        touched: list[str] = []
        for uri, doc in self._docs.items():
            doc.withdrawn.pop(finding_id, None)  # nor bring it back when its code reappears
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

    def _place_reviewed(
        self, doc: DocumentFindings, text: str, finding: Finding, result: ChangeResult
    ) -> TrackedFinding | None:
        # An approximate finding's quote is not in the file by definition: it is placed by the
        # same fuzzy match the review made, not compared line for line.
        if finding.line is not None and finding.anchor is not AnchorState.APPROXIMATE:
            first = finding.line - 1
            last = max(first, (finding.end_line or finding.line) - 1)
            if first >= 0 and last < len(doc.lines):
                # Without quoted code there is nothing to compare or re-anchor by: the review's
                # line is all there is, so trust it.
                if not finding.existing_code.strip():
                    return doc.place(finding, first, last, stale=False)
                on_line = doc.place(finding, first, last, stale=False, code=quote_code(finding))
                if doc.matches(on_line):
                    return on_line
        placed = self._locate(doc, text, finding, finding.line)
        if placed is None:
            result.withdrawn.append(finding.id)
            # Kept in case the user types its code back (revival.py).
            hint = max(0, (finding.line or 1) - 1)
            doc.withdraw(doc.place(finding, hint, hint, stale=True))
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
