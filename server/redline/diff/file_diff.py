"""What the diff parser (parse.py) produces: one `FileDiff` per file section of a git diff, one
`Hunk` per `@@` block, with the facts later stages read off them (new-side range, added line
numbers, anchors for function lookup, the new blob id).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Hunk:
    header: str  # the "@@ ... @@" line
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[str] = field(default_factory=list)  # body lines as in the diff, prefix included
    # The first character of each body line (" " for an empty line): lets callers find the
    # '+'/'-' lines with string operations instead of a Python loop over every line.
    tags: str = ""
    added: list[int] = field(default_factory=list)  # new-side numbers of '+' lines
    removed: int = 0  # number of '-' lines
    _anchors: list[int] | None = None

    @property
    def changed(self) -> int:
        return len(self.added) + self.removed

    @property
    def new_range(self) -> tuple[int, int]:
        """New-side (start, end); a hunk with no new lines is pinned to the line above it."""
        if self.new_count > 0:
            return (self.new_start, self.new_start + self.new_count - 1)
        line = max(self.new_start, 1)
        return (line, line)

    @property
    def anchors(self) -> list[int]:
        """New-side lines that locate the change, for finding the functions it touches.

        Every added line, plus, for a run of removals not replaced by additions, the line just
        above the gap (what is left around the removed code). Computed on first use: only
        files whose functions are looked up need it.
        """
        if self._anchors is None:
            self._anchors = self.added if not self.removed else _anchors(self)
        return self._anchors


def _anchors(hunk: Hunk) -> list[int]:
    out: list[int] = []
    new_line = hunk.new_start
    removal_open = False
    for line in hunk.lines:
        tag = line[:1]
        if tag == "+":
            out.append(new_line)
            new_line += 1
            removal_open = False
        elif tag == "-":
            removal_open = True
        elif tag != "\\":
            if removal_open:
                out.append(max(new_line - 1, 1))
                removal_open = False
            new_line += 1
    if removal_open:
        out.append(max(new_line - 1, 1))
    return out


@dataclass(slots=True)
class FileDiff:
    old_path: str | None = None  # None when the old side is /dev/null
    new_path: str | None = None  # None when the new side is /dev/null
    header: list[str] = field(default_factory=list)  # raw header lines, "diff --git" to "+++"
    hunks: list[Hunk] = field(default_factory=list)
    is_new: bool = False
    is_deleted: bool = False
    is_copy: bool = False
    binary: bool = False
    submodule: bool = False
    # A side of it is a symbolic link (mode 120000): its "content" is a target path, reviewed
    # as a link (diff/links.py), never as code.
    link: bool = False
    combined: bool = False  # a merge's combined diff (`diff --cc`), not split into hunks
    # (section bytes, cap) when the section was over the per-file cap and cut to its header
    # while the diff was read (git/section_cap.py): nothing of its content is here.
    cut: tuple[int, int] | None = None
    error: str | None = None

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or "<unknown>"

    @property
    def new_blob(self) -> str | None:
        """The new side's blob id as the `index` line gives it (abbreviated), if it names one."""
        for line in self.header:
            if line.startswith("index "):
                ids = line[len("index ") :].split(" ", 1)[0].rstrip("\r")
                new = ids.partition("..")[2]
                return new if new.strip("0") else None  # all zeros: no new side
        return None
