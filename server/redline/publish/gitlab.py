"""Posting to a GitLab merge request through the REST API (`glab api`).

The summary is an MR note, found again by its marker among the posting account's own notes and
edited in place (PUT). Each inline comment is a discussion with a position object: GitLab needs
the MR's base, head and start SHAs (its `diff_refs`) and, for a context line, the line's number
on both sides. A position GitLab refuses (400/422) sends that finding to the summary; so does
each finding left when the write cap (publish/guards.py) has one write left, kept for the
summary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

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


def project_id(path: str) -> str:
    """The API's id for a project path: `group/sub/project` URL-encoded as one segment."""
    return quote(path, safe="")


def post_to_gitlab(
    review: Review,
    kind: Kind,
    path: str,
    iid: int,
    reviewed_head: str | None,
    diff: DiffMap,
    options: PostOptions,
    transport: WriteCap,
) -> PostOutcome:
    outcome = PostOutcome()
    fail = read_error_handler(outcome, options)
    mr = f"projects/{project_id(path)}/merge_requests/{iid}"
    me = _username(transport, fail)
    refs = _diff_refs(transport, mr, fail)
    check_same_head(reviewed_head, refs.get("head_sha"), f"{path}!{iid}")
    notes = list(pages(transport, f"{mr}/notes", "the merge request's notes", fail))
    own_summary = next(
        (n for n in notes if _author(n) == me and summary_kind(n.get("body")) == kind), None
    )

    placement: Placement | None = None
    if options.inline:
        posted: set[str] = set()
        for discussion in pages(transport, f"{mr}/discussions", "the discussions", fail):
            for note in discussion.get("notes") or []:
                if isinstance(note, dict) and _author(note) == me:
                    found = posted_finding(note.get("body"))
                    if found:
                        posted.add(found)
        placement = place(review.findings, diff, posted)
        if placement.inline:
            if not refs and options.dry_run:  # nothing read: show where the SHAs would go
                refs = {k: f"<{k}>" for k in _REF_KEYS}
            if len(refs) != 3:
                raise PostError(f"{path}!{iid}: GitLab did not give the merge request's diff_refs")
            pending = list(placement.inline)
            for at, comment in enumerate(pending):
                if transport.left < 2:  # one write is kept for the summary
                    placement.cap_at(pending[at:], options.max_writes)
                    break
                discussion = {
                    "body": inline_body(comment, "gitlab"),
                    "position": _position(comment, diff, refs),
                }
                answer = transport.send(ApiCall("POST", f"{mr}/discussions", discussion))
                if answer.status in (400, 422):
                    placement.move_to_summary(comment)
                    outcome.moved.append(comment.finding)
                else:
                    checked(answer, f"posting the comment on {comment.path}:{comment.last}")
        outcome.inline = [c.finding for c in placement.inline]
        outcome.outside = [f for f in placement.outside if f not in outcome.moved]
        outcome.already = list(placement.already)
        outcome.capped, outcome.cap = list(placement.capped), placement.cap

    existing = own_summary.get("id") if own_summary is not None else None
    post_summary(
        transport,
        outcome,
        summary_body(review, kind, placement),
        update=ApiCall("PUT", f"{mr}/notes/{existing}") if isinstance(existing, int) else None,
        create=ApiCall("POST", f"{mr}/notes"),
        url_key="web_url",
    )
    return outcome


def _author(note: dict[str, Any]) -> str | None:
    author = note.get("author")
    name = author.get("username") if isinstance(author, dict) else None
    return name if isinstance(name, str) else None


def _username(transport: Transport, fail: Callable[[str], None]) -> str:
    response = transport.send(ApiCall("GET", "user"))
    if response.ok and isinstance(response.data, dict):
        name = response.data.get("username")
        if isinstance(name, str) and name:
            return name
    fail(f"could not tell which GitLab account posts: {response.error or 'no username'}")
    return ""


_REF_KEYS = ("base_sha", "head_sha", "start_sha")


def _diff_refs(transport: Transport, mr: str, fail: Callable[[str], None]) -> dict[str, str]:
    """The MR's base, head and start commits (its position object needs all three), from
    the API of the origin's project (not glab's default remote); {} when unreadable."""
    response = transport.send(ApiCall("GET", mr))
    data = response.data if response.ok and isinstance(response.data, dict) else {}
    refs = data.get("diff_refs")
    if isinstance(refs, dict) and all(isinstance(refs.get(k), str) and refs[k] for k in _REF_KEYS):
        return {k: refs[k] for k in _REF_KEYS}
    fail(f"could not read the merge request's diff_refs: {response.error or 'none given'}")
    return {}


def _position(comment: InlineComment, diff: DiffMap, refs: dict[str, str]) -> dict[str, Any]:
    position: dict[str, Any] = {
        "position_type": "text",
        **refs,
        "new_path": comment.path,
        "old_path": diff.old_path(comment.path),
        "new_line": comment.last,
    }
    if comment.old_line is not None:
        position["old_line"] = comment.old_line  # a context line is anchored on both sides
    return position
