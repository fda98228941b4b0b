"""Posting to a GitHub pull request through the REST API (`gh api`).

The summary is an issue comment, found again by its marker among the posting account's own
comments and edited in place (PATCH) rather than added twice. Inline comments go in one PR
review (event COMMENT) pinned to the reviewed head commit; GitHub refuses a whole review when
one comment is on a line outside the diff (422), so then each comment is posted alone and the
refused ones join the summary, until the write cap (publish/guards.py) leaves one write, kept for
the summary, which lists the rest. Comments whose finding an earlier run posted are not sent
again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from redline.model import Review
from redline.publish.bodies import inline_body, summary_body
from redline.publish.common import (
    PostError,
    PostOptions,
    PostOutcome,
    check_same_head,
    checked,
    pages,
    post_summary,
    read_error_handler,
)
from redline.publish.diff_map import DiffMap
from redline.publish.guards import WriteCap
from redline.publish.markers import Kind, posted_finding, summary_kind
from redline.publish.placement import InlineComment, Placement, place
from redline.publish.transport import ApiCall, Transport

# The account GitHub Actions' GITHUB_TOKEN posts as; `GET /user` is refused to that token.
ACTIONS_BOT = "github-actions[bot]"


def post_to_github(
    review: Review,
    kind: Kind,
    slug: str,
    number: int,
    reviewed_head: str | None,
    diff: DiffMap,
    options: PostOptions,
    transport: WriteCap,
    environ: Mapping[str, str],
) -> PostOutcome:
    outcome = PostOutcome()
    fail = read_error_handler(outcome, options)
    me = _login(transport, environ, fail)
    head_sha = _pr_head(transport, slug, number, fail) or reviewed_head
    check_same_head(reviewed_head, head_sha, f"{slug}#{number}")
    issue_comments = list(
        pages(transport, f"repos/{slug}/issues/{number}/comments", "the PR's comments", fail)
    )
    own_summary = next(
        (c for c in issue_comments if _author(c) == me and summary_kind(c.get("body")) == kind),
        None,
    )

    placement: Placement | None = None
    if options.inline:
        posted = {
            found
            for c in pages(
                transport, f"repos/{slug}/pulls/{number}/comments", "the review comments", fail
            )
            if _author(c) == me and (found := posted_finding(c.get("body")))
        }
        placement = place(review.findings, diff, posted)
        if placement.inline:
            if not head_sha and options.dry_run:
                head_sha = "<head commit>"
            if not head_sha:
                raise PostError(f"{slug}#{number}: GitHub did not say the PR's head commit")
            _post_inline(transport, slug, number, head_sha, placement, outcome, options)
        outcome.inline = [c.finding for c in placement.inline]
        outcome.outside = [f for f in placement.outside if f not in outcome.moved]
        outcome.already = list(placement.already)
        outcome.capped, outcome.cap = list(placement.capped), placement.cap

    existing = own_summary.get("id") if own_summary is not None else None
    post_summary(
        transport,
        outcome,
        summary_body(review, kind, placement),
        update=ApiCall("PATCH", f"repos/{slug}/issues/comments/{existing}")
        if isinstance(existing, int)
        else None,
        create=ApiCall("POST", f"repos/{slug}/issues/{number}/comments"),
        url_key="html_url",
    )
    return outcome


def _author(comment: dict[str, Any]) -> str | None:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


def _login(transport: Transport, environ: Mapping[str, str], fail: Callable[[str], None]) -> str:
    response = transport.send(ApiCall("GET", "user"))
    if response.ok and isinstance(response.data, dict):
        login = response.data.get("login")
        if isinstance(login, str) and login:
            return login
    if environ.get("GITHUB_ACTIONS") == "true":
        return ACTIONS_BOT
    fail(f"could not tell which GitHub account posts: {response.error or 'no login'}")
    return ""


def _pr_head(
    transport: Transport, slug: str, number: int, fail: Callable[[str], None]
) -> str | None:
    """The PR's head commit, from the API of the origin's repository (not gh's default)."""
    pull = transport.send(ApiCall("GET", f"repos/{slug}/pulls/{number}"))
    head = pull.data.get("head") if pull.ok and isinstance(pull.data, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    if isinstance(sha, str) and sha:
        return sha
    fail(f"could not read {slug}#{number}: {pull.error or 'no head commit'}")
    return None


def _comment_payload(comment: InlineComment) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "path": comment.path,
        "line": comment.last,
        "side": "RIGHT",
        "body": inline_body(comment, "github"),
    }
    if comment.first != comment.last:
        payload["start_line"] = comment.first
        payload["start_side"] = "RIGHT"
    return payload


def _post_inline(
    transport: WriteCap,
    slug: str,
    number: int,
    head_sha: str,
    placement: Placement,
    outcome: PostOutcome,
    options: PostOptions,
) -> None:
    # One write is kept for the summary, which lists whatever the cap left out.
    if transport.left < 2:
        placement.cap_at(list(placement.inline), options.max_writes)
        return
    count = len(placement.inline)
    review = {
        "commit_id": head_sha,
        "event": "COMMENT",
        "body": f"Redline: {count} finding{'s' if count != 1 else ''} on the changed lines; "
        "the summary comment has the whole report.",
        "comments": [_comment_payload(c) for c in placement.inline],
    }
    response = transport.send(ApiCall("POST", f"repos/{slug}/pulls/{number}/reviews", review))
    if response.ok:
        return
    if response.status != 422:
        checked(response, "posting the review comments")
    # One refused comment sinks the whole review: post them one by one, keep what GitHub takes.
    pending = list(placement.inline)
    for at, comment in enumerate(pending):
        if transport.left < 2:
            placement.cap_at(pending[at:], options.max_writes)
            return
        single = {"commit_id": head_sha, **_comment_payload(comment)}
        answer = transport.send(ApiCall("POST", f"repos/{slug}/pulls/{number}/comments", single))
        if answer.status == 422:
            placement.move_to_summary(comment)
            outcome.moved.append(comment.finding)
        else:
            checked(answer, f"posting the comment on {comment.path}:{comment.last}")
