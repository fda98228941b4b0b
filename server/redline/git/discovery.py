"""Find the repository a path belongs to, in Python, without asking git.

git's own discovery reads the repository's configuration (core.worktree, extensions, ...) and
follows a `.git` *file* wherever its `gitdir:` line points — into another repository on disk,
if the author of the tree under review wrote it so. Redline therefore finds the repository
itself and accepts only what it can verify:

- a `.git` directory (a symbolic link is accepted only when it stays inside the work tree);
- a `.git` file whose `gitdir:` names a linked worktree, `<common>/worktrees/<name>` of a git
  directory `<common>`, whose `commondir` leads back to `<common>` and whose `gitdir`
  back-pointer names this very `.git` file;
- a `.git` file whose `gitdir:` names a submodule's directory, `<super>/modules/<name>` (a
  name may hold slashes) of a git directory `<super>`, whose `core.worktree` back-pointer
  names this very work tree.

What `git worktree add` and `git submodule` make keeps that git directory outside the work
tree it serves (the main repository's `.git`, the superproject's), so a `.git` file naming one
*inside* the work tree is refused: that is a git directory the tree's author built, and its
parts are the author's to point anywhere. Anything else is a clear error too. The files read
on the way (the `.git` file, `commondir`, `gitdir`, the submodule's config) are small regular
files opened without following a link. The repository's `core.worktree` is never honoured: the
work tree is the directory that holds `.git`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redline.errors import RepositoryError
from redline.nofollow import kind

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


# Reads one key from a config file's bytes as data (`git config --file - --get KEY`); None if
# unset. Given by the caller (the runner), so this module starts no process of its own.
ConfigReader = Callable[[bytes, str], "str | None"]
_CONFIG_MAX: Final = 4 * 1024 * 1024


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
            _odd_head(dot_git / "HEAD")
            raise RepositoryError(f"{dot_git} is not a git directory (no HEAD, objects or refs)")
        return RepoLocation(worktree, dot_git, dot_git)
    if stat.S_ISREG(st.st_mode):
        return _from_gitfile(worktree, dot_git, read_config)
    raise RepositoryError(f"{dot_git} is neither a directory nor a file")


def _odd_head(head: Path) -> None:
    """A HEAD that is there but no file (a FIFO, a device): say that, not "no HEAD"."""
    try:
        mode = os.lstat(head).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
        raise RepositoryError(
            f"refusing {head}: it is {kind(mode)}, not a regular file",
            hint="a git directory holds only regular files and directories",
        )


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
    if inside(git_dir, worktree):
        raise _built_inside(dot_git, git_dir)
    if not git_dir.is_dir() or not (git_dir / "HEAD").is_file():
        raise refused
    commondir = _read_small(git_dir / "commondir")
    if commondir is not None:
        # Linked worktree: <common>/worktrees/<name>, with a back-pointer to our .git file.
        common = Path(os.path.realpath(git_dir / commondir.strip()))
        back = _read_small(git_dir / "gitdir")
        if inside(common, worktree):
            raise _built_inside(dot_git, common)
        if (
            back is None
            or not linked_worktree_shape(git_dir, common)
            or not looks_like_git_dir(common)
            or Path(os.path.realpath(git_dir / back.strip())) != dot_git
        ):
            raise refused
        return RepoLocation(worktree, git_dir, common)
    # Submodule: <super>/modules/<name>, whose core.worktree names this work tree.
    if not looks_like_git_dir(git_dir) or not any(
        looks_like_git_dir(s) for s in superproject_candidates(git_dir)
    ):
        raise refused
    config = _read_small(git_dir / "config", _CONFIG_MAX, whole=True)
    back = read_config(os.fsencode(config), "core.worktree") if config is not None else None
    if back is None or Path(os.path.realpath(git_dir / back)) != worktree:
        raise refused
    return RepoLocation(worktree, git_dir, git_dir)


def inside(path: Path, tree: Path) -> bool:
    """Whether path is tree or below it, compared by components (/repo2 is not in /repo)."""
    return path == tree or path.is_relative_to(tree)


def linked_worktree_shape(git_dir: Path, common: Path) -> bool:
    """`git worktree add` makes <common>/worktrees/<name>, one level below (both paths are
    resolved: no "." or ".." in them)."""
    return git_dir.parent == common / "worktrees"


def superproject_candidates(git_dir: Path) -> list[Path]:
    """The directories that would be git_dir's superproject's git directory: the parent of
    each `modules` directory above git_dir (a submodule's name may hold slashes, and one may
    be named `modules/...`), nearest first."""
    return [p.parent for p in git_dir.parents if p.name == "modules"]


def _built_inside(dot_git: Path, git_dir: Path) -> RepositoryError:
    return RepositoryError(
        f"{dot_git} points to {git_dir}, a git directory inside the working tree",
        hint="a linked worktree's or submodule's git directory lives in its main repository's "
        "or superproject's .git, outside the tree it serves; one inside was built by the "
        "tree's author, so Redline does not read it",
    )


def _read_small(path: Path, limit: int = _GITFILE_MAX, *, whole: bool = False) -> str | None:
    """A small regular file's text (its first line, or all of it), or None: never a FIFO or
    device, and never through a link (O_NOFOLLOW on the last component; the directories
    above it were resolved by the caller)."""
    # O_NONBLOCK: opening a FIFO must not wait; what was opened is looked at below. (Python
    # makes every descriptor close-on-exec itself, PEP 446.)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        data = fh.read(limit + 1)
    if len(data) > limit or b"\0" in data:
        return None
    text = os.fsdecode(data)
    return text if whole else text.partition("\n")[0].rstrip("\r")


def _read_gitfile(path: Path) -> str | None:
    line = _read_small(path)
    if line is None or not line.startswith("gitdir: "):
        return None
    target = line[len("gitdir: ") :]
    return target or None


__all__ = [
    "ConfigReader",
    "RepoLocation",
    "discover",
    "inside",
    "linked_worktree_shape",
    "looks_like_git_dir",
    "superproject_candidates",
]
