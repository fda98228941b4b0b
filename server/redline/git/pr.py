"""The pull-request scope: `gh` when it is installed and logged in, else a local PR ref.

Redline never fetches: `protocol.allow=never` is part of every git call. When neither gh nor a
local ref can serve the request, the error says how to get one.

With gh, the diff is GitHub's. `old_rev`/`new_rev` are the PR's merge-base and head commit when
those commits exist locally; otherwise they are UNAVAILABLE_REV and read_old/read_new return
None for every path (the diff text is still complete).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from redline.errors import GitCommandError, RepositoryError, UsageError
from redline.git.difftext import stats_from_diff, stats_suffix
from redline.git.names import is_oid, short
from redline.git.process import decode, strip_control
from redline.git.repo import Repo, Resolved
from redline.shorten import shorten

UNAVAILABLE_REV: Final = ":unavailable"

_NUMBER_RE: Final = re.compile(r"#?([1-9][0-9]{0,8})")
_PR_PATH_RE: Final = re.compile(r"/([^/]+)/([^/]+)/pull/([1-9][0-9]{0,8})(?:/[A-Za-z0-9/_-]*)?/?")
_SCP_RE: Final = re.compile(r"(?:[^@/\s]+@)?([^:/\s]+):(.+)")
_LOCAL_REFS: Final = (
    "refs/pull/{n}/head",
    "refs/remotes/origin/pull/{n}/head",
    "refs/remotes/origin/pr/{n}",
)


@dataclass(frozen=True)
class PrRef:
    number: int
    url: str | None = None


def parse_pr_arg(arg: str | None) -> PrRef:
    """'12', '#12' or https://HOST/OWNER/REPO/pull/12 (checked against origin later)."""
    if not arg:
        raise UsageError("the pr scope needs a pull request number or URL", hint="e.g. pr 12")
    text = arg.strip()
    match = _NUMBER_RE.fullmatch(text)
    if match:
        return PrRef(int(match.group(1)))
    parts = urlsplit(text)
    if parts.scheme in ("http", "https") and parts.hostname:
        found = _PR_PATH_RE.fullmatch(parts.path)
        if found and not parts.username and not parts.password:
            return PrRef(int(found.group(3)), url=text)
    raise UsageError(
        f"invalid pull request {strip_control(text)[:120]!r}",
        hint="give a number (12) or a URL like https://github.com/OWNER/REPO/pull/12",
    )


def _normalize_host(host: str) -> str:
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


def _slug(path: str) -> str | None:
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    pieces = path.split("/")
    if len(pieces) != 2 or not all(pieces):
        return None
    return "/".join(pieces).lower()


def parse_remote_url(url: str) -> tuple[str, str] | None:
    """(host, owner/repo) of a remote URL in https, ssh:// or scp-like form."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        if not parts.hostname:
            return None
        slug = _slug(parts.path)
        return (_normalize_host(parts.hostname), slug) if slug else None
    match = _SCP_RE.fullmatch(url)
    if match:
        slug = _slug(match.group(2))
        return (_normalize_host(match.group(1)), slug) if slug else None
    return None


def _check_url_matches_origin(repo: Repo, ref: PrRef) -> None:
    if ref.url is None:
        return
    parts = urlsplit(ref.url)
    found = _PR_PATH_RE.fullmatch(parts.path)
    assert found is not None and parts.hostname is not None
    wanted = (_normalize_host(parts.hostname), f"{found.group(1)}/{found.group(2)}".lower())
    result = repo.runner.run_git(repo.root, "config", "--get", "remote.origin.url")
    origin = parse_remote_url(decode(result.stdout)) if result.returncode == 0 else None
    if origin is None:
        raise RepositoryError(
            "cannot check the pull request URL: this repository has no usable 'origin' remote",
            hint="pass the PR number instead of a URL",
        )
    if origin != wanted:
        raise RepositoryError(
            f"pull request URL is for {wanted[0]}/{strip_control(wanted[1])}, but this "
            f"repository's origin is {origin[0]}/{strip_control(origin[1])}",
            hint="review pull requests of the repository you are in",
        )


def resolve_pr(repo: Repo, arg: str | None) -> Resolved:
    ref = parse_pr_arg(arg)
    _check_url_matches_origin(repo, ref)
    usable, reason = repo.runner.gh_available(repo.root)
    gh_error: str | None = None
    if usable:
        try:
            return _via_gh(repo, ref.number)
        except GitCommandError as exc:
            gh_error = exc.message
    local = _via_local_ref(repo, ref.number)
    if local is not None:
        return local
    n = ref.number
    if gh_error is not None:
        raise RepositoryError(
            f"cannot load pull request #{n}: {gh_error}",
            hint=f"check the number, or fetch it: {_fetch_command(n)}",
        )
    raise RepositoryError(
        f"cannot load pull request #{n}: {reason}, and there is no local ref refs/pull/{n}/head",
        hint=("install gh and run `gh auth login`, or fetch the PR yourself: " + _fetch_command(n)),
    )


def _fetch_command(n: int) -> str:
    return f"git fetch origin pull/{n}/head:refs/pull/{n}/head"


def _str_field(data: dict[str, object], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _via_gh(repo: Repo, number: int) -> Resolved:
    n = str(number)
    raw = repo.runner.gh(
        repo.root, "pr", "view", n, "--json", "baseRefName,headRefName,title,headRefOid,baseRefOid"
    )
    try:
        data = json.loads(decode(raw))
    except ValueError as exc:
        raise GitCommandError("gh pr view returned invalid JSON") from exc
    if not isinstance(data, dict):
        raise GitCommandError("gh pr view returned unexpected JSON")
    diff_text = decode(repo.runner.gh(repo.root, "pr", "diff", n, "--color=never"))

    head_oid = _str_field(data, "headRefOid").lower()
    base_oid = _str_field(data, "baseRefOid").lower()
    head_local = is_oid(head_oid) and repo.try_commit(head_oid) is not None
    base_local = is_oid(base_oid) and repo.try_commit(base_oid) is not None
    new_rev = head_oid if head_local else UNAVAILABLE_REV
    old_rev = UNAVAILABLE_REV
    if head_local and base_local:
        # GitHub's PR diff is three-dot: the head against its merge-base with the base.
        old_rev = repo.merge_base(base_oid, head_oid) or UNAVAILABLE_REV

    title = shorten(strip_control(_str_field(data, "title")), 72)
    head_name = strip_control(_str_field(data, "headRefName")) or "?"
    base_name = strip_control(_str_field(data, "baseRefName")) or "?"
    stats = stats_from_diff(diff_text)
    label = f'PR #{n} "{title}" ({head_name} → {base_name})' + stats_suffix(stats, diff_text)
    return Resolved(label, diff_text, old_rev, new_rev, stats)


def _via_local_ref(repo: Repo, number: int) -> Resolved | None:
    for pattern in _LOCAL_REFS:
        refname = pattern.format(n=number)
        head = repo.try_commit(refname)
        if head is None:
            continue
        base_name, base_oid = repo.default_base()
        merge_base = repo.merge_base(base_oid, head)
        if merge_base is None:
            raise RepositoryError(
                f"{refname} has no common history with {base_name}",
            )
        diff_text, stats = repo.diff(merge_base, head)
        label = (
            f"PR #{number} (local ref {refname} vs {base_name}, merge-base {short(merge_base)})"
            + stats_suffix(stats, diff_text)
        )
        return Resolved(label, diff_text, merge_base, head, stats)
    return None
