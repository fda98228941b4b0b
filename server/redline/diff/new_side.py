"""A file's new side: whether it is read, and what its content decides about the file.

The new version is what is reviewed, so it, not the name alone, settles the tags that decide
whether a file is skipped: large (over `max_file_bytes`), generated, vendored and minified
(content.py's checks, applied to the content here; without it, to what the diff shows of it). A
file git calls binary is read when its name says text, and becomes a text change when its new
side is text. Files whose name already skips them (lockfiles, vendored paths) are never read.
`will_read` says ahead of time which files will be read, so their versions can be fetched in
one batch while the units are built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from redline.config_models import ReviewSettings
from redline.diff.content import (
    HEAD_LINES,
    MINIFIED_MEAN_LINE,
    binary_content,
    bundled,
    minified,
    vendored_header,
)
from redline.diff.file_diff import FileDiff, Hunk
from redline.diff.file_kind import UNREAD_TAGS, kind_of
from redline.diff.tags import generated_header, ordered_tags
from redline.errors import RedlineError
from redline.model import ReviewUnit, Tag

ReadNew = Callable[[str], bytes | None]

_HEAD_BYTES = 4096  # how much of a file is searched for a generated-file header
# UNREAD_TAGS lived here; the verdict (file_kind.py) decides it now.
__all__ = [
    "UNREAD_TAGS",
    "ReadNew",
    "add_content_tags",
    "content_file_tags",
    "text_new_side",
    "will_read",
]


def text_new_side(
    fd: FileDiff, read_new: ReadNew | None, settings: ReviewSettings
) -> FileDiff | None:
    """fd as a text change when git called it binary but its new side is text (git calls a file
    binary when either side is; the new side is what is reviewed): the whole new text as added
    lines, since the old side has no lines to compare with. None when the new side is binary
    too, unreadable or over the size limit."""
    content = _read(read_new, fd.path)
    if content is None or len(content) > settings.max_file_bytes or binary_content(content):
        return None
    lines = content.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return None
    count = len(lines)
    hunk = Hunk(
        header=f"@@ -0,0 +1,{count} @@ (the old side was binary: the whole new text)",
        old_start=0,
        old_count=0,
        new_start=1,
        new_count=count,
        lines=["+" + line for line in lines],
        tags="+" * count,
        added=list(range(1, count + 1)),
    )
    return dataclasses.replace(fd, binary=False, hunks=[hunk])


def content_file_tags(
    path: str, tags: set[Tag], fd: FileDiff, read_new: ReadNew | None, settings: ReviewSettings
) -> bytes | None:
    """Add the tags the new version decides (large, generated, vendored, minified) to `tags`,
    the file's; return the version when it can be parsed for functions."""
    content = _read(read_new, path) if not tags & UNREAD_TAGS else None
    tags |= _judged_by_content(path, content, fd.hunks[0] if fd.hunks else None, fd.hunks)
    if content is not None and len(content) > settings.max_file_bytes:
        tags.add(Tag.LARGE)
        content = None  # too big to parse; also what the context provider will refuse to send
    return content


def _judged_by_content(
    path: str, content: bytes | None, first: Hunk | None, hunks: Sequence[Hunk]
) -> set[Tag]:
    """generated, vendored and minified, from the new version; without it, from what the diff
    shows of it (the top of the file when the first hunk starts there; the added lines)."""
    tags: set[Tag] = set()
    if content is not None:
        head = content[:_HEAD_BYTES].decode("utf-8", errors="replace").split("\n", HEAD_LINES)
        head = head[:HEAD_LINES]
        # Minified text has few newlines: the mean line length says so without splitting.
        newlines = content.count(b"\n")
        if len(content) / (newlines + 1) >= MINIFIED_MEAN_LINE and minified(
            content.decode("utf-8", errors="replace").split("\n")
        ):
            tags.add(Tag.MINIFIED)
    else:
        head = (
            [line[1:] for line in first.lines if line.startswith((" ", "+"))][:HEAD_LINES]
            if first is not None and first.new_start <= 1
            else []
        )
        added = [line[1:] for h in hunks for line in h.lines if line.startswith("+")]
        if minified(added):
            tags.add(Tag.MINIFIED)
    if generated_header(iter(head)):
        tags.add(Tag.GENERATED)
    if vendored_header(path, head):
        tags.add(Tag.VENDORED)
    if bundled(head):
        tags.add(Tag.MINIFIED)
    return tags


def add_content_tags(
    units: list[ReviewUnit], fd: FileDiff, read_new: ReadNew | None, settings: ReviewSettings
) -> None:
    """Give units built with content=False the tags their file's new version decides."""
    # What file_units._FileContext.of starts from (binary files are not read).
    tags = set(kind_of(fd.path).tags)
    if fd.binary:
        tags.add(Tag.BINARY)
    before = set(tags)
    content_file_tags(fd.path, tags, fd, read_new, settings)
    extra = tags - before
    if extra:
        for unit in units:
            unit.tags = ordered_tags(set(unit.tags) | extra)


def will_read(fd: FileDiff) -> bool:
    """Whether file_units._file_units reads this file's new version (keep in step with it)."""
    if fd.error or fd.combined or fd.cut or fd.submodule or fd.link or fd.is_deleted:
        return False
    kind = kind_of(fd.path)
    if fd.binary:
        return kind.maybe_text
    return bool(fd.hunks) and not kind.unread


def _read(read_new: ReadNew | None, path: str) -> bytes | None:
    if read_new is None:
        return None
    try:
        return read_new(path)
    # An unreadable file only costs metrics, not the review. Only what a failed read raises
    # (ScopeDiff.read_new: RepositoryError, FileTooLargeError, git failures; the file system:
    # OSError; a path the file system cannot encode: UnicodeError). Anything else is a bug,
    # which units_or_fallback reports on a skipped unit instead of dropping the metrics.
    except (RedlineError, OSError, UnicodeError):
        return None
