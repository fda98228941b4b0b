"""Hard links: a file inside the work tree may be another name of a file outside it.

Path checks see only the name they are given, and a hard link's name is as good as any other:
`notes.txt` in the tree can be the same file as `~/.ssh/id_rsa`. A regular file with more than
one link is therefore read only when every one of its names is inside the work tree, counted
by walking the tree for the same inode. Ordinary files have one link and cost nothing; a
hard-linked file costs one walk of the tree (the walk stops as soon as every name is found).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


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


def refusal(shown_name: str) -> str:
    return (
        f"refusing {shown_name}: it is a hard link to a file that also has a name outside the "
        "repository"
    )


__all__ = ["all_names_inside", "refusal"]
