"""Files below a directory the attacker controls, opened without following a link at any level.

A repository's work tree and its git directory are the author's: any name in them may be a
symbolic link (to `~/.ssh`, to `/proc/self/pagemap`, to another repository), a FIFO that blocks
whoever opens it, or a device. Checking a path and then opening it by name leaves the gap
between the two; so these helpers open the top directory once (it is the caller's: the user
chose it, and it may itself be reached through a link), then every component below it
relative to the previous one's descriptor with O_NOFOLLOW, and check what they opened with
fstat. A link at any level below the top, or anything but a directory on the way and a
regular file at the end, is a `NoFollowError` naming the path; nothing is read or written.

Writes replace the file atomically: a temporary file is created next to it (O_EXCL, relative
to the same directory descriptor), written, synced and renamed over the target inside that
directory, so the rename can never land anywhere else.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC


class NoFollowError(Exception):
    """A path below the top that is a link, or not the kind of file expected."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(f"{path} {what}")
        self.path = path
        self.what = what

    @property
    def message(self) -> str:
        return str(self)


def kind(mode: int) -> str:
    """What a file of this mode is, for a message ("a FIFO (named pipe)", ...)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_parts(parts: Sequence[str]) -> None:
    """Plain names only: no empty, '.', '..' or separator-bearing component."""
    for part in parts:
        if part in ("", ".", "..") or "/" in part or "\0" in part:
            raise ValueError(f"not a plain path component: {part!r}")


def _refusal(path: Path, fd_parent: int, name: str) -> NoFollowError:
    """Why opening `name` below fd_parent failed with ELOOP/ENOTDIR: say what it is."""
    return NoFollowError(path, f"is {kind(os.lstat(name, dir_fd=fd_parent).st_mode)}")


@contextmanager
def open_dir(
    top: Path, parts: Sequence[str], *, create: bool = False, mode: int = 0o755
) -> Iterator[int]:
    """A descriptor of the directory top/parts[0]/..., every component below top opened with
    O_NOFOLLOW. With create, missing components are made (mkdir relative to their parent's
    descriptor, so a link planted meanwhile is never followed). Raises NoFollowError, or
    FileNotFoundError when a component is missing and create is off."""
    check_parts(parts)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    path = top
    try:
        for part in parts:
            path = path / part
            try:
                child = _open_dir_at(fd, part, path)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, mode, dir_fd=fd)
                child = _open_dir_at(fd, part, path)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_dir_at(fd: int, part: str, path: Path) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a link, or no directory
            raise _refusal(path, fd, part) from None
        raise


def read_file(top: Path, parts: Sequence[str], max_bytes: int) -> bytes | None:
    """The bytes of the regular file top/parts, read without following a link at any level
    below top; None when it (or a directory on the way) does not exist. Over max_bytes is a
    NoFollowError too: these are small files, never streams."""
    check_parts(parts)
    if not parts:
        raise ValueError("a file needs a name")
    path = top.joinpath(*parts)
    name = parts[-1]
    try:
        with open_dir(top, parts[:-1]) as dir_fd:
            # Looked at before it is opened: opening a device can do something by itself.
            _regular(path, os.lstat(name, dir_fd=dir_fd).st_mode)
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        # And what was opened, in case it was swapped since (O_NOFOLLOW: never for a link).
        st = os.fstat(fh.fileno())
        _regular(path, st.st_mode)
        if st.st_size > max_bytes:
            raise NoFollowError(path, f"is {st.st_size:,} bytes, over {max_bytes:,}")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew since fstat
        raise NoFollowError(path, f"is over {max_bytes:,} bytes")
    return data


def _regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise NoFollowError(path, f"is {kind(mode)}, not a regular file")


def replace_file(top: Path, parts: Sequence[str], data: bytes, *, mode: int = 0o644) -> None:
    """Write data as the regular file top/parts, atomically: the old file or the new one,
    never a mix. Directories on the way are created; a link at any level below top, or a
    target that is not a regular file (a link, a directory, a FIFO), is a NoFollowError. An
    existing file keeps its permission bits; a new one gets mode."""
    check_parts(parts)
    if not parts:
        raise ValueError("a file needs a name")
    path = top.joinpath(*parts)
    name = parts[-1]
    with open_dir(top, parts[:-1], create=True) as dir_fd:
        try:
            st = os.lstat(name, dir_fd=dir_fd)
        except FileNotFoundError:
            st = None
        if st is not None:
            _regular(path, st.st_mode)
            mode = stat.S_IMODE(st.st_mode)
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        # O_EXCL: a name planted there (a link out) fails the open instead of being followed.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o600, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fchmod(fh.fileno(), mode)
                os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)


__all__ = ["NoFollowError", "check_parts", "kind", "open_dir", "read_file", "replace_file"]
