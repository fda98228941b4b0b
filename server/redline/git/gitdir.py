"""What the private view takes from a repository's real git directory, looked at first.

The view (view.py) links refs, packed-refs, logs, shallow, info/exclude, reftable, pseudo-refs
and the object store into its own directory, names the real index for git, and copies HEAD
and the config. All of these are the author's — an archive's `.git` is as much attacker text
as its files — and were once used unlooked: a symbolic link inside `.git` (objects, refs,
objects/pack with packed-refs, an objects/?? directory) made Redline review another
repository, `shallow` linked to any file put that file's first line into a git error, and
HEAD linked to /proc/self/pagemap crashed. So, before the view links anything:

- every path it links or names, and every entry below the directories git walks (refs/**,
  logs/**, reftable/**, objects/**: the ??/ fan-out, pack/, info/), must be a regular file or
  a directory once links are resolved, inside the repository's git directory (its common
  directory, which holds a linked worktree's own directory too). A link that stays inside is
  followed, and what it leads to is checked the same way (a directory is walked too); a link
  out, a FIFO, a device or a socket is a RepositoryError naming the path;
- the files Redline reads itself (HEAD, config, objects/info/alternates) are read with
  nofollow.read_file: a regular file, size-bounded, no link at any level below the git
  directory (so nothing is opened by a name that was checked a moment before).

Links git creates in a git directory: none (HEAD as a link to refs/heads/<branch> is from
core.preferSymlinkRefs, long deprecated; view.py reads it as that branch). A `.git` that
shares another repository's parts through links (contrib's git-new-workdir, objects on
another disk) is refused: from inside the repository it is indistinguishable from the attack.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from redline.errors import RepositoryError
from redline.git.process import strip_control
from redline.nofollow import NoFollowError, kind, read_file

# Directories whose whole contents git may open (checked entry by entry).
WALKED: Final = ("refs", "logs", "reftable", "objects")

_HINT: Final = (
    "Redline reads a repository only through its own git directory; a .git that borrows "
    "another repository's refs or objects through links cannot be reviewed (`git worktree "
    "add` makes a second work tree that can)"
)


def shown(path: Path | str) -> str:
    return strip_control(str(path))


class GitDirFiles:
    """The files of one git directory (`root`, a real path: no links in it), checked."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def resolve(self, path: Path) -> Path | None:
        """path with every link resolved, when that stays inside root; None when nothing is
        there. A link out is a RepositoryError."""
        if not os.path.lexists(path):
            return None
        return self._inside(path)

    def _inside(self, path: Path) -> Path:
        real = Path(os.path.realpath(path))
        if real != self.root and not real.is_relative_to(self.root):
            raise RepositoryError(
                f"refusing {shown(path)}: it is a symbolic link to {shown(real)}, outside the "
                f"repository's git directory {shown(self.root)}",
                hint=_HINT,
            )
        return real

    def check_file(self, path: Path) -> Path | None:
        """path, resolved and checked: a regular file inside root, or absent (None)."""
        real = self.resolve(path)
        if real is None:
            return None
        mode = self._mode(path, real)
        if mode is None:
            return None
        if not stat.S_ISREG(mode):
            raise self._odd(path, mode)
        return real

    def check_tree(self, path: Path) -> Path | None:
        """path, a directory git may read anything below: resolved, and every entry below it
        a regular file or a directory inside root (links followed and checked, directories
        they lead to walked as well). None when absent."""
        real = self.resolve(path)
        if real is None:
            return None
        mode = self._mode(path, real)
        if mode is None:
            return None
        if not stat.S_ISDIR(mode):
            raise self._odd(path, mode, wanted="a directory")
        seen: set[tuple[int, int]] = set()
        stack = [real]
        while stack:
            directory = stack.pop()
            st = os.stat(directory)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            try:
                # In name order: the same entry is named first on every run.
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError as exc:
                raise RepositoryError(f"cannot read {shown(directory)}: {exc.strerror}") from exc
            for entry in entries:
                self._check_entry(entry, stack)
        return real

    def _check_entry(self, entry: os.DirEntry[str], stack: list[Path]) -> None:
        # d_type answers these without a system call on the usual file systems; an entry that
        # is no link is the same followed or not.
        path = Path(entry.path)
        if entry.is_symlink():
            target = self._inside(path)
            mode = self._mode(path, target)
            if mode is None:
                return  # a dangling link inside: git finds nothing there
            if stat.S_ISDIR(mode):
                stack.append(target)
            elif not stat.S_ISREG(mode):
                raise self._odd(path, mode)
        elif entry.is_dir():
            stack.append(path)
        elif not entry.is_file():
            raise self._odd(path, entry.stat().st_mode)

    def read(self, path: Path, max_bytes: int) -> bytes | None:
        """The bytes of the regular file path (inside root), or None when there is none."""
        real = self.resolve(path)
        if real is None:
            return None
        parts = real.relative_to(self.root).parts
        try:
            return read_file(self.root, parts, max_bytes)
        except NoFollowError as exc:
            raise RepositoryError(f"refusing {shown(path)}: it {exc.what}", hint=_HINT) from None
        except OSError as exc:
            raise RepositoryError(f"cannot read {shown(path)}: {exc.strerror}") from exc

    def _mode(self, path: Path, real: Path) -> int | None:
        try:
            return os.stat(real).st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:  # a link loop, a permission problem
            raise RepositoryError(f"cannot read {shown(path)}: {exc.strerror}") from exc

    def _odd(self, path: Path, mode: int, wanted: str = "a regular file") -> RepositoryError:
        return RepositoryError(
            f"refusing {shown(path)}: it is {kind(mode)}, not {wanted}",
            hint="a git directory holds only regular files and directories",
        )


__all__ = ["WALKED", "GitDirFiles", "shown"]
