"""Review scopes: what the user asked to review, turned into a diff and its file versions.

Sides of a ScopeDiff:
- old_rev: a commit id, or None for the empty tree (unborn branch, root commit).
- new_rev: a commit id; None for the working tree (uncommitted); INDEX_REV for the index
  (staged); UNAVAILABLE_REV when the commit is not in the local repository (a PR read through
  gh whose commits were never fetched) — then read_new returns None.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from redline.errors import GitCommandError, RepositoryError, UsageError
from redline.git.cr_breaks import lf_content
from redline.git.difftext import stats_suffix
from redline.git.hardlinks import all_names_inside
from redline.git.hardlinks import refusal as hardlink_refusal
from redline.git.names import short, validate_revision
from redline.git.pr import UNAVAILABLE_REV, resolve_pr
from redline.git.process import strip_control
from redline.git.repo import DEFAULT_MAX_FILE_BYTES, Repo, Resolved, where_label
from redline.git.runner import GitRunner
from redline.git.stream import DiffConsumer, ReadAhead
from redline.model import DiffStats
from redline.requests import ScopeKind, ScopeRequest

INDEX_REV: Final = ":index"


@dataclass
class ScopeDiff:
    request: ScopeRequest
    label: str
    repo_root: Path
    diff_text: str
    old_rev: str | None
    new_rev: str | None
    stats: DiffStats
    runner: GitRunner = field(default_factory=GitRunner, repr=False, compare=False)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # New-side versions read while the diff streamed (resolve_scope with a consumer); taken
    # into _new_cache on the first read.
    read_ahead: ReadAhead | None = field(default=None, repr=False, compare=False)
    # What the user should know about how the change was read (files left out, objects not
    # read); the review's coverage section lists them.
    notes: list[str] = field(default_factory=list)
    _new_cache: dict[str, bytes | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def is_empty(self) -> bool:
        return self.diff_text == ""

    def _repo(self) -> Repo:
        return Repo(self.repo_root, self.runner)

    def read_old(self, path: str) -> bytes | None:
        """path's contents on the old side; None if it does not exist there."""
        if self.old_rev is None or self.old_rev == UNAVAILABLE_REV:
            return None
        return lf_content(self._repo().read_blob(self.old_rev, path, self.max_file_bytes))

    def prefetch_new(self, paths: list[str]) -> None:
        """Read many new-side versions at once (committed sides only): one `ls-tree` and one
        `cat-file --batch` instead of several processes per file. Later read_new calls for
        these paths are served from memory."""
        if self.new_rev is None or self.new_rev in (INDEX_REV, UNAVAILABLE_REV):
            return
        self._take_read_ahead()
        missing = [p for p in dict.fromkeys(paths) if p not in self._new_cache]
        if missing:
            self._new_cache.update(
                self._repo().read_blobs(self.new_rev, missing, self.max_file_bytes)
            )

    def _take_read_ahead(self) -> None:
        read_ahead, self.read_ahead = self.read_ahead, None
        if read_ahead is None:
            return
        contents = read_ahead.results()
        if read_ahead.rev == self.new_rev:
            for path, data in contents.items():
                self._new_cache.setdefault(path, data)

    def read_new(self, path: str) -> bytes | None:
        """path's contents on the new side; None if it does not exist there.

        Raises FileTooLargeError over max_file_bytes, RepositoryError for paths that would
        leave the repository or are not regular files (FIFOs, devices).
        """
        if self.read_ahead is not None:
            self._take_read_ahead()
        if path in self._new_cache:
            data = self._new_cache[path]
        else:
            data = self._new_cache[path] = self._read_new_uncached(path)
        # A file whose lines end in a bare CR, with the line breaks its diff was given
        # (git/cr_breaks.py).
        return lf_content(data)

    def _read_new_uncached(self, path: str) -> bytes | None:
        if self.new_rev is None:
            return self._repo().read_worktree(path, self.max_file_bytes)
        if self.new_rev == INDEX_REV:
            return self._repo().read_index(path, self.max_file_bytes)
        if self.new_rev == UNAVAILABLE_REV:
            return None
        return self._repo().read_blob(self.new_rev, path, self.max_file_bytes)


def scope_uncommitted(repo: Repo, arg: str | None = None) -> Resolved:
    """Staged, unstaged and untracked (not ignored) changes against HEAD."""
    head = repo.head()
    untracked, notes = _without_outside_hard_links(repo.root, repo.untracked_files())
    with repo.private_index() as index:
        if untracked:
            # Intent-to-add entries make `git diff HEAD` show untracked files as new files,
            # binary ones as "Binary files ... differ"; only the private copy is modified.
            repo.git(
                "add",
                "--intent-to-add",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in untracked),
                index_file=index,
            )
        base = head or repo.empty_tree()
        try:
            diff_text, stats = repo.diff(base, index_file=index)
        except GitCommandError:
            # A file git cannot open fails the whole diff: list the changes without reading
            # them, and diff only what can be read (git/unreadable.py). Only on failure, so a
            # review pays nothing for it; a consumer fed part of the failed diff rebuilds from
            # the final text (UnitBuilder.finish compares what it was fed).
            changes = repo.worktree_changes(base, index_file=index)
            if not changes.unreadable:
                raise
            diff_text, stats = repo.diff(
                base, index_file=index, paths=changes.readable, withheld=changes.unreadable
            )
    label = f"uncommitted changes on {repo.where(head)}" + stats_suffix(stats, diff_text)
    return Resolved(label, diff_text, head, None, stats, notes)


def _without_outside_hard_links(root: Path, paths: list[str]) -> tuple[list[str], list[str]]:
    """Untracked files minus those that are hard links to a file with a name outside the
    tree: git would read them into the diff like any other file."""
    kept: list[str] = []
    notes: list[str] = []
    for path in paths:
        try:
            st = os.lstat(root / path)
        except OSError:
            kept.append(path)
            continue
        if all_names_inside(root, st):
            kept.append(path)
        else:
            notes.append(f"not reviewed: {hardlink_refusal(repr(strip_control(path)))}")
    return kept, notes


def scope_staged(repo: Repo, arg: str | None = None) -> Resolved:
    """The index against HEAD (the empty tree before the first commit)."""
    head = repo.head()
    diff_text, stats = repo.diff(head or repo.empty_tree(), cached=True)
    label = f"staged changes on {repo.where(head)}" + stats_suffix(stats, diff_text)
    return Resolved(label, diff_text, head, INDEX_REV, stats)


def scope_branch(repo: Repo, arg: str | None = None) -> Resolved:
    """HEAD against its merge-base with the base branch (default: origin/HEAD, main, master)."""
    # HEAD, the base and the branch name (for the label) are independent lookups, one git
    # process each: they run at once instead of one after another before the diff can start.
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="redline-scope") as pool:
        branch = pool.submit(repo.current_branch)
        base = pool.submit(repo.base, arg)
        head = repo.head()
        if head is None:
            raise RepositoryError(
                f"{where_label(branch.result(), None)}: there are no commits on this branch to "
                "compare with a base",
                hint="commit first, or review the uncommitted changes instead",
            )
        base_name, base_oid = base.result()
    merge_base = repo.merge_base(base_oid, head)
    if merge_base is None:
        raise RepositoryError(f"HEAD and '{base_name}' have no common history")
    diff_text, stats = repo.diff(merge_base, head)
    label = (
        f"branch {where_label(branch.result(), head)} vs {base_name} "
        f"(merge-base {short(merge_base)})" + stats_suffix(stats, diff_text)
    )
    return Resolved(label, diff_text, merge_base, head, stats)


def scope_commit(repo: Repo, arg: str | None = None) -> Resolved:
    """One commit against its first parent (a root commit against the empty tree)."""
    oid = repo.commit(_need_arg("commit", arg))
    parents, subject = repo.commit_info(oid)
    parent = parents[0] if parents else None
    diff_text, stats = repo.diff(parent or repo.empty_tree(), oid)
    note = " (merge, vs first parent)" if len(parents) > 1 else ""
    label = f'commit {short(oid)} "{subject}"{note}' + stats_suffix(stats, diff_text)
    return Resolved(label, diff_text, parent, oid, stats)


def scope_since(repo: Repo, arg: str | None = None) -> Resolved:
    """Everything committed after REF up to HEAD (REF itself excluded, like REF..HEAD)."""
    ref = _need_arg("since", arg)
    head = repo.head()
    if head is None:
        raise RepositoryError(f"{repo.where(None)}: there are no commits to review")
    oid = repo.commit(ref)
    # If REF is not an ancestor of HEAD, diffing from REF would show its own side's changes
    # reverted; the merge-base keeps the diff to what HEAD added.
    start = repo.merge_base(oid, head)
    if start is None:
        raise RepositoryError(f"'{ref}' and HEAD have no common history")
    count = repo.count_commits(oid, head)
    diff_text, stats = repo.diff(start, head)
    via = "" if start == oid else f", merge-base {short(start)}"
    label = (
        f"since {_display(ref, oid)} ({count} commit{'' if count == 1 else 's'}{via})"
        + stats_suffix(stats, diff_text)
    )
    return Resolved(label, diff_text, start, head, stats)


def scope_range(repo: Repo, arg: str | None = None) -> Resolved:
    """A..B: B against A. A...B: B against merge-base(A, B). An empty side means HEAD."""
    text = _need_arg("range", arg)
    three = "..." in text
    sep = "..." if three else ".."
    left, _, right = text.partition(sep)
    left_oid = repo.commit(validate_revision(left or "HEAD"))
    right_oid = repo.commit(validate_revision(right or "HEAD"))
    old = left_oid
    via = ""
    if three:
        merge_base = repo.merge_base(left_oid, right_oid)
        if merge_base is None:
            raise RepositoryError(f"'{left}' and '{right}' have no common history")
        old = merge_base
        via = f" (merge-base {short(merge_base)})"
    diff_text, stats = repo.diff(old, right_oid)
    label = f"range {text}{via}" + stats_suffix(stats, diff_text)
    return Resolved(label, diff_text, old, right_oid, stats)


def scope_pr(repo: Repo, arg: str | None = None) -> Resolved:
    return resolve_pr(repo, arg)


# Each handler gets the request's argument after ScopeRequest.check(): present where the kind
# needs one, absent where it takes none.
_SCOPES: Final[dict[ScopeKind, Callable[[Repo, str | None], Resolved]]] = {
    ScopeKind.UNCOMMITTED: scope_uncommitted,
    ScopeKind.STAGED: scope_staged,
    ScopeKind.BRANCH: scope_branch,
    ScopeKind.COMMIT: scope_commit,
    ScopeKind.SINCE: scope_since,
    ScopeKind.RANGE: scope_range,
    ScopeKind.PR: scope_pr,
}


def resolve_scope(
    repo: Path,
    request: ScopeRequest,
    *,
    runner: GitRunner | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    consumer: DiffConsumer | None = None,
) -> ScopeDiff:
    """Compute the diff for request in the repository containing repo.

    An empty diff is not an error: diff_text is "" and the caller says "nothing to review".
    With a consumer, a diff git computes is fed to it while git writes it, and the new-side
    versions it asks for are read meanwhile (see Repo.diff); a diff that comes from elsewhere
    (GitHub's, for a PR without local commits) is not fed, so the consumer must check.
    """
    handler = _SCOPES[request.check().kind]
    runner = runner or GitRunner()
    root = runner.find_repo_root(repo)
    git_repo = Repo(root, runner, consumer=consumer, max_file_bytes=max_file_bytes)
    resolved = handler(git_repo, request.arg)
    return ScopeDiff(
        request=request,
        label=resolved.label,
        repo_root=root,
        diff_text=resolved.diff_text,
        old_rev=resolved.old_rev,
        new_rev=resolved.new_rev,
        stats=resolved.stats,
        runner=runner,
        max_file_bytes=max_file_bytes,
        read_ahead=git_repo.read_ahead,
        notes=[*resolved.notes, *runner.notes(root)],
    )


def _display(ref: str, oid: str) -> str:
    """The user's name for a revision, or a short id when they typed a (long) id."""
    lowered = ref.lower()
    if len(ref) >= 7 and all(c in "0123456789abcdef" for c in lowered) and oid.startswith(lowered):
        return short(oid)
    return ref


def _need_arg(kind: str, arg: str | None) -> str:
    """The argument ScopeRequest.check() made sure a kind that needs one has (typed as such)."""
    if not arg:
        raise UsageError(f"the {kind} scope needs an argument")
    return arg
