"""Find the repository a path belongs to, in Python, without asking git.

git's own discovery reads the repository's configuration (core.worktree, extensions, ...) and
follows a `.git` *file* wherever its `gitdir:` line points — into another repository on disk,
if the author of the tree under review wrote it so. Redline therefore finds the repository
itself and accepts only what it can verify:

- a `.git` directory (a symbolic link is accepted only when it stays inside the work tree);
- a `.git` file whose `gitdir:` names a linked worktree, `<common>/worktrees/<name>`, whose
  `gitdir` back-pointer names this very `.git` file;
- a `.git` file whose `gitdir:` names a submodule's directory, `.../modules/<name>`, whose
  `core.worktree` back-pointer names this very work tree.

Anything else is a clear error. The repository's `core.worktree` is never honoured: the work
tree is the directory that holds `.git`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redline.errors import RepositoryError

_GITFILE_MAX: Final = 4096


@dataclass(frozen=True)
class RepoLocation:
    """Where a repository's parts are: all paths resolved (no symbolic links)."""

    worktree: Path  # the top of the working tree
    git_dir: Path  # this work tree's git directory: HEAD, index, pseudo-refs
    common_dir: Path  # objects, refs, packed-refs, config (== git_dir but for linked worktrees)

    @property
    def kind(self) -> str:
        if self.git_dir != self.common_dir:
            return "linked worktree"
        if self.git_dir != self.worktree / ".git":
            return "submodule"
        return "repository"


# Reads one key from a config file as data (`git config --file F --get KEY`); None if unset.
# Given by the caller (the runner), so this module starts no process of its own.
ConfigReader = Callable[[Path, str], "str | None"]


def looks_like_git_dir(path: Path) -> bool:
    """A directory with the parts every git directory has (HEAD, objects or commondir, refs)."""
    return (
        (path / "HEAD").is_file()
        and ((path / "objects").is_dir() or (path / "commondir").is_file())
        and (path / "refs").is_dir()
    )


def discover(path: Path, read_config: ConfigReader) -> RepoLocation | None:
    """The repository whose work tree contains path; None when there is none.

    Raises RepositoryError for a `.git` that cannot be trusted (a `.git` file pointing at a
    repository Redline cannot verify, a `.git` link leaving the tree) and for a path inside a
    git directory or a bare repository, which have no work tree to review.
    """
    start = Path(os.path.realpath(path))
    if not start.is_dir():
        start = start.parent
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        try:
            st = os.lstat(dot_git)
        except (FileNotFoundError, NotADirectoryError):
            if directory != start and directory.name == ".git" and looks_like_git_dir(directory):
                break  # start is inside a .git directory
            continue
        except OSError as exc:
            raise RepositoryError(f"cannot read {dot_git}: {exc.strerror}") from exc
        location = _location(directory, dot_git, st, read_config)
        if start == location.git_dir or start.is_relative_to(location.git_dir):
            break
        return location
    if any(looks_like_git_dir(d) for d in (start, *start.parents)):
        raise RepositoryError(
            f"{path} is not inside a git working tree (bare repository or .git directory)",
            hint="run Redline in the repository's working tree",
        )
    return None


def _location(
    worktree: Path, dot_git: Path, st: os.stat_result, read_config: ConfigReader
) -> RepoLocation:
    if stat.S_ISLNK(st.st_mode):
        target = Path(os.path.realpath(dot_git))
        if not target.is_relative_to(worktree):
            raise RepositoryError(
                f"{dot_git} is a symbolic link to {target}, outside the working tree",
                hint="Redline reviews a repository only through its own .git directory",
            )
        st = os.stat(target)
        dot_git = target
    if stat.S_ISDIR(st.st_mode):
        if (dot_git / "commondir").exists():
            raise RepositoryError(
                f"{dot_git} is a linked worktree's git directory used as a repository",
                hint="open the worktree itself (the directory its .git file is in)",
            )
        if not looks_like_git_dir(dot_git):
            raise RepositoryError(f"{dot_git} is not a git directory (no HEAD, objects or refs)")
        return RepoLocation(worktree, dot_git, dot_git)
    if stat.S_ISREG(st.st_mode):
        return _from_gitfile(worktree, dot_git, read_config)
    raise RepositoryError(f"{dot_git} is neither a directory nor a file")


def _from_gitfile(worktree: Path, dot_git: Path, read_config: ConfigReader) -> RepoLocation:
    target = _read_gitfile(dot_git)
    if target is None:
        raise RepositoryError(f"{dot_git} is not a valid .git file (no 'gitdir:' line)")
    git_dir = Path(os.path.realpath(worktree / target))
    refused = RepositoryError(
        f"{dot_git} points to {git_dir}, which Redline cannot verify as this work tree's "
        "linked worktree or submodule",
        hint="a .git file is accepted only when the git directory it names points back at "
        "this work tree (`git worktree add` and `git submodule` set that up)",
    )
    if not git_dir.is_dir() or not (git_dir / "HEAD").is_file():
        raise refused
    commondir = _read_small(git_dir / "commondir")
    if commondir is not None:
        # Linked worktree: <common>/worktrees/<name>, with a back-pointer to our .git file.
        common = Path(os.path.realpath(git_dir / commondir.strip()))
        back = _read_small(git_dir / "gitdir")
        if (
            back is None
            or git_dir.parent != common / "worktrees"
            or not looks_like_git_dir(common)
            or Path(os.path.realpath(git_dir / back.strip())) != dot_git
        ):
            raise refused
        return RepoLocation(worktree, git_dir, common)
    # Submodule: .../modules/<name>, whose core.worktree names this work tree.
    if "modules" not in git_dir.parts[:-1] or not looks_like_git_dir(git_dir):
        raise refused
    back = read_config(git_dir / "config", "core.worktree")
    if back is None or Path(os.path.realpath(git_dir / back)) != worktree:
        raise refused
    return RepoLocation(worktree, git_dir, git_dir)


def _read_small(path: Path) -> str | None:
    """A small regular file's text (never a FIFO or device), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        data = fh.read(_GITFILE_MAX + 1)
    if len(data) > _GITFILE_MAX or b"\0" in data:
        return None
    return os.fsdecode(data).split("\n", 1)[0].rstrip("\r")


def _read_gitfile(path: Path) -> str | None:
    line = _read_small(path)
    if line is None or not line.startswith("gitdir: "):
        return None
    target = line[len("gitdir: ") :]
    return target or None


__all__ = ["ConfigReader", "RepoLocation", "discover", "looks_like_git_dir"]
