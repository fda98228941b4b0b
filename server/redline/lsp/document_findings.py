"""One document's findings at their current places: the per-document state of the tracker.

`DocumentFindings` holds a document's current text as a line list (cheap to splice on an edit,
`shifting.py`), its `TrackedFinding`s and the withdrawn ones it keeps in case their code comes
back (`revival.py`); it clamps positions into the text (LSP's rule for out-of-range positions),
places a finding on whole lines, and tells whether a finding's lines still hold its code
(trailing whitespace is not content). `ChangeResult` is what an
operation of the tracker (`tracking.py`) did to a document's findings.

Positions are 0-based `(line, character)` with characters counted in Python str code points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from redline.lsp.textlines import Position, Range, line_content, split_keepends
from redline.review.quotes import split_lines

if TYPE_CHECKING:
    from redline.model import Finding

# Only the leaf review/quotes.py is imported from the engine (no pydantic, no model): the
# language server imports this module at start-up, before any finding exists.


@dataclass
class TrackedFinding:
    """A finding and where it is in the current text of its document.

    For a fresh finding the range is the whole quoted lines: `(first, 0)` to the end of the last
    line's text (its line break excluded). Read-only for callers: the tracker (tracking.py,
    shifting.py) updates it."""

    finding: Finding
    start_line: int
    start_char: int
    end_line: int
    end_char: int
    stale: bool = False
    # The code the finding stands for, one entry a line, trailing whitespace stripped: the lines
    # its quote was found on when it was placed fresh (the review's anchoring may have matched
    # up to whitespace, or past a copied gutter), else the quote itself. It is fresh exactly
    # when its range holds these lines; a withdrawn one comes back where they reappear.
    code: tuple[str, ...] = ()

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

    def move_to(self, start: Position, end: Position) -> None:
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


def quote_code(finding: Finding) -> tuple[str, ...]:
    """The quoted lines as compared with the document: trailing whitespace is not content."""
    return tuple(line.rstrip() for line in split_lines(finding.existing_code))


# Withdrawn findings a document keeps so that their code coming back (an undo, a line moved
# elsewhere) brings them back; the oldest is forgotten first. Each is a few hundred bytes.
MAX_WITHDRAWN = 100


class DocumentFindings:
    """One document's current text (as a line list, for cheap splicing) and its findings."""

    def __init__(self, uri: str, text: str) -> None:
        self.uri = uri
        self.lines = split_keepends(text)
        self.findings: list[TrackedFinding] = []
        # Withdrawn by an edit (or not found in this text), by id, oldest first: candidates to
        # come back (revival.py). Never a closed (fixed or dismissed) finding.
        self.withdrawn: dict[str, TrackedFinding] = {}

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
        """Whether the finding's range is whole lines holding exactly its code (trailing
        whitespace aside)."""
        first, last = tracked.start_line, tracked.end_line
        if tracked.start_char != 0 or last - first + 1 != len(tracked.code):
            return False
        return self.holds(tracked.code, first)

    def holds(self, code: tuple[str, ...], first: int) -> bool:
        """Whether the lines from `first` on are exactly `code` (trailing whitespace aside)."""
        if not code or first < 0 or first + len(code) > len(self.lines):
            return False
        return all(
            line_content(self.lines[first + i]).rstrip() == want for i, want in enumerate(code)
        )

    def place(
        self,
        finding: Finding,
        first: int,
        last: int,
        *,
        stale: bool,
        code: tuple[str, ...] | None = None,
    ) -> TrackedFinding:
        """A finding on the whole 0-based lines first..last. Its `code` is, unless given, the
        lines it is placed on when fresh, its quote when stale."""
        if code is None:
            code = (
                quote_code(finding)
                if stale
                else tuple(self.line_text(i).rstrip() for i in range(first, last + 1))
            )
        return TrackedFinding(finding, first, 0, last, len(self.line_text(last)), stale, code)

    def withdraw(self, tracked: TrackedFinding) -> None:
        """Keep a finding whose code is gone, in case it comes back (revival.py). One whose
        code is blank is not kept: any blank line would bring it back."""
        self.withdrawn.pop(tracked.id, None)
        if not any(tracked.code):
            return
        self.withdrawn[tracked.id] = tracked
        while len(self.withdrawn) > MAX_WITHDRAWN:
            del self.withdrawn[next(iter(self.withdrawn))]
