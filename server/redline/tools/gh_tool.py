"""The `gh` tool: read-only pull-request queries, pinned to the workspace's own repository.

Only `pr view|diff|list|checks|status`. gh picks the repository from the git remotes of the
working directory, so every way of pointing it elsewhere is refused: `-R/--repo` in any
spelling, a URL whose host/owner/repo differ from `origin` (a matching URL is reduced to its
number), and a `gh-resolved` default on a remote that is not origin. `--web`/`--watch` are
refused (browser, endless polling). `--jq` and `--template` are refused too: gh's jq has
`$ENV`/`env`, which would hand the model GH_TOKEN; the model reads `--json` output directly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

from redline.agent.toolkit import ToolError
from redline.errors import RedlineError, UsageError
from redline.git.names import validate_revision
from redline.git.pr import parse_pr_arg, parse_remote_url
from redline.git.process import decode, split_nul
from redline.tools.git_command import tokenize
from redline.tools.git_output import finish_output
from redline.tools.names import shown
from redline.tools.sandbox import ToolContext

GH_SUBCOMMANDS: Final = ("view", "diff", "list", "checks", "status")

# Fields of `gh pr view/list/status --json` and `gh pr checks --json`; all plain data.
JSON_FIELDS: Final = frozenset(
    {
        "additions",
        "assignees",
        "author",
        "autoMergeRequest",
        "baseRefName",
        "baseRefOid",
        "body",
        "changedFiles",
        "closed",
        "closedAt",
        "closingIssuesReferences",
        "comments",
        "commits",
        "createdAt",
        "deletions",
        "files",
        "headRefName",
        "headRefOid",
        "headRepository",
        "headRepositoryOwner",
        "id",
        "isCrossRepository",
        "isDraft",
        "labels",
        "latestReviews",
        "maintainerCanModify",
        "mergeCommit",
        "mergeStateStatus",
        "mergeable",
        "mergedAt",
        "mergedBy",
        "milestone",
        "number",
        "potentialMergeCommit",
        "reviewDecision",
        "reviewRequests",
        "reviews",
        "state",
        "statusCheckRollup",
        "title",
        "updatedAt",
        "url",
        # pr checks
        "bucket",
        "completedAt",
        "description",
        "event",
        "link",
        "name",
        "startedAt",
        "workflow",
    }
)

_LOGIN: Final = re.compile(r"@?[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})|@me")
_LABEL: Final = re.compile(r"[^\x00-\x1f\x7f]{1,100}")
_FIELDS_RE: Final = re.compile(r"[A-Za-z]+(?:,[A-Za-z]+)*")


def _state(value: str) -> str:
    if value not in ("open", "closed", "merged", "all"):
        raise ToolError("--state must be open, closed, merged or all")
    return value


def _limit(value: str) -> str:
    if not value.isdigit() or not 1 <= int(value) <= 100:
        raise ToolError("--limit must be a number from 1 to 100")
    return value


def _login(value: str) -> str:
    if not _LOGIN.fullmatch(value):
        raise ToolError(f"invalid user {shown(value)}")
    return value


def _label(value: str) -> str:
    if not _LABEL.fullmatch(value):
        raise ToolError("invalid label")
    return value


def _branch(value: str) -> str:
    try:
        return validate_revision(value)
    except RedlineError as exc:
        raise ToolError(exc.message) from None


def _search(value: str) -> str:
    # GitHub search syntax can name other repositories (`repo:x/y`); gh scopes the search to
    # the current repository anyway, but the qualifiers are refused to keep the pin obvious.
    if not value or len(value) > 200 or re.search(r"(?i)\b(repo|org|user):", value):
        raise ToolError("--search must be 1-200 characters without repo:/org:/user: qualifiers")
    return value


def _fields(value: str) -> str:
    if not _FIELDS_RE.fullmatch(value):
        raise ToolError("--json takes a comma-separated list of field names")
    unknown = sorted(set(value.split(",")) - JSON_FIELDS)
    if unknown:
        raise ToolError(f"--json fields not allowed: {', '.join(unknown)}")
    return value


_Validator = Callable[[str], str]
# Per subcommand: flags without a value, and flags with one (canonical long name → validator).
_FLAGS: Final[dict[str, frozenset[str]]] = {
    "view": frozenset({"--comments", "-c"}),
    "diff": frozenset({"--name-only", "--patch"}),
    "list": frozenset({"--draft", "-d"}),
    "checks": frozenset({"--required"}),
    "status": frozenset({"--conflict-status", "-c"}),
}
_VALUED: Final[dict[str, dict[str, _Validator]]] = {
    "view": {"--json": _fields},
    "diff": {},
    "list": {
        "--json": _fields,
        "--state": _state,
        "--limit": _limit,
        "--author": _login,
        "--assignee": _login,
        "--label": _label,
        "--base": _branch,
        "--head": _branch,
        "--search": _search,
    },
    "checks": {"--json": _fields},
    "status": {"--json": _fields},
}
_SHORT: Final = {
    "-s": "--state",
    "-L": "--limit",
    "-A": "--author",
    "-a": "--assignee",
    "-l": "--label",
    "-B": "--base",
    "-H": "--head",
    "-S": "--search",
}
_REFUSED: Final = {
    "-R": "points gh at another repository",
    "--repo": "points gh at another repository",
    "-w": "opens a browser",
    "--web": "opens a browser",
    "--watch": "polls without end",
    "-i": "polls without end",
    "--interval": "polls without end",
    "-q": "can read environment variables (jq $ENV), including the GitHub token",
    "--jq": "can read environment variables (jq $ENV), including the GitHub token",
    "-t": "is not needed; read the --json output",
    "--template": "is not needed; read the --json output",
    "--color": "is not needed",
}


def _origin(ctx: ToolContext) -> tuple[str, str] | None:
    result = ctx.runner.run_git(ctx.root, "config", "--get", "remote.origin.url")
    return parse_remote_url(decode(result.stdout)) if result.returncode == 0 else None


def _check_remote_pin(ctx: ToolContext) -> None:
    """Refuse when the repo config tells gh to prefer a remote that is not origin."""
    result = ctx.runner.run_git(
        ctx.root, "config", "-z", "--get-regexp", r"^remote\..*\.gh-resolved$"
    )
    if result.returncode != 0:
        return
    origin = _origin(ctx)
    for record in split_nul(result.stdout):
        key = decode(record.split(b"\n", 1)[0])
        name = key[len("remote.") : -len(".gh-resolved")]
        if name == "origin":
            continue
        url = ctx.runner.run_git(ctx.root, "config", "--get", f"remote.{name}.url")
        target = parse_remote_url(decode(url.stdout)) if url.returncode == 0 else None
        if target != origin:
            raise ToolError(
                "refusing: this repository's git config makes gh default to a remote other than "
                "origin; run gh yourself if that is intended"
            )


def _pr_argument(ctx: ToolContext, value: str) -> str:
    """A PR number, or a URL of this repository's PR (reduced to its number), or a branch."""
    text = value.strip()
    if "://" in text or text.lower().startswith(("github.com", "www.", "git@")):
        parts = urlsplit(text if "://" in text else f"https://{text}")
        try:
            ref = parse_pr_arg(text)
        except UsageError:
            raise ToolError(f"not a pull request URL: {shown(text)}") from None
        found = re.fullmatch(r"/([^/]+)/([^/]+)/pull/\d+(?:/.*)?", parts.path)
        origin = _origin(ctx)
        if found is None or parts.hostname is None or origin is None:
            raise ToolError("cannot check that URL against this repository's origin remote")
        host = parts.hostname.lower().rstrip(".").removeprefix("www.")
        wanted = (host, f"{found.group(1)}/{found.group(2)}".lower())
        if wanted != origin:
            raise ToolError(
                f"refusing: that pull request belongs to {wanted[0]}/{shown(wanted[1])}, "
                "not to this repository"
            )
        return str(ref.number)
    if re.fullmatch(r"#?[1-9][0-9]{0,8}", text):
        return text.lstrip("#")
    return _branch(text)  # a head branch name


def parse_gh(ctx: ToolContext, command: str) -> list[str]:
    tokens = tokenize(command.replace("\n", " ") if isinstance(command, str) else command)
    if tokens and tokens[0] == "gh":
        tokens = tokens[1:]
    if len(tokens) < 2 or tokens[0] != "pr" or tokens[1] not in GH_SUBCOMMANDS:
        shown_cmd = " ".join(tokens[:2])
        raise ToolError(
            f"gh {shown(shown_cmd)} is not allowed; allowed: "
            + ", ".join(f"pr {s}" for s in GH_SUBCOMMANDS)
        )
    sub = tokens[1]
    flags, valued = _FLAGS[sub], _VALUED[sub]
    argv = ["pr", sub]
    positional: list[str] = []
    args = tokens[2:]
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-"):
            positional.append(arg)
            continue
        name, eq, value = arg.partition("=")
        canonical = _SHORT.get(name, name)
        for bad, why in _REFUSED.items():
            if name == bad or (name.startswith("--") and len(name) > 3 and bad.startswith(name)):
                raise ToolError(f"gh option {shown(arg)} is not allowed: it {why}")
        if not eq and arg in flags:
            argv.append(arg)
            continue
        if canonical in valued:
            if not eq:
                if name.startswith("-") and not name.startswith("--") and len(name) > 2:
                    raise ToolError(f"gh option {shown(arg)} is not allowed")
                if i >= len(args):
                    raise ToolError(f"option {shown(arg)} needs a value")
                value = args[i]
                i += 1
            argv.append(f"{canonical}={valued[canonical](value)}")
            continue
        allowed = sorted({*flags, *(f"{v} <value>" for v in valued)})
        raise ToolError(
            f"gh option {shown(arg)} is not allowed for pr {sub}; allowed: "
            + (", ".join(allowed) or "none")
        )
    if sub in ("list", "status") and positional:
        raise ToolError(f"gh pr {sub} takes no pull request argument")
    if len(positional) > 1:
        raise ToolError("name at most one pull request")
    if positional:
        argv.append(_pr_argument(ctx, positional[0]))
    if sub == "diff":
        argv.append("--color=never")
    return argv


def run_gh_tool(ctx: ToolContext, command: str) -> str:
    argv = parse_gh(ctx, command)
    _check_remote_pin(ctx)
    try:
        result = ctx.runner.run_gh(
            ctx.root,
            *argv,
            timeout=ctx.limits.gh_timeout,
            max_output=ctx.limits.max_git_output_bytes,
        )
    except RedlineError as exc:
        raise ToolError(ctx.clean(exc.message)) from None
    if result.returncode != 0:
        raise ToolError(
            f"gh pr {argv[1]} failed (exit {result.returncode}): {ctx.clean(result.error_text)}"
        )
    return finish_output(ctx, result.stdout)


GH_TOOL_DESCRIPTION: Final = (
    "Query pull requests of this repository with the GitHub CLI (read-only): "
    "'pr view 12', 'pr view 12 --comments', 'pr view 12 --json title,body,files', "
    "'pr diff 12', 'pr diff 12 --name-only', 'pr list --state open --limit 20', "
    "'pr checks 12', 'pr status'. Other repositories, --web, --watch, --jq and --template are "
    "not available."
)
