"""Reads a file version straight from the work tree (no git), refusing anything that leaves it.

The path is attacker text and the tree is attacker-controlled: every component is checked with
lstat, symlinks on the way are refused, and the file is opened without following links.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from redline.errors import FileTooLargeError, RepositoryError
from redline.git.hardlinks import all_names_inside
from redline.git.hardlinks import refusal as hardlink_refusal
from redline.git.names import check_rel_path
from redline.git.process import strip_control


def _is_git_dir_name(part: str) -> bool:
    # .git in any spelling the file systems treat as the same name (case, trailing dots/spaces,
    # 8.3 short name), and with zero-width characters removed.
    cleaned = strip_control(part).rstrip(". ").casefold()
    return cleaned in (".git", "git~1")


def read_worktree_file(root: Path, path: str, max_bytes: int) -> bytes | None:
    """Contents of path in the working tree, refusing anything that leaves the repository.

    Intermediate symlinks are refused; a symlink as the final component reads as its link
    text, exactly as git stores and diffs it, so it is never followed.
    """
    parts = check_rel_path(path)
    if any(_is_git_dir_name(p) for p in parts):
        raise RepositoryError(f"refusing to read inside .git: {strip_control(path)!r}")
    current = root
    for part in parts[:-1]:
        current = current / part
        try:
            st = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            raise RepositoryError(
                f"refusing to read {strip_control(path)!r}: {part!r} is a symbolic link"
            )
        if not stat.S_ISDIR(st.st_mode):
            return None
    target = current / parts[-1]
    try:
        st = os.lstat(target)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(st.st_mode):
        return os.fsencode(os.readlink(target))
    if stat.S_ISDIR(st.st_mode):
        return None  # a submodule or a directory, not a file version
    if not stat.S_ISREG(st.st_mode):
        raise RepositoryError(f"refusing to read {strip_control(path)!r}: not a regular file")
    if st.st_size > max_bytes:
        raise FileTooLargeError(
            f"{strip_control(path)} is {st.st_size} bytes, over the {max_bytes}-byte read limit"
        )
    # O_NOFOLLOW/O_NONBLOCK: the file may have been swapped for a symlink or FIFO since lstat.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RepositoryError(f"cannot read {strip_control(path)!r}: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise RepositoryError(f"refusing to read {strip_control(path)!r}: not a regular file")
        if not all_names_inside(root, st):
            raise RepositoryError(hardlink_refusal(repr(strip_control(path))))
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLargeError(f"{strip_control(path)} is over the {max_bytes}-byte read limit")
    return data


__all__ = ["read_worktree_file"]
