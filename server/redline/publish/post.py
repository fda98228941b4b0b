"""`--post`: send a finished review to the pull or merge request it reviewed.

The entry point the CLI calls after the report is written. The review is redacted here — the
one choke point every posted text passes — and the target is the request the review scope
named, checked against the repository's origin (git/forge.py), so posting goes nowhere else.
Every write then passes publish/guards.py: control characters spelled out, at most
`publish.max_writes` writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from redline.git.forge import forge_ref
from redline.git.names import is_oid
from redline.git.repo import Repo
from redline.git.runner import GitRunner
from redline.model import Review
from redline.publish.common import PostOptions, PostOutcome
from redline.publish.diff_map import diff_map
from redline.publish.github import post_to_github
from redline.publish.gitlab import post_to_gitlab
from redline.publish.guards import InertBodies, WriteCap
from redline.publish.markers import Kind
from redline.publish.transport import CliTransport, DryRun, Transport
from redline.redaction import redact_data


@dataclass(frozen=True)
class PostRequest:
    repo_root: Path
    pr_arg: str  # what --pr/--mr named: 12, #12, !12, a PR or MR URL
    diff_text: str  # the reviewed diff: which lines take comments
    reviewed_head: str | None  # the commit the findings' lines refer to, when known
    options: PostOptions


def post_review(
    review: Review,
    kind: Kind,
    request: PostRequest,
    *,
    runner: GitRunner | None = None,
    show: Callable[[str], None] | None = None,
) -> list[str]:
    """Post (or, with dry_run, show) the review; the lines to tell the user."""
    runner = runner or GitRunner()
    shown = Review.model_validate(redact_data(review.model_dump(mode="json")))
    ref = forge_ref(Repo(request.repo_root, runner), request.pr_arg)
    project = ref.project
    tool: Literal["gh", "glab"] = "gh" if project.kind == "github" else "glab"
    hostname = None if project.host == "github.com" and tool == "gh" else project.host
    transport: Transport = CliTransport(tool, runner, request.repo_root, hostname)
    if request.options.dry_run:
        available = runner.gh_path if tool == "gh" else runner.glab_path
        transport = DryRun(transport if available else None, show or print)
    # Every write: its text without control characters (the dry run prints that too), and no
    # more writes than the user's cap.
    capped = WriteCap(InertBodies(transport), request.options.max_writes)
    diff = diff_map(request.diff_text)
    # The commit the findings' lines refer to (None when the PR's commits are not local).
    reviewed = request.reviewed_head if is_oid(request.reviewed_head or "") else None
    outcome: PostOutcome
    if project.kind == "github":
        outcome = post_to_github(
            shown, kind, project.path, ref.number, reviewed, diff, request.options, capped,
            os.environ,
        )  # fmt: skip
        where = f"{project.path}#{ref.number}"
    else:
        outcome = post_to_gitlab(
            shown, kind, project.path, ref.number, reviewed,
            diff, request.options, capped,
        )  # fmt: skip
        where = f"{project.path}!{ref.number}"
    return outcome.lines(where, request.options.dry_run)
