"""`--post`, `--inline`, `--dry-run` of `review` and `debate`: the report on the pull request.

Posting is the user's act: only these flags turn it on (no setting, environment variable or
repository file can), and only for the request the scope names (`--pr`, `--mr`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from redline.cli.common import EXIT_ERROR, EXIT_MODEL, scope_request
from redline.config_models import Settings
from redline.errors import RedlineError, UsageError
from redline.git.scopes import ScopeDiff
from redline.model import Review
from redline.publish.markers import Kind


def add_post_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--post",
        action="store_true",
        help="post the report as a comment on the pull or merge request (--pr/--mr), through "
        "your gh or glab; a later run updates the same comment",
    )
    parser.add_argument(
        "--inline",
        action="store_true",
        help="with --post: also one review comment per finding on its line, with a suggestion "
        "when the fix replaces exactly those lines",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="with --post: print each request (method, endpoint, body) instead of sending it",
    )


def check_post_flags(args: argparse.Namespace) -> None:
    """Refuse flag combinations that cannot mean anything, before any work is done."""
    if (args.inline or args.dry_run) and not args.post:
        raise UsageError("--inline and --dry-run go with --post")
    if args.post and not (args.pr or getattr(args, "mr", None)):
        raise UsageError(
            "--post needs the pull request to post on",
            hint="add --pr N (GitHub) or --mr N (GitLab)",
        )
    if args.post and getattr(args, "estimate", False):
        raise UsageError("--estimate runs nothing, so there is nothing to --post")


def _show(text: str) -> None:
    sys.stderr.write(text)


def post_if_asked(
    args: argparse.Namespace,
    review: Review,
    kind: Kind,
    scope: ScopeDiff | None,
    code: int,
    settings: Settings,
) -> int:
    """Post after the report is written; the exit code, 2 when posting failed."""
    if not args.post:
        return code
    from redline.git.scopes import resolve_scope
    from redline.publish.common import PostOptions
    from redline.publish.post import PostRequest, post_review
    from redline.redaction import redact
    from redline.report.controls import escape_controls

    try:
        if scope is None:  # the debate keeps no diff: read the request's again
            scope = resolve_scope(Path(review.repo), scope_request(args))
        request = PostRequest(
            repo_root=scope.repo_root,
            pr_arg=str(scope.request.arg),
            diff_text=scope.diff_text,
            reviewed_head=scope.new_rev,
            options=PostOptions(
                inline=args.inline,
                dry_run=args.dry_run,
                max_writes=settings.publish.max_writes,
            ),
        )
        lines = post_review(review, kind, request, show=_show)
    except RedlineError as exc:
        message = escape_controls(redact(str(exc)))
        sys.stderr.write(f"redline: error: posting to the pull request: {message}\n")
        return code if code in (EXIT_ERROR, EXIT_MODEL) else EXIT_ERROR
    for line in lines:
        sys.stderr.write(f"redline: {escape_controls(redact(line))}\n")
    return code
