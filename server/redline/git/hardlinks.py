"""Hard links: a file inside the work tree may be another name of a file outside it.

Path checks see only the name they are given, and a hard link's name is as good as any other:
`notes.txt` in the tree can be the same file as `~/.ssh/id_rsa`. A regular file with more than
one link is therefore read only when every one of its names is inside the work tree, counted
by walking the tree for the same inode. Ordinary files have one link and cost nothing; a
hard-linked file costs one walk of the tree (the walk stops as soon as every name is found).
`LinkCensus` answers many such questions with one walk (worktree_guard.py, which applies the
rule to what git itself reads from the work tree).

Where the content of such a file would have been, git's output gets one header line,
WITHHELD_MARK and the refusal; diff/parse.py turns it into the section's error, so the file is
skipped with that reason in the report, and the model is never shown it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

# Starts the line that stands for a withheld file's content in a diff, right after the
# section's `diff` line (worktree_guard.py), like git/section_cap.py's marker: git writes no
# "\\ " line in a header, and no content line can start with one.
WITHHELD_MARK: Final = "\\ Redline: withheld: "


def all_names_inside(root: Path, st: os.stat_result) -> bool:
    """True when st (a regular file's stat) has no name outside the work tree at root."""
    if not stat.S_ISREG(st.st_mode) or st.st_nlink <= 1:
        return True
    found = 0
    stack = [str(root)]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != ".git":  # the repository's own files, not the tree's
                            stack.append(entry.path)
                        continue
                    if entry.inode() != st.st_ino or not entry.is_file(follow_symlinks=False):
                        continue
                    if entry.stat(follow_symlinks=False).st_dev == st.st_dev:
                        found += 1
                except OSError:
                    continue
                if found >= st.st_nlink:
                    return True
    return False


class LinkCensus:
    """all_names_inside for many files with one walk of the tree: the names of every regular
    file, by inode number (d_ino from the directory listing, no stat per file), taken on the
    first question and kept."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._by_inode: dict[int, list[str]] | None = None

    def all_names_inside(self, st: os.stat_result) -> bool:
        if not stat.S_ISREG(st.st_mode) or st.st_nlink <= 1:
            return True
        if self._by_inode is None:
            self._by_inode = _names_by_inode(self.root)
        found = 0
        for path in self._by_inode.get(st.st_ino, ()):
            try:
                other = os.lstat(path)
            except OSError:
                continue
            if other.st_dev == st.st_dev and other.st_ino == st.st_ino:
                found += 1
        return found >= st.st_nlink


def _names_by_inode(root: Path) -> dict[int, list[str]]:
    names: dict[int, list[str]] = {}
    stack = [str(root)]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != ".git":  # the repository's own files, not the tree's
                            stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        names.setdefault(entry.inode(), []).append(entry.path)
                except OSError:
                    continue
    return names


def refusal(shown_name: str) -> str:
    return (
        f"refusing {shown_name}: it is a hard link to a file that also has a name outside the "
        "repository"
    )


__all__ = ["WITHHELD_MARK", "LinkCensus", "all_names_inside", "refusal"]
