"""The forge a review talks to: GitHub pull requests and GitLab merge requests.

What the PR scope (pr.py) and the code that posts a review share: the argument (`12`, `#12`, a
PR URL, `!7`, an MR URL) parsed into a `PrRef`; the origin remote as a `ForgeProject`, which
every URL is checked against (Redline only reviews the repository it is in); the PR's or MR's
metadata read through `gh` / `glab`; and `forge_ref`, what posting needs (the number and the
commit ids), without fetching the diff.

A plain number is a GitHub pull request, `!N` a GitLab merge request (as GitLab writes them).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import urlsplit

from redline.errors import GitCommandError, RepositoryError, UsageError
from redline.git.names import is_oid
from redline.git.process import decode, strip_control
from redline.git.repo import Repo

Forge = Literal["github", "gitlab"]

_NUMBER_RE: Final = re.compile(r"#?([1-9][0-9]{0,8})")
_MR_NUMBER_RE: Final = re.compile(r"!([1-9][0-9]{0,8})")
_PR_PATH_RE: Final = re.compile(r"/([^/]+)/([^/]+)/pull/([1-9][0-9]{0,8})(?:/[A-Za-z0-9/_-]*)?/?")
# GROUP[/SUBGROUP…]/PROJECT/-/merge_requests/N[/diffs|/commits|…]
_MR_PATH_RE: Final = re.compile(
    r"/((?:[^/]+/)+[^/]+)/-/merge_requests/([1-9][0-9]{0,8})(?:/[A-Za-z0-9/_-]*)?/?"
)
# One piece of a project path: GitLab allows letters, digits, `_`, `-` and `.`, not a leading
# `-` (which also keeps out the `/-/` separator); `.` and `..` are refused separately.
_PIECE_RE: Final = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}")
_SCP_RE: Final = re.compile(r"(?:[^@/\s]+@)?([^:/\s]+):(.+)")

# Where a PR's / MR's head may already be in the repository (Redline never fetches).
GITHUB_LOCAL_REFS: Final = (
    "refs/pull/{n}/head",
    "refs/remotes/origin/pull/{n}/head",
    "refs/remotes/origin/pr/{n}",
)
GITLAB_LOCAL_REFS: Final = (
    "refs/merge-requests/{n}/head",
    "refs/remotes/origin/merge-requests/{n}/head",
)

# The argv of every gh/glab call made here and in pr.py, in one place.
GH_VIEW_FIELDS: Final = "baseRefName,headRefName,title,headRefOid,baseRefOid"


def gh_view_argv(number: int, fields: str = GH_VIEW_FIELDS) -> tuple[str, ...]:
    return ("pr", "view", str(number), "--json", fields)


def gh_diff_argv(number: int) -> tuple[str, ...]:
    return ("pr", "diff", str(number), "--color=never")


def glab_view_argv(number: int) -> tuple[str, ...]:
    return ("mr", "view", str(number), "--output", "json")


def glab_diff_argv(number: int) -> tuple[str, ...]:
    return ("mr", "diff", str(number), "--raw")


@dataclass(frozen=True)
class ForgeProject:
    """The origin remote's project: path is "owner/repo" or "group/sub/project", as written in
    the remote (without `.git`); compare with `matches`, which ignores case."""

    kind: Forge
    host: str
    path: str

    def matches(self, host: str, path: str) -> bool:
        return (self.host.lower(), self.path.lower()) == (_normalize_host(host), path.lower())


@dataclass(frozen=True)
class ForgeRef:
    """What posting a review needs: the PR number (GitHub) or MR iid (GitLab) and the commit
    ids, each None when unknown. GitHub: head_sha is the PR's head commit, base_sha the base
    branch's. GitLab: the MR's diff_refs (base = merge-base, head, start = target tip)."""

    project: ForgeProject
    number: int
    head_sha: str | None
    base_sha: str | None
    start_sha: str | None


@dataclass(frozen=True)
class PrRef:
    number: int
    url: str | None = None
    forge: Forge = "github"
    host: str | None = None  # from the URL, normalized
    path: str | None = None  # the project path in the URL

    @property
    def name(self) -> str:
        """`pull request #12` or `merge request !7`."""
        if self.forge == "gitlab":
            return f"merge request !{self.number}"
        return f"pull request #{self.number}"


def parse_pr_arg(arg: str | None) -> PrRef:
    """'12', '#12', https://HOST/OWNER/REPO/pull/12, '!7' or
    https://HOST/GROUP[/SUBGROUP…]/PROJECT/-/merge_requests/7 (URLs checked against origin by
    `check_against_origin`)."""
    if not arg:
        raise UsageError("the pr scope needs a pull request number or URL", hint="e.g. pr 12")
    text = arg.strip()
    match = _NUMBER_RE.fullmatch(text)
    if match:
        return PrRef(int(match.group(1)))
    match = _MR_NUMBER_RE.fullmatch(text)
    if match:
        return PrRef(int(match.group(1)), forge="gitlab")
    parts = urlsplit(text)
    if (
        parts.scheme in ("http", "https")
        and parts.hostname
        and not parts.username
        and not parts.password
    ):
        host = _normalize_host(parts.hostname)
        found = _PR_PATH_RE.fullmatch(parts.path)
        if found and _valid_path(f"{found.group(1)}/{found.group(2)}"):
            path = f"{found.group(1)}/{found.group(2)}"
            return PrRef(int(found.group(3)), url=text, host=host, path=path)
        found = _MR_PATH_RE.fullmatch(parts.path)
        if found and _valid_path(found.group(1)):
            return PrRef(
                int(found.group(2)), url=text, forge="gitlab", host=host, path=found.group(1)
            )
    raise UsageError(
        f"invalid pull request or merge request {strip_control(text)[:120]!r}",
        hint="give a number (12), a URL like https://github.com/OWNER/REPO/pull/12, a GitLab "
        "merge request (!7) or its URL https://gitlab.com/GROUP/PROJECT/-/merge_requests/7",
    )


def _normalize_host(host: str) -> str:
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


def _valid_path(path: str) -> bool:
    pieces = path.split("/")
    return len(pieces) >= 2 and all(_PIECE_RE.fullmatch(p) and p not in (".", "..") for p in pieces)


def remote_parts(url: str) -> tuple[str, str] | None:
    """(host, project path as written, without `.git`) of a remote URL in https, ssh:// or
    scp-like form; the path may be nested (GitLab groups)."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        host, raw = parts.hostname, parts.path
    else:
        match = _SCP_RE.fullmatch(url)
        if match is None:
            return None
        host, raw = match.group(1), match.group(2)
    if not host:
        return None
    path = raw.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return (_normalize_host(host), path) if _valid_path(path) else None


def parse_remote_url(url: str) -> tuple[str, str] | None:
    """(host, owner/repo) of a GitHub-style remote URL, lowercased; None for a nested path."""
    found = remote_parts(url)
    if found is None or found[1].count("/") != 1:
        return None
    return found[0], found[1].lower()


def origin_project(repo: Repo, *, forge: Forge | None = None) -> ForgeProject | None:
    """The project of `remote.origin.url`, None without a usable origin. kind is `forge` when
    given (asked for a GitLab MR), else gitlab when the host names GitLab, else github."""
    result = repo.runner.run_git(repo.root, "config", "--get", "remote.origin.url")
    found = remote_parts(decode(result.stdout)) if result.returncode == 0 else None
    if found is None:
        return None
    host, path = found
    kind: Forge = forge or ("gitlab" if "gitlab" in host else "github")
    return ForgeProject(kind, host, path)


def check_against_origin(repo: Repo, ref: PrRef) -> None:
    """Refuse a PR/MR URL that is not for this repository's origin (host and path)."""
    if ref.url is None or ref.host is None or ref.path is None:
        return
    origin = origin_project(repo, forge=ref.forge)
    what = "merge request" if ref.forge == "gitlab" else "pull request"
    if origin is None:
        raise RepositoryError(
            f"cannot check the {what} URL: this repository has no usable 'origin' remote",
            hint=f"pass the {what} number instead of a URL",
        )
    if not origin.matches(ref.host, ref.path):
        raise RepositoryError(
            f"{what} URL is for {ref.host}/{strip_control(ref.path)}, but this "
            f"repository's origin is {origin.host}/{strip_control(origin.path)}",
            hint=f"review {what}s of the repository you are in",
        )


def _json_object(raw: bytes, what: str) -> dict[str, object]:
    try:
        data = json.loads(decode(raw))
    except ValueError as exc:
        raise GitCommandError(f"{what} returned invalid JSON") from exc
    if not isinstance(data, dict):
        raise GitCommandError(f"{what} returned unexpected JSON")
    return data


def gh_pr_view(repo: Repo, number: int, fields: str = GH_VIEW_FIELDS) -> dict[str, object]:
    """`gh pr view N --json fields` as a dict; GitCommandError when gh fails."""
    return _json_object(repo.runner.gh(repo.root, *gh_view_argv(number, fields)), "gh pr view")


def glab_mr_view(repo: Repo, number: int) -> dict[str, object]:
    """`glab mr view N --output json` as a dict; GitCommandError when glab fails."""
    return _json_object(repo.runner.glab(repo.root, *glab_view_argv(number)), "glab mr view")


def str_field(data: dict[str, object], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def oid_field(data: dict[str, object], key: str) -> str | None:
    value = str_field(data, key).lower()
    return value if is_oid(value) else None


def gitlab_diff_refs(data: dict[str, object]) -> tuple[str | None, str | None, str | None]:
    """(base, head, start) from an MR's diff_refs; head falls back to the MR's `sha`."""
    refs = data.get("diff_refs")
    refs = refs if isinstance(refs, dict) else {}
    head = oid_field(refs, "head_sha") or oid_field(data, "sha")
    return oid_field(refs, "base_sha"), head, oid_field(refs, "start_sha")


def local_head(repo: Repo, ref: PrRef) -> tuple[str, str] | None:
    """(refname, commit) of the PR's/MR's head when a local ref holds it."""
    patterns = GITLAB_LOCAL_REFS if ref.forge == "gitlab" else GITHUB_LOCAL_REFS
    for pattern in patterns:
        refname = pattern.format(n=ref.number)
        head = repo.try_commit(refname)
        if head is not None:
            return refname, head
    return None


def forge_ref(repo: Repo, pr_arg: str) -> ForgeRef:
    """The PR/MR named by pr_arg (12, #12, !7, a URL; checked against origin) with its commit
    ids from gh/glab when usable, else the head from a local ref. Does not fetch the diff."""
    ref = parse_pr_arg(pr_arg)
    check_against_origin(repo, ref)
    project = origin_project(repo, forge=ref.forge)
    if project is None:
        raise RepositoryError(
            f"cannot find the project of {ref.name}: this repository has no usable 'origin' remote",
            hint="add the GitHub or GitLab remote as 'origin'",
        )
    runner = repo.runner
    usable, _ = (
        runner.glab_available(repo.root)
        if ref.forge == "gitlab"
        else runner.gh_available(repo.root)
    )
    if usable:
        try:
            if ref.forge == "gitlab":
                base, head, start = gitlab_diff_refs(glab_mr_view(repo, ref.number))
                return ForgeRef(project, ref.number, head, base, start)
            data = gh_pr_view(repo, ref.number, "headRefOid,baseRefOid")
            head, base = oid_field(data, "headRefOid"), oid_field(data, "baseRefOid")
            return ForgeRef(project, ref.number, head, base, None)
        except GitCommandError as exc:
            raise RepositoryError(f"cannot load {ref.name}: {exc.message}") from None
    local = local_head(repo, ref)
    return ForgeRef(project, ref.number, local[1] if local else None, None, None)
