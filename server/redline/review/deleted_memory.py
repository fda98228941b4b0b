"""A deleted file's names looked up in project memory instead of `git grep`.

Memory's graph says which files use or define each name; only those files are read, each as
it is now (the change's new side, through the scope's hardened reads) and scanned line by line
the way `git grep -w` would, so the uses and definitions found are the ones the grep would
find, with the same filters after (review/deleted.py). The index may be stale or incomplete,
so memory is trusted only for files whose indexed blob is the new side's: every other tracked
file (one changed since the build or by this change, one memory does not index such as a
pyproject.toml entry point or the docs, one over memory's caps) is read and scanned too, as
the grep would. What memory's graph does not record in a file it indexed is not seen (a name
only inside a string literal there), nor a file over the review's size cap (the grep reads
it). Without a usable new tree or a listing, the caller falls back to the grep.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from redline.errors import RedlineError
from redline.git import INDEX_REV, UNAVAILABLE_REV
from redline.git.process import decode
from redline.git.scopes import ScopeDiff
from redline.tools.names import is_git_name, is_secret_path

if TYPE_CHECKING:
    from redline.memory.query import ProjectMemory

logger = logging.getLogger(__name__)

LIST_TIMEOUT: Final = 30.0
LIST_MAX_OUTPUT: Final = 64 * 1024 * 1024


class MemoryUnusable(Exception):
    """Memory cannot answer for this scope: the caller greps instead."""


def files_to_scan(scope: ScopeDiff, memory: ProjectMemory, words: Iterable[str]) -> list[str]:
    """The new side's files that may use or define one of `words`, in git grep's order."""
    tracked = _tracked(scope)
    indexed = memory.store.indexed_files()
    changed = _changed_paths(scope.diff_text)
    wanted: set[str] = set()
    for word in words:
        wanted.update(edge.path for edge in memory.uses(word))
        wanted.update(stored.symbol.path for stored in memory.definitions(word))
    out = []
    for path, blob in tracked.items():
        fresh = indexed.get(path) == blob and path not in changed
        if fresh and path not in wanted:
            continue  # memory knows this version of the file: it has none of the names
        if not _readable(path):
            continue
        out.append(path)
    return sorted(out, key=lambda p: p.encode("utf-8", "surrogateescape"))


def scan(scope: ScopeDiff, paths: list[str]) -> Iterable[tuple[str, str, str]]:
    """(path, line number, line) of every line of `paths`' new versions, as grep_hits gives a
    hit (the caller picks the lines holding a name)."""
    scope.prefetch_new(paths)
    for path in paths:
        try:
            data = scope.read_new(path)
        except RedlineError as exc:
            logger.info("deleted-file search: %s not read: %s", path, exc.message)
            continue
        if data is None or b"\0" in data[:8192]:
            continue
        for n, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
            yield path, str(n), line


def _tracked(scope: ScopeDiff) -> dict[str, str]:
    """path → blob id of the new side's tracked files (the commit's tree, else the index;
    the work tree's own edits are in the diff, which files_to_scan reads anyway)."""
    rev = scope.new_rev
    if rev == UNAVAILABLE_REV:
        raise MemoryUnusable("the change's commits are not available locally")
    if rev is None or rev == INDEX_REV:
        args: tuple[str, ...] = ("ls-files", "-s", "-z")
    else:
        args = ("ls-tree", "-r", "-z", "--full-tree", rev)
    try:
        result = scope.runner.run_git(
            scope.repo_root, *args, timeout=LIST_TIMEOUT, max_output=LIST_MAX_OUTPUT
        )
    except RedlineError as exc:
        raise MemoryUnusable(exc.message) from None
    if result.returncode != 0:
        raise MemoryUnusable(f"listing the tree failed: {result.error_text}")
    out: dict[str, str] = {}
    for record in decode(result.stdout).split("\0"):
        meta, tab, path = record.partition("\t")
        fields = meta.split()
        if not tab or len(fields) < 3:
            continue
        # ls-tree: "<mode> blob <oid>"; ls-files -s: "<mode> <oid> <stage>".
        oid = fields[2] if fields[1] in ("blob", "commit", "tree") else fields[1]
        if fields[0] in ("100644", "100755"):
            out[path] = oid
    return out


def _changed_paths(diff_text: str) -> set[str]:
    from redline.diff.parse import parse_git_diff

    return {fd.new_path for fd in parse_git_diff(diff_text) if fd.new_path}


def _readable(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    return not (is_secret_path(parts) or any(is_git_name(p) for p in parts))


__all__ = ["MemoryUnusable", "files_to_scan", "scan"]
