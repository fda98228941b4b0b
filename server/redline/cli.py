"""The `redline` command line.

Exit codes: 0 done, 1 a finding at or above --fail-on, 2 a usage, configuration or repository
error, or a review that failed (`ask` when the agent never submitted — out of steps, looping,
or its model could not be used; the report is still written and its headline says why).
The report goes to stdout (or --output); progress and messages go to stderr.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline import config
from redline.config_models import Settings
from redline.errors import ConfigError, RedlineError, UsageError
from redline.model import Review, Severity
from redline.requests import AskRequest, ScopeKind, ScopeRequest

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

FORMATS = ("markdown", "json", "json-simple", "sarif")


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors already; keep its message but make it one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"redline: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="redline", description="An LLM code reviewer for your diff.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    review = sub.add_parser("review", help="review a change (default: uncommitted changes)")
    scope = review.add_mutually_exclusive_group()
    scope.add_argument("--uncommitted", action="store_true", help="staged + unstaged + untracked")
    scope.add_argument("--staged", action="store_true", help="the index against HEAD")
    scope.add_argument(
        "--branch", nargs="?", const="", metavar="BASE", help="the branch vs BASE (from merge-base)"
    )
    scope.add_argument("--commit", metavar="REF", help="one commit, like `git show REF`")
    scope.add_argument("--since", metavar="REF", help="REF..HEAD")
    scope.add_argument("--range", metavar="A..B", dest="range_", help="a revision range")
    scope.add_argument("--pr", metavar="N|URL", help="a pull request")
    review.add_argument("--repo", type=Path, default=Path.cwd(), help="repository (default: .)")
    review.add_argument("--format", choices=FORMATS, default="markdown")
    review.add_argument("--output", "-o", type=Path, help="write the report here, not stdout")
    review.add_argument(
        "--fail-on",
        choices=("critical", "high", "medium", "low"),
        help="exit 1 when a finding at or above this severity is found",
    )
    review.add_argument("--model", help="litellm model string (used from the LLM pipeline on)")
    review.add_argument("--api-base", help="OpenAI-compatible API base URL for --model")
    _add_max_requests(review)
    review.add_argument(
        "--estimate", action="store_true", help="print units, skips and the plan; run nothing"
    )
    review.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")

    _add_ask_parser(sub)

    init = sub.add_parser("init", help="write a commented configuration file")
    init.add_argument(
        "--repo-file",
        action="store_true",
        help="write .redline.toml in the repository instead of the user file",
    )
    init.add_argument("--repo", type=Path, default=Path.cwd())
    init.add_argument("--force", action="store_true", help="overwrite an existing file")

    sub.add_parser("lsp", help="run the language server over stdio (for editors)")

    history = sub.add_parser("history", help="list past reviews, or re-render one")
    history.add_argument("task_id", nargs="?", help="the review to show")
    history.add_argument("--format", choices=FORMATS, default="markdown")
    history.add_argument("--limit", type=int, default=20)

    cfg = sub.add_parser("config", help="show or validate the merged settings")
    cfg_sub = cfg.add_subparsers(dest="config_command", required=True, parser_class=_Parser)
    for name, text in (("show", "print settings and their sources"), ("validate", "check files")):
        p = cfg_sub.add_parser(name, help=text)
        p.add_argument("--repo", type=Path, default=Path.cwd())
    return parser


def _add_ask_parser(sub: Any) -> None:
    ask = sub.add_parser(
        "ask", help='review what a free-form request names, e.g. "review the current branch"'
    )
    ask.add_argument("request", help='e.g. "review pull request 12", "审查当前分支"')
    ask.add_argument("--repo", type=Path, default=Path.cwd(), help="repository (default: .)")
    ask.add_argument("--format", choices=FORMATS, default="markdown")
    ask.add_argument("--output", "-o", type=Path, help="write the report here, not stdout")
    ask.add_argument(
        "--fail-on",
        choices=("critical", "high", "medium", "low"),
        help="exit 1 when a finding at or above this severity is found",
    )
    ask.add_argument("--model", help="litellm model string (required here: ask is model-driven)")
    ask.add_argument("--api-base", help="OpenAI-compatible API base URL for --model")
    _add_max_requests(ask)
    ask.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")


def _add_max_requests(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-requests",
        type=int,
        metavar="N",
        help="send at most N model requests in this run, retries included (llm.max_requests)",
    )


def _scope_request(args: argparse.Namespace) -> ScopeRequest:
    if args.staged:
        return ScopeRequest(ScopeKind.STAGED)
    if args.branch is not None:
        return ScopeRequest(ScopeKind.BRANCH, args.branch or None)
    if args.commit:
        return ScopeRequest(ScopeKind.COMMIT, args.commit)
    if args.since:
        return ScopeRequest(ScopeKind.SINCE, args.since)
    if args.range_:
        return ScopeRequest(ScopeKind.RANGE, args.range_).check()
    if args.pr:
        return ScopeRequest(ScopeKind.PR, args.pr)
    return ScopeRequest(ScopeKind.UNCOMMITTED)


def _repo_root(path: Path) -> Path:
    from redline.git.runner import find_repo_root

    if not path.exists():
        raise UsageError(f"--repo {path}: no such directory")
    return find_repo_root(path)


def _write_report(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--output {output}: cannot write: {exc.strerror}") from None
    sys.stderr.write(f"redline: report written to {output}\n")


def _settings(repo: Path, args: argparse.Namespace) -> Settings:
    """Merged settings for a review or ask, with the flags the user passed; warnings (keys a
    repository file may not set) go to stderr."""
    flags = {
        "review.fail_on": args.fail_on,
        "models.model": args.model,
        "models.api_base": args.api_base,
        "llm.max_requests": args.max_requests,
    }
    loaded = config.load_settings(repo, flags)
    for warning in loaded.warnings:
        sys.stderr.write(f"redline: warning: {warning}\n")
    return loaded.settings


def _report_and_exit_code(review: Review, settings: Settings, args: argparse.Namespace) -> int:
    """Write the report (secrets redacted: it lands in terminals, CI logs and PR comments);
    exit 2 when the review failed, 1 when a finding is at or above --fail-on."""
    from redline.redaction import redact_data
    from redline.report import render

    shown = Review.model_validate(redact_data(review.model_dump(mode="json")))
    _write_report(render(shown, args.format), args.output)
    if review.failure is not None:
        sys.stderr.write(f"redline: error: the review failed: {shown.failure}\n")
        return EXIT_ERROR
    fail_on = settings.review.fail_on
    if fail_on is not None and any(f.severity.rank >= fail_on.rank for f in review.findings):
        worst = max(f.severity.rank for f in review.findings)
        name = next(s.value for s in Severity if s.rank == worst)
        sys.stderr.write(f"redline: failing: a {name} finding is at or above --fail-on\n")
        return EXIT_FINDINGS
    return EXIT_OK


def _cmd_review(args: argparse.Namespace) -> int:
    from redline.agent.litellm_loader import start_background_import
    from redline.progress import ProgressEvent, Stage, StderrProgress
    from redline.review.estimate import estimate_model, render_estimate
    from redline.review.pipeline import plan_review, run_review
    from redline.store import TaskStore

    repo = _repo_root(args.repo)
    settings = _settings(repo, args)
    progress = StderrProgress(quiet=args.quiet)
    if settings.models.model is not None:
        # litellm's import (seconds) overlaps the git, unit and analyzer work below.
        start_background_import()

    plan = plan_review(
        repo, _scope_request(args), settings, progress, function_metrics=args.estimate or None
    )
    if plan.empty:
        progress.report(ProgressEvent(Stage.DONE, f"nothing to review: {plan.scope.label}"))
        return EXIT_OK
    if args.estimate:
        progress.report(ProgressEvent(Stage.DONE, f"estimate for {plan.scope.label}"))
        estimate = estimate_model(plan, settings)
        text = render_estimate(plan, as_json=args.format != "markdown", model_estimate=estimate)
        _write_report(text, args.output)
        return EXIT_OK

    review = run_review(plan, settings, progress, store=TaskStore())
    return _report_and_exit_code(review, settings, args)


def _cmd_ask(args: argparse.Namespace) -> int:
    import asyncio

    from redline.agent.litellm_loader import start_background_import
    from redline.progress import StderrProgress
    from redline.review.ask import ASK_NEEDS_MODEL, ROLE, run_ask
    from redline.store import TaskStore

    repo = _repo_root(args.repo)
    settings = _settings(repo, args)
    if settings.models.for_role(ROLE)[0] is None:
        # Unlike review, there is no offline fallback: the model is what reads the request.
        raise UsageError(ASK_NEEDS_MODEL)
    start_background_import()  # overlaps the agent's set-up
    progress = StderrProgress(quiet=args.quiet)
    request = AskRequest(args.request).check()
    review = asyncio.run(run_ask(request, repo, settings, progress=progress, store=TaskStore()))
    return _report_and_exit_code(review, settings, args)


def _cmd_init(args: argparse.Namespace) -> int:
    if args.repo_file:
        target = _repo_root(args.repo) / config.REPO_FILE
        path = config.write_template(target, include_models=False, force=args.force)
    else:
        path = config.write_template(
            config.user_config_file(), include_models=True, force=args.force
        )
    sys.stderr.write(f"redline: wrote {path}\n")
    return EXIT_OK


def _cmd_history(args: argparse.Namespace) -> int:
    from redline.report import render
    from redline.store import TaskStore

    store = TaskStore()
    if args.task_id is None:
        rows = store.list(limit=args.limit)
        if not rows:
            sys.stderr.write(f"redline: no reviews recorded yet in {store.root}\n")
            return EXIT_OK
        for row in rows:
            counts = ", ".join(f"{n} {s}" for s, n in row.counts.items() if n) or "no findings"
            sys.stdout.write(
                f"{row.task_id}  {row.created:%Y-%m-%d %H:%M}  {row.status:<9}  "
                f"{row.scope_label}  ({counts})\n"
            )
        return EXIT_OK
    data = store.load(args.task_id)
    if not data.get("review"):
        raise UsageError(
            f"review {args.task_id} has no result (status: {data.get('status', 'unknown')})"
        )
    _write_report(render(Review.model_validate(data["review"]), args.format), None)
    return EXIT_OK


def _cmd_config(args: argparse.Namespace) -> int:
    repo: Path | None
    try:
        repo = _repo_root(args.repo)
    except RedlineError:
        repo = None  # config still works outside a repository: user file + environment
    loaded = config.load_settings(repo)
    if args.config_command == "show":
        sys.stdout.write(config.describe(loaded))
        return EXIT_OK
    checked = [str(p) for p in loaded.files] or ["(no configuration files; defaults)"]
    for warning in loaded.warnings:
        sys.stderr.write(f"redline: warning: {warning}\n")
    sys.stdout.write(json.dumps({"valid": True, "files": checked}) + "\n")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command == "lsp":
        # Imported here: the CLI stays light, and nothing may touch stdout before the server
        # takes it over for JSON-RPC.
        from redline.lsp.server import main as lsp_main

        return lsp_main()
    try:
        return _run_command(args)
    finally:
        if argv is None:
            # The process ends next (the console script or `python -m`): with litellm loaded,
            # the interpreter's final collections scan ~250k objects for ~1.2 s after the
            # report is out. Frozen, they are left to the exit. (Callers passing argv — tests,
            # embedders — keep their collector as it was.)
            gc.freeze()


def _run_command(args: argparse.Namespace) -> int:
    from redline.redaction import redact
    from redline.redaction.logfilter import configure_cli_logging

    configure_cli_logging()  # warnings on stderr, secrets redacted
    try:
        if args.command == "review":
            return _cmd_review(args)
        if args.command == "ask":
            return _cmd_ask(args)
        if args.command == "init":
            return _cmd_init(args)
        if args.command == "history":
            return _cmd_history(args)
        return _cmd_config(args)
    except ConfigError as exc:
        sys.stderr.write(f"redline: configuration error: {redact(str(exc))}\n")
        return EXIT_ERROR
    except RedlineError as exc:
        sys.stderr.write(f"redline: error: {redact(str(exc))}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("redline: interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
