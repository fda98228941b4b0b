"""Where each finding goes when posting with `--inline`: a comment on its line, the summary,
or nowhere because an earlier run already posted it.

Pure: the diff map says which lines the forge takes comments on, `posted` holds the finding ids
an earlier run's comments carry. A comment spans the finding's lines (and carries a suggestion
the reader can commit) only when the improved code replaces exactly those lines and all of
them are in one hunk; otherwise it sits on the finding's first line with the code shown as
text. A finding with no line, or a line the diff does not show, goes to the summary — never
lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from redline.model import Finding
from redline.publish.diff_map import DiffMap


@dataclass(frozen=True)
class InlineComment:
    finding: Finding
    path: str
    first: int  # first new-side line the comment spans
    last: int  # the line it is attached to (== first for a one-line comment)
    suggestion: bool  # the body carries a suggestion replacing first..last
    old_line: int | None = None  # the old-side number of `last` when it is a context line


@dataclass
class Placement:
    inline: list[InlineComment] = field(default_factory=list)
    outside: list[Finding] = field(default_factory=list)  # not in the diff: the summary
    already: list[Finding] = field(default_factory=list)  # posted by an earlier run
    capped: list[Finding] = field(default_factory=list)  # the write cap left no write for them
    cap: int = 0  # the cap that was reached (publish.max_writes), when `capped` is not empty

    def move_to_summary(self, comment: InlineComment) -> None:
        """A comment the forge refused after all (a 422): its finding goes to the summary."""
        self.inline.remove(comment)
        self.outside.append(comment.finding)

    def cap_at(self, comments: list[InlineComment], cap: int) -> None:
        """The write cap is reached: `comments` are not posted, their findings go to the
        summary, which says so."""
        for comment in comments:
            self.inline.remove(comment)
            self.capped.append(comment.finding)
        self.cap = cap


def place(findings: list[Finding], diff: DiffMap, posted: set[str]) -> Placement:
    out = Placement()
    for finding in findings:
        if finding.id in posted:
            out.already.append(finding)
            continue
        comment = _comment_for(finding, diff)
        if comment is None:
            out.outside.append(finding)
        else:
            out.inline.append(comment)
    return out


def _comment_for(finding: Finding, diff: DiffMap) -> InlineComment | None:
    if finding.line is None:
        return None
    first = finding.line
    last = max(finding.end_line or first, first)
    if finding.fix_applicable and diff.covers(finding.file, first, last):
        return InlineComment(
            finding, finding.file, first, last, True, diff.old_line(finding.file, last)
        )
    if diff.hunk(finding.file, first) is None:
        return None
    return InlineComment(
        finding, finding.file, first, first, False, diff.old_line(finding.file, first)
    )
