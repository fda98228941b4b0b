"""Symbolic links in a diff: reviewed as links, never as code.

git stores a link (mode 120000) as a blob holding its target path, and its diff shows that path
as the file's one line. Read as the file it is named for (`helpers.py`), the target is code that
does not parse or names nothing ("Syntax error", "Undefined name"): a High finding that fails
`--fail-on high` for a change no analyzer can judge. So a link's section becomes one skipped unit
whose reason says what changed — the target, before and after — and whether it now leads outside
the repository (what a reviewer should look at: a link to `~/.ssh/id_rsa` or `/etc/passwd` is
read by whatever later follows it). Nothing of it is linted, sent to a model or shown as code in
the editor. The target is the change author's text: control characters are escaped and it is
cut short.
"""

from __future__ import annotations

import posixpath
from typing import Final

from redline.diff.file_diff import FileDiff
from redline.git.process import strip_control

LINK_MODE: Final = "120000"
_TARGET_MAX: Final = 120
_MODE_HEADERS: Final = ("new file mode ", "deleted file mode ", "index ", "old mode ", "new mode ")


def is_link_header(line: str) -> bool:
    """Whether a diff header line gives a side of the file the link mode."""
    line = line.rstrip("\r")
    return line.startswith(_MODE_HEADERS) and line.endswith(" " + LINK_MODE)


def link_reason(fd: FileDiff) -> str:
    """Why fd (a link's section) is not reviewed as code, with its target change."""
    old = _target(fd, "-")
    new = _target(fd, "+")
    if fd.is_deleted:
        what = f"symbolic link to {_show(old)} deleted"
    elif old is None:
        what = f"new symbolic link to {_show(new)}"
    elif new is None or old == new:
        what = f"symbolic link to {_show(old)}"
    else:
        what = f"symbolic link: target changed {_show(old)} -> {_show(new)}"
    note = ""
    if not fd.is_deleted and new is not None and leaves_repository(fd.path, new):
        note = "; it points outside the repository"
    return f"{what}{note} (reviewed as a link, not as code)"


def leaves_repository(link_path: str, target: str) -> bool:
    """Whether `target`, read from the link's directory, names a place outside the repository
    (by its spelling: an absolute path, or more `..` than the link is deep)."""
    if target.startswith("/") or target.startswith("~"):
        return True
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link_path), target))
    return joined == ".." or joined.startswith("../")


def _target(fd: FileDiff, tag: str) -> str | None:
    for hunk in fd.hunks:
        for line in hunk.lines:
            if line.startswith(tag):
                return line[1:].rstrip("\r\n")
    return None


def _show(target: str | None) -> str:
    if target is None:
        return "(unknown)"
    text = strip_control(target)
    if len(text) > _TARGET_MAX:
        text = text[: _TARGET_MAX - 1] + "…"
    return repr(text)
