"""The branches and recent commits an editor offers in its pickers ("Review Branch Against…",
"Review Commit…"), read through the hardened runner so the editor never runs git itself.

Names and subjects are written by whoever made the repository: control and bidi characters are
stripped before they reach a label.
"""

from __future__ import annotations

from dataclasses import dataclass

from redline.errors import RepositoryError
from redline.git.names import short
from redline.git.process import decode, split_nul, strip_control
from redline.git.repo import Repo

_FIELD = "\x1f"  # unit separator: cannot appear in a ref name, and git writes it for %x1f


@dataclass(frozen=True)
class BranchRef:
    name: str  # short name: "main", "origin/main"
    remote: bool
    current: bool


@dataclass(frozen=True)
class CommitRef:
    sha: str
    short: str
    subject: str
    author: str
    date: str  # ISO 8601, the author date


@dataclass(frozen=True)
class Refs:
    current: str | None  # the checked-out branch; None when HEAD is detached
    default_base: str | None  # what `--branch` with no base compares against; None if none
    branches: list[BranchRef]
    commits: list[CommitRef]


def list_branches(repo: Repo, limit: int) -> list[BranchRef]:
    """Local then remote branches, most recently committed first (`*/HEAD` aliases left out)."""
    out = repo.git(
        "for-each-ref",
        "--sort=-committerdate",
        f"--format=%(refname){_FIELD}%(HEAD)",
        "refs/heads",
        "refs/remotes",
    )
    local: list[BranchRef] = []
    remote: list[BranchRef] = []
    for line in decode(out).splitlines():
        refname, _, head = line.partition(_FIELD)
        if refname.startswith("refs/heads/"):
            local.append(BranchRef(_clean(refname[11:]), False, head.strip() == "*"))
        elif refname.startswith("refs/remotes/") and not refname.endswith("/HEAD"):
            remote.append(BranchRef(_clean(refname[13:]), True, False))
    return (local + remote)[:limit]


def recent_commits(repo: Repo, limit: int) -> list[CommitRef]:
    """The last `limit` commits reachable from HEAD, newest first; none on an unborn branch."""
    head = repo.head()
    if head is None:
        return []
    out = repo.git(
        "log",
        "-z",
        f"--max-count={limit}",
        f"--format=%H{_FIELD}%s{_FIELD}%an{_FIELD}%aI",
        head,
    )
    commits = []
    for record in split_nul(out):
        parts = decode(record).split(_FIELD)
        if len(parts) != 4:
            continue
        sha, subject, author, date = parts
        commits.append(CommitRef(sha, short(sha), _clean(subject), _clean(author), date))
    return commits


def list_refs(repo: Repo, *, branch_limit: int = 200, commit_limit: int = 50) -> Refs:
    try:
        base: str | None = repo.default_base()[0]
    except RepositoryError:  # no origin/HEAD, main or master: the picker still lists what exists
        base = None
    return Refs(
        current=repo.current_branch(),
        default_base=base,
        branches=list_branches(repo, branch_limit),
        commits=recent_commits(repo, commit_limit),
    )


def _clean(text: str) -> str:
    return strip_control(text).strip()
