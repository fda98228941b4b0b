"""Work-tree files Redline cannot read, found before git is asked for their diff.

git reads a changed work-tree file to write its diff; one it may not open (permission denied,
an I/O error) makes the whole `git diff` fail ("error: open(...): Permission denied / fatal:
cannot hash"), and with it the review of every other file. So when the uncommitted scope's diff
fails, it lists the changes without reading any content (`git diff --raw --no-renames`: a
work-tree side git would read shows as the all-zero id), tries to open each of those files the
way git would, and when one cannot be opened runs the diff again on the other paths only (when
none is unreadable, the first failure stands). A review whose diff succeeds pays nothing.
Each unreadable file gets a section of its own: its header and Redline's withheld line
(hardlinks.WITHHELD_MARK), which the parser makes the file's skip reason — so the report
lists it as skipped with why, and nothing of it reaches an analyzer or a model.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from redline.git.hardlinks import WITHHELD_MARK
from redline.git.process import split_nul

# Modes whose work-tree side git reads as file content (a link is read with readlink, which
# needs no read permission; a submodule is compared by commit).
_REGULAR: Final = frozenset({b"100644", b"100755"})


@dataclass
class WorktreeChanges:
    """What `git diff --raw -z --no-renames` said: every path it named, and the ones whose
    work-tree content cannot be read, with why."""

    paths: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)

    @property
    def readable(self) -> list[str]:
        return [p for p in self.paths if p not in self.unreadable]


def worktree_changes(root: Path, raw: bytes) -> WorktreeChanges:
    """Parse raw `-z` records (":<old mode> <new mode> <old id> <new id> <status>\\0<path>\\0")
    and try to open every work-tree file git would read."""
    out = WorktreeChanges()
    records = split_nul(raw)
    i = 0
    while i + 1 < len(records):
        meta, name = records[i], records[i + 1]
        i += 2
        fields = meta.lstrip(b":").split(b" ")
        path = os.fsdecode(name)
        out.paths.append(path)
        if len(fields) < 5 or fields[1] not in _REGULAR or fields[3].strip(b"0"):
            continue
        reason = unreadable_reason(root / path)
        if reason is not None:
            out.unreadable[path] = reason
    return out


def unreadable_reason(path: Path) -> str | None:
    """Why path cannot be opened for reading, or None when it can (or is gone: git then shows
    it deleted, which needs no read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None  # a link now: git reads it with readlink
        what = (
            "permission denied"
            if exc.errno in (errno.EACCES, errno.EPERM)
            else (os.strerror(exc.errno).lower() if exc.errno else "error")
        )
        return f"cannot be read ({what}); the rest of the change was reviewed"
    os.close(fd)
    return None


def withheld_section(path: str, reason: str) -> bytes:
    """A diff section for path that holds no content: its header and the withheld line."""
    quoted = _quote("a/" + path), _quote("b/" + path)
    return f"diff --git {quoted[0]} {quoted[1]}\n{WITHHELD_MARK}{reason}\n".encode()


def _quote(name: str) -> str:
    """name C-quoted the way git quotes one (header_paths.unquote_path reads it back): every
    byte outside printable ASCII as octal, and `"` and backslash escaped."""
    out = ['"']
    for byte in os.fsencode(name):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    out.append('"')
    return "".join(out)
