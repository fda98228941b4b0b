"""Which new-side lines of a change a forge accepts review comments on.

GitHub and GitLab both anchor a review comment to a line of the pull request's diff: an added
or a context line of a hunk (a multi-line GitHub comment must also stay within one hunk). A
line outside every hunk is rejected (GitHub answers 422), so the placement step moves such
findings into the summary comment instead of losing them.
"""

from __future__ import annotations

from dataclasses import dataclass

from redline.diff.file_diff import Hunk
from redline.diff.parse import parse_git_diff


@dataclass(frozen=True)
class HunkLines:
    """New-side lines of one hunk: `first`..`last`, with the added ones listed."""

    first: int
    last: int
    added: frozenset[int]
    # new-side → old-side numbers of the context lines (GitLab anchors those by both)
    context: dict[int, int]

    def __contains__(self, line: object) -> bool:
        return isinstance(line, int) and self.first <= line <= self.last


@dataclass(frozen=True)
class DiffMap:
    """The commentable lines of every file the change touches, by new path."""

    files: dict[str, tuple[HunkLines, ...]]
    renamed: dict[str, str]  # new path → old path, for renames

    def hunk(self, path: str, line: int) -> HunkLines | None:
        """The hunk holding new-side `line` of `path`, or None when the diff does not show it."""
        for hunk in self.files.get(path, ()):
            if line in hunk:
                return hunk
        return None

    def covers(self, path: str, first: int, last: int) -> bool:
        """`first`..`last` all lie within one hunk: one comment may span them."""
        hunk = self.hunk(path, first)
        return hunk is not None and last in hunk

    def is_added(self, path: str, line: int) -> bool:
        hunk = self.hunk(path, line)
        return hunk is not None and line in hunk.added

    def old_line(self, path: str, line: int) -> int | None:
        """The old-side number of a context line; None for an added line or one not shown."""
        hunk = self.hunk(path, line)
        return None if hunk is None else hunk.context.get(line)

    def old_path(self, path: str) -> str:
        """The file's path before the change (a rename's old name), else `path` itself."""
        return self.renamed.get(path, path)


def diff_map(diff_text: str) -> DiffMap:
    files: dict[str, tuple[HunkLines, ...]] = {}
    renamed: dict[str, str] = {}
    for fd in parse_git_diff(diff_text):
        if fd.new_path is None or fd.binary:
            continue  # a deleted file has no new side to comment on
        if fd.old_path is not None and fd.old_path != fd.new_path:
            renamed[fd.new_path] = fd.old_path
        hunks = tuple(_hunk_lines(hunk) for hunk in fd.hunks if hunk.new_count > 0)
        if hunks:
            files[fd.new_path] = hunks
    return DiffMap(files, renamed)


def _hunk_lines(hunk: Hunk) -> HunkLines:
    context: dict[int, int] = {}
    old, new = hunk.old_start, hunk.new_start
    for tag in hunk.tags:
        if tag == "+":
            new += 1
        elif tag == "-":
            old += 1
        elif tag != "\\":
            context[new] = old
            old += 1
            new += 1
    return HunkLines(
        hunk.new_start, hunk.new_start + hunk.new_count - 1, frozenset(hunk.added), context
    )
