"""Where the repository files that shape a review are read from: the review's ground.

Three kinds of repository file decide how a change is reviewed: the settings file
(`.redline.toml`, or `[tool.redline]` in `pyproject.toml`: excludes, ruff rules, the gate), the
dismissals (`.redline/dismissed.toml` and `redline: ignore[...]` markers in the code) and the
instruction files (AGENTS.md, ...) the model is shown as the repository's guidance. The author of
a change can edit all three in the same change. So:

- A review of commits — branch, commit, since, range, pull or merge request — reads them from its
  base revision (the old side of its diff) through git, never from the work tree or the new side:
  the change under review cannot change how it is reviewed. A settings file that changes is
  reported (review/settings_change.py); a dismissal the change adds is named in the coverage as
  not honoured. Once merged, the edits are the base of the next review.
- A review of uncommitted or staged changes reviews the user's own work: its ground is the work
  tree (the settings file read as a regular file of the repository; the dismissals as the editor
  wrote them). That is what a pre-commit hook and the editor review.
- A pull request whose base commit is not in the local repository (read through gh, never
  fetched) has no ground: only the user's settings apply, nothing is dismissed, no instructions.
- `ask` has no scope: its ground is the repository's default branch (origin/HEAD, main, master),
  what its reviewer would merge into.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from redline import config_repo
from redline.config_repo import RepoLayer
from redline.errors import RedlineError, RepositoryError
from redline.files import DISMISSED_FILE
from redline.git.names import short
from redline.git.pr import UNAVAILABLE_REV
from redline.git.process import decode, split_nul
from redline.git.repo import Repo
from redline.git.runner import GitRunner
from redline.git.scopes import ScopeDiff
from redline.requests import ScopeKind
from redline.store.dismissal_matching import DismissalSource

GroundKind = Literal["base", "worktree", "none"]
Reader = config_repo.Reader

# Big enough for any instruction file (context/instructions.py reads at most 1 MiB) and for a
# file whose inline markers count.
MAX_GROUND_FILE_BYTES: Final = 4 * 1024 * 1024
_REGULAR = (b"100644", b"100755")
_LINK = b"120000"


@dataclass(frozen=True)
class Ground:
    kind: GroundKind
    label: str  # how notes name it: "the base 1a2b3c4", "the work tree"
    read: Reader  # a repository file as the ground has it; links refused
    # The same, following a symbolic link that stays inside the repository (CLAUDE.md ->
    # AGENTS.md): for instruction files.
    read_following: Reader

    def origin(self, name: str) -> str:
        if self.kind == "worktree":
            return f"repository file {name} (work tree)"
        return f"repository file {name} at {self.label}"

    def repo_layer(self) -> RepoLayer | None:
        """The repository's settings as the ground has them (config_repo.read_layer)."""
        return config_repo.read_layer(self.read, self.origin)

    def dismissals(self) -> DismissalSource | None:
        """The dismissals a review on this ground honours; None: the work tree's, as the
        editor writes them (store/dismissal_matching.py's default)."""
        if self.kind == "worktree":
            return None
        return DismissalSource(self.label, lambda: _quiet(self.read, DISMISSED_FILE), self._text)

    def instructions_reader(self) -> Reader | None:
        """How context/instructions.py reads the instruction files; None: its own work-tree
        reader (with the tools' path rules)."""
        return None if self.kind == "worktree" else self.read_following

    def _text(self, path: str) -> bytes | None:
        return _quiet(self.read, path)


def ground_of(scope: ScopeDiff) -> Ground:
    """The ground of a review of `scope` (see the module's docstring)."""
    if scope.request.kind in (ScopeKind.UNCOMMITTED, ScopeKind.STAGED):
        return worktree_ground(scope.repo_root)
    if scope.old_rev == UNAVAILABLE_REV:
        return no_ground("nothing: the base commit is not in the local repository")
    if scope.old_rev is None:
        return no_ground("the empty tree (no base commit)")
    return revision_ground(Repo(scope.repo_root, scope.runner), scope.old_rev)


def default_branch_ground(root: Path, runner: GitRunner | None = None) -> Ground:
    """`ask`'s ground: the default branch, or none when there is no such branch."""
    repo = Repo(root, runner or GitRunner())
    try:
        name, oid = repo.default_base()
    except RedlineError:
        return no_ground("nothing: no default branch (origin/HEAD, main, master) to read")
    return revision_ground(repo, oid, f"{name} ({short(oid)})")


def worktree_ground(root: Path) -> Ground:
    read = config_repo.worktree_reader(root)
    return Ground("worktree", "the work tree", read, read)


def no_ground(label: str) -> Ground:
    def nothing(_name: str) -> bytes | None:
        return None

    return Ground("none", label, nothing, nothing)


def revision_ground(repo: Repo, rev: str, label: str | None = None) -> Ground:
    return Ground(
        "base",
        label or f"the base {short(rev)}",
        revision_reader(repo, rev),
        revision_reader(repo, rev, follow_links=True),
    )


def revision_reader(repo: Repo, rev: str, *, follow_links: bool = False) -> Reader:
    """Read a file as commit `rev` has it, through git (never the work tree): a regular file's
    bytes, None when absent (or a directory, or a submodule). A symbolic link is refused, or
    with `follow_links` read once through when its target stays inside the repository."""

    def read(name: str, hops: int = 0) -> bytes | None:
        mode = _mode(repo, rev, name)
        if mode is None:
            return None
        if mode == _LINK:
            target = _link_target(repo.read_blob(rev, name, 4096) or b"", name)
            if not follow_links or hops or target is None:
                raise RepositoryError(
                    f"{name} is a symbolic link at {short(rev)}: make it a regular file"
                )
            return read(target, hops + 1)
        if mode not in _REGULAR:
            return None
        return repo.read_blob(rev, name, MAX_GROUND_FILE_BYTES)

    return read


def _mode(repo: Repo, rev: str, name: str) -> bytes | None:
    out = repo.git("ls-tree", "-z", "--full-tree", "--end-of-options", rev, "--", name)
    want = os.fsencode(name)
    for record in split_nul(out):
        meta, _, path = record.partition(b"\t")
        fields = meta.split()
        if path == want and len(fields) == 3:
            return fields[0]
    return None


def _link_target(text: bytes, name: str) -> str | None:
    """A link's target as a repository path, or None when it leaves the repository (absolute,
    `..` past the root) or names .git."""
    target = decode(text).strip()
    if not target or target.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if joined.startswith("../") or joined in ("..", ".") or ".git" in joined.split("/"):
        return None
    return joined


def _quiet(read: Reader, name: str) -> bytes | None:
    # Dismissals and markers: a file that cannot be read dismisses nothing.
    try:
        return read(name)
    except RedlineError:
        return None


__all__: list[str] = [
    "Ground",
    "default_branch_ground",
    "ground_of",
    "no_ground",
    "revision_ground",
    "revision_reader",
    "worktree_ground",
]
