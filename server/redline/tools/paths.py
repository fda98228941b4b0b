"""Path safety for every tool that names a file: containment, `.git`, secrets, file types.

A path from the model is attacker text. It is checked twice: as written (tools/names.py, so
`.GIT/config`, `git~1`, `.g\u200bit` or `.env::$DATA` are refused even on a file system where
they would not alias anything), and after resolving symlinks (so `link -> ../../etc/passwd` or
`innocent -> .git/config` are refused). The file is then opened by walking the resolved
components from a descriptor of the repository root with O_NOFOLLOW at every step, so a
directory swapped for a symlink between the check and the open cannot redirect the read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from redline.agent.toolkit import ToolError
from redline.git.hardlinks import all_names_inside
from redline.git.hardlinks import refusal as hardlink_refusal
from redline.tools.names import check_names, is_git_name, is_secret_path, shown, split_user_path
from redline.tools.sandbox import ToolContext


@dataclass(frozen=True)
class RepoPath:
    """A checked repository path: as given, and its resolved components under the root."""

    given: str
    parts: tuple[str, ...]  # as written, normalized only for separators
    real_parts: tuple[str, ...]  # after resolving symlinks, relative to the root

    @property
    def rel(self) -> str:
        return "/".join(self.parts)

    @property
    def real_rel(self) -> str:
        return "/".join(self.real_parts)


def resolve_repo_path(ctx: ToolContext, path: str) -> RepoPath:
    """Check a model-supplied path and resolve it inside the repository, or raise ToolError."""
    parts = split_user_path(ctx.root, path)
    check_names(parts, path)
    real = Path(os.path.realpath(ctx.root.joinpath(*parts)))
    # Component comparison (Path.is_relative_to), never a string prefix: /repo2 is not /repo.
    if real != ctx.root and not real.is_relative_to(ctx.root):
        raise ToolError(f"refusing {shown(path)}: it resolves outside the repository")
    real_parts = real.relative_to(ctx.root).parts
    if not real_parts:
        raise ToolError(f"{shown(path)} is the repository root, not a file")
    if any(is_git_name(p) for p in real_parts):
        raise ToolError(f"refusing {shown(path)}: it resolves into the .git directory")
    if is_secret_path(real_parts):
        raise ToolError(f"refusing {shown(path)}: it resolves to a secret file")
    return RepoPath(path, tuple(parts), tuple(real_parts))


@contextmanager
def open_in_repo(ctx: ToolContext, rp: RepoPath) -> Iterator[int]:
    """A read-only descriptor of a regular file at rp, opened without following any symlink.

    Raises ToolError with a clear message for directories, FIFOs, devices, sockets, missing
    files, and anything that changed into a symlink since rp was resolved.
    """
    nofollow = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    dir_flags = os.O_RDONLY | os.O_DIRECTORY | nofollow
    fds: list[int] = []
    try:
        fds.append(os.open(ctx.root, dir_flags))
        for part in rp.real_parts[:-1]:
            fds.append(os.open(part, dir_flags, dir_fd=fds[-1]))
        name = rp.real_parts[-1]
        try:
            st = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
        except FileNotFoundError:
            raise ToolError(f"{shown(rp.given)} does not exist") from None
        _check_file_type(st.st_mode, rp.given)
        # O_NONBLOCK: if the file was swapped for a FIFO after the stat, open must not hang.
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | nofollow, dir_fd=fds[-1])
    except ToolError:
        raise
    except FileNotFoundError:
        raise ToolError(f"{shown(rp.given)} does not exist") from None
    except NotADirectoryError:
        raise ToolError(f"{shown(rp.given)} does not exist (a parent is not a directory)") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise ToolError(f"refusing {shown(rp.given)}: a symbolic link changed") from None
        raise ToolError(f"cannot open {shown(rp.given)}: {exc.strerror}") from None
    finally:
        for d in fds:
            os.close(d)
    try:
        st = os.fstat(fd)
        _check_file_type(st.st_mode, rp.given)
        if not all_names_inside(ctx.root, st):
            raise ToolError(hardlink_refusal(shown(rp.given)))
        yield fd
    finally:
        os.close(fd)


def _check_file_type(mode: int, given: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise ToolError(
            f"{shown(given)} is a directory; list files with the git tool (`ls-files -- <dir>`)"
        )
    if stat.S_ISFIFO(mode):
        kind = "a FIFO (named pipe)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    elif stat.S_ISLNK(mode):
        kind = "a symbolic link"
    else:
        kind = "not a regular file"
    raise ToolError(f"refusing {shown(given)}: it is {kind}, not a regular file")


def read_repo_bytes(ctx: ToolContext, path: str) -> tuple[RepoPath, bytes]:
    """The bytes of a regular file inside the repository, within limits.max_read_bytes."""
    rp = resolve_repo_path(ctx, path)
    limit = ctx.limits.max_read_bytes
    with open_in_repo(ctx, rp) as fd:
        size = os.fstat(fd).st_size
        if size > limit:
            raise ToolError(
                f"{shown(path)} is {size:,} bytes, over the {limit:,}-byte limit for one read"
            )
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(65536, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise ToolError(f"{shown(path)} is over the {limit:,}-byte limit for one read")
    return rp, data


def check_pathspec(ctx: ToolContext, path: str) -> str:
    """A path for git after `--`: inside the repository, not .git, not a secret file.

    Unlike resolve_repo_path the path need not exist (git may be asked about a deleted file).
    Returns the path as git should see it, relative to the root.
    """
    parts = split_user_path(ctx.root, path)
    check_names(parts, path)
    rel = "/".join(parts)
    real = Path(os.path.realpath(ctx.root.joinpath(*parts)))
    if real != ctx.root and not real.is_relative_to(ctx.root):
        raise ToolError(f"refusing {shown(path)}: it resolves outside the repository")
    real_parts = real.relative_to(ctx.root).parts
    if any(is_git_name(p) for p in real_parts) or is_secret_path(real_parts):
        raise ToolError(f"refusing {shown(path)}: it resolves into .git or to a secret file")
    return rel
