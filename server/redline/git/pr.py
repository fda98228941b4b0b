"""The pull-request scope: a GitHub PR through `gh`, a GitLab merge request through `glab`, when
the tool is installed and logged in; else a local PR/MR ref.

Redline never fetches: `protocol.allow=never` is part of every git call. When neither the tool
nor a local ref can serve the request, the error says how to get one. Parsing the argument and
checking URLs against origin is in forge.py (shared with the code that posts reviews).

With gh/glab, the diff is the forge's. `old_rev`/`new_rev` are the PR's merge-base and head
commit when those commits exist locally; otherwise they are UNAVAILABLE_REV and
read_old/read_new return None for every path (the diff text is still complete).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from redline.errors import GitCommandError, RepositoryError
from redline.git.difftext import stats_suffix
from redline.git.forge import (
    PrRef,
    check_against_origin,
    gh_diff_argv,
    gh_pr_view,
    gitlab_diff_refs,
    glab_diff_argv,
    glab_mr_view,
    local_head,
    oid_field,
    origin_project,
    parse_pr_arg,
    parse_remote_url,
    str_field,
)
from redline.git.names import short
from redline.git.process import strip_control
from redline.git.repo import Repo, Resolved
from redline.git.section_cap import section_cap
from redline.git.stream import capped_diff
from redline.shorten import shorten

__all__ = ["UNAVAILABLE_REV", "PrRef", "parse_pr_arg", "parse_remote_url", "resolve_pr"]

UNAVAILABLE_REV: Final = ":unavailable"


@dataclass(frozen=True)
class _Forge:
    """How one forge's PR/MR is named, fetched by hand, and which tool reads it."""

    tool: str  # "gh" | "glab"
    short: str  # "PR #12" / "MR !7"
    local_ref: str  # the ref named in the error
    fetch: str  # the command that makes it exist


def _forge(ref: PrRef) -> _Forge:
    n = ref.number
    if ref.forge == "gitlab":
        return _Forge(
            "glab",
            f"MR !{n}",
            f"refs/merge-requests/{n}/head",
            f"git fetch origin merge-requests/{n}/head:refs/merge-requests/{n}/head",
        )
    return _Forge("gh", f"PR #{n}", f"refs/pull/{n}/head", _fetch_command(n))


def resolve_pr(repo: Repo, arg: str | None) -> Resolved:
    ref = parse_pr_arg(arg)
    check_against_origin(repo, ref)
    forge = _forge(ref)
    runner = repo.runner
    usable, reason = (
        runner.glab_available(repo.root) if forge.tool == "glab" else runner.gh_available(repo.root)
    )
    tool_error: str | None = None
    if usable:
        try:
            return (
                _via_glab(repo, ref.number) if forge.tool == "glab" else _via_gh(repo, ref.number)
            )
        except GitCommandError as exc:
            tool_error = exc.message
    local = _via_local_ref(repo, ref, forge)
    if local is not None:
        return local
    hint = f"check the number, or fetch it: {forge.fetch}"
    message = f"cannot load {ref.name}: {tool_error}"
    if tool_error is None:
        message = f"cannot load {ref.name}: {reason}, and there is no local ref {forge.local_ref}"
        what = "MR" if forge.tool == "glab" else "PR"
        hint = (
            f"install {forge.tool} and run `{forge.tool} auth login`, or fetch the {what} "
            f"yourself: {forge.fetch}"
        )
        if not runner.forge_path(forge.tool, repo.root):
            # Where it looked (binaries.py): the user's PATH, filtered, or their [tools] entry.
            hint += f"; {forge.tool}: {runner.lookup(forge.tool, repo.root).where()}"
    if ref.forge == "github":
        origin = origin_project(repo)
        if origin is not None and origin.kind == "gitlab":
            hint += f"; origin is a GitLab project: for its merge request use !{ref.number}"
    raise RepositoryError(message, hint=hint)


def _fetch_command(n: int) -> str:
    return f"git fetch origin pull/{n}/head:refs/pull/{n}/head"


def _via_gh(repo: Repo, number: int) -> Resolved:
    n = str(number)
    data = gh_pr_view(repo, number)
    # Read whole (gh does not stream), then cut per file like a streamed diff.
    diff_text, stats = capped_diff(
        repo.runner.gh(repo.root, *gh_diff_argv(number)), section_cap(repo.max_file_bytes)
    )

    head_oid = oid_field(data, "headRefOid")
    base_oid = oid_field(data, "baseRefOid")
    head_local = head_oid is not None and repo.try_commit(head_oid) is not None
    base_local = base_oid is not None and repo.try_commit(base_oid) is not None
    new_rev = head_oid if head_oid and head_local else UNAVAILABLE_REV
    old_rev = UNAVAILABLE_REV
    if head_oid and base_oid and head_local and base_local:
        # GitHub's PR diff is three-dot: the head against its merge-base with the base.
        old_rev = repo.merge_base(base_oid, head_oid) or UNAVAILABLE_REV

    title = shorten(strip_control(str_field(data, "title")), 72)
    head_name = strip_control(str_field(data, "headRefName")) or "?"
    base_name = strip_control(str_field(data, "baseRefName")) or "?"
    label = f'PR #{n} "{title}" ({head_name} → {base_name})' + stats_suffix(stats, diff_text)
    return Resolved(label, diff_text, old_rev, new_rev, stats)


def _via_glab(repo: Repo, number: int) -> Resolved:
    data = glab_mr_view(repo, number)
    diff_text, stats = capped_diff(
        repo.runner.glab(repo.root, *glab_diff_argv(number)), section_cap(repo.max_file_bytes)
    )
    base_oid, head_oid, start_oid = gitlab_diff_refs(data)
    head_local = head_oid is not None and repo.try_commit(head_oid) is not None
    new_rev = head_oid if head_oid and head_local else UNAVAILABLE_REV
    old_rev = UNAVAILABLE_REV
    if head_oid and head_local:
        # GitLab's MR diff is against diff_refs.base_sha, the merge-base of target and source.
        if base_oid and repo.try_commit(base_oid) is not None:
            old_rev = base_oid
        elif start_oid and repo.try_commit(start_oid) is not None:
            old_rev = repo.merge_base(start_oid, head_oid) or UNAVAILABLE_REV

    title = shorten(strip_control(str_field(data, "title")), 72)
    source = strip_control(str_field(data, "source_branch")) or "?"
    target = strip_control(str_field(data, "target_branch")) or "?"
    label = f'MR !{number} "{title}" ({source} → {target})' + stats_suffix(stats, diff_text)
    return Resolved(label, diff_text, old_rev, new_rev, stats)


def _via_local_ref(repo: Repo, ref: PrRef, forge: _Forge) -> Resolved | None:
    found = local_head(repo, ref)
    if found is None:
        return None
    refname, head = found
    base_name, base_oid = repo.default_base()
    merge_base = repo.merge_base(base_oid, head)
    if merge_base is None:
        raise RepositoryError(
            f"{refname} has no common history with {base_name}",
        )
    diff_text, stats = repo.diff(merge_base, head)
    label = (
        f"{forge.short} (local ref {refname} vs {base_name}, merge-base {short(merge_base)})"
        + stats_suffix(stats, diff_text)
    )
    return Resolved(label, diff_text, merge_base, head, stats)
