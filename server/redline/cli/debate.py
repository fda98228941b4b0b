"""`redline debate`: the debaters argue over a change on the terminal, then the report.

The debate streams to stderr as it happens (`debate_view.py`); the report goes to stdout
or --output, like review's. Ctrl+C ends the debate and goes on to the summaries; a second one
aborts (exit 130). `--interactive` asks before every turn (`debate_input.py`).
Exit codes as review and ask: 0 done, 1 a finding at or above --fail-on, 2 a usage or
configuration error or a debate that failed (the report is still written).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline import interruptible
from redline.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    add_color_flag,
    add_fail_on,
    add_model_flags,
    add_report_flags,
    add_scope_flags,
    cli_settings,
    repo_root,
    report_and_exit_code,
    scope_request,
    settings_in_use,
    write_report,
)
from redline.cli.post import add_post_flags, check_post_flags, post_if_asked
from redline.requests import MAX_ROUNDS, DebateRequest

if TYPE_CHECKING:
    from redline.config import LoadedSettings
    from redline.debate.events import DebateControl, DebateEvent
    from redline.model import Review
    from redline.progress import ProgressEvent
    from redline.review.plan import Plan

STOPPING = "redline: stopping: finishing with the summaries — Ctrl+C again to abort\n"


def add_debate_parser(sub: Any) -> None:
    debate = sub.add_parser(
        "debate",
        help="several models argue over a change, then a neutral one sums up",
    )
    add_scope_flags(debate)
    debate.add_argument(
        "--rounds",
        type=int,
        metavar="N",
        help=f"rounds of turns, 1 to {MAX_ROUNDS} (debate.rounds)",
    )
    debate.add_argument(
        "--interactive",
        action="store_true",
        help="before each turn: Enter continues, text interjects, q ends the debate",
    )
    add_report_flags(debate, ("markdown", "json"))
    add_color_flag(debate)
    add_fail_on(debate)
    add_model_flags(debate, "litellm model string for every debater without its own model")
    debate.add_argument(
        "--estimate", action="store_true", help="print the planned calls and cost; send nothing"
    )
    debate.add_argument(
        "--quiet", "-q", action="store_true", help="no progress and no live debate on stderr"
    )
    add_post_flags(debate)


class _Progress:
    """Stage lines for what comes before and after the turns; during them the debate itself
    is what stderr shows."""

    def __init__(self, quiet: bool, color: str = "auto") -> None:
        from redline.progress import StderrProgress

        self.inner = StderrProgress(quiet=quiet, color=color)

    def report(self, event: ProgressEvent) -> None:
        from redline.progress import Stage

        if event.stage is not Stage.DEBATING:
            self.inner.report(event)


def cmd_debate(args: argparse.Namespace) -> int:
    from redline.agent.litellm_loader import start_background_import
    from redline.cli.debate_input import require_terminal
    from redline.debate.roster import build_roster

    check_post_flags(args)
    request = DebateRequest(scope_request(args), args.rounds).check()
    if args.interactive and not args.estimate:
        require_terminal(sys.stdin)
    repo = repo_root(args.repo)
    loaded = cli_settings(repo, args)  # the user's; the debate's plan adds the repository's
    settings = loaded.settings
    build_roster(settings)  # no model → UsageError (roster.NEEDS_MODEL) before anything runs
    if args.estimate:
        # No background import here: the estimate ends before its warm-up would, and a daemon
        # thread still importing at interpreter exit can hang the exit on the import lock.
        return _estimate(request, repo, loaded, args)
    start_background_import()  # litellm's import overlaps collecting the change
    review = interruptible.run(_debate(request, repo, loaded, args))
    if review is None:
        sys.stderr.write("redline: interrupted\n")
        return EXIT_INTERRUPTED
    code = report_and_exit_code(review, settings, args, what="debate")
    return post_if_asked(args, review, "debate", None, code, settings)


async def _debate(
    request: DebateRequest, repo: Path, loaded: LoadedSettings, args: argparse.Namespace
) -> Review | None:
    """The debate with Ctrl+C handled on the loop; None when the user aborted it."""
    from redline.cli.debate_input import TerminalPrompter
    from redline.cli.debate_view import DebateView
    from redline.debate.events import DebateControl
    from redline.debate.run import run_debate
    from redline.store import TaskStore

    control = DebateControl()
    if args.interactive:
        control.before_turn = TerminalPrompter(control, sys.stdin, sys.stderr)
    progress = _Progress(args.quiet, args.color)
    # The view erases the live progress line before it writes; the line comes back with the
    # next stage after the turns.
    on_event = None if args.quiet else DebateView(sys.stderr, before_write=progress.inner.pause)
    task = asyncio.ensure_future(
        run_debate(
            request,
            repo,
            loaded,
            progress=progress,
            store=TaskStore.for_settings(loaded.settings),
            on_event=_safe(on_event),
            control=control,
        )
    )
    with _sigint_handled(control, task) as aborted:
        try:
            return await task
        except asyncio.CancelledError:
            if aborted():
                return None
            raise


def _safe(view: Any) -> Any:
    """The view as the engine's on_event: a broken stderr (a closed pipe) must not end the
    debate, whose report still goes to stdout."""
    if view is None:
        return None

    def on_event(event: DebateEvent) -> None:
        with contextlib.suppress(OSError, ValueError):
            view(event)

    return on_event


@contextlib.contextmanager
def _sigint_handled(control: DebateControl, task: asyncio.Future[Any]) -> Any:
    """While inside: the first SIGINT stops the debate (it goes on to the summaries), the
    second cancels it. Yields a function telling whether it was aborted. Outside a main
    thread or on a platform without loop signal handlers, Ctrl+C stays KeyboardInterrupt."""
    loop = asyncio.get_running_loop()
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write("\n" + STOPPING)
                sys.stderr.flush()
            control.stop("user")
        else:
            task.cancel()

    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    try:
        yield lambda: presses >= 2
    finally:
        if installed:
            # Restores Python's own handler (KeyboardInterrupt) for what follows the debate.
            loop.remove_signal_handler(signal.SIGINT)


def _estimate(
    request: DebateRequest, repo: Path, loaded: LoadedSettings, args: argparse.Namespace
) -> int:
    from redline.debate.change import change_text
    from redline.debate.estimate import estimate_debate
    from redline.debate.roster import build_roster
    from redline.progress import ProgressEvent, Stage
    from redline.review.pipeline import plan_review

    progress = _Progress(args.quiet, args.color)
    plan: Plan = plan_review(repo, request.scope, loaded, progress, function_metrics=False)
    settings = settings_in_use(plan.loaded, args)
    if plan.empty:
        progress.report(ProgressEvent(Stage.DONE, f"nothing to debate: {plan.scope.label}"))
        return EXIT_OK
    progress.report(ProgressEvent(Stage.DONE, f"estimate for {plan.scope.label}"))
    estimate = estimate_debate(
        build_roster(settings),
        settings,
        rounds=request.rounds or settings.debate.rounds,
        change_tokens=change_text(plan, settings.debate.change_tokens).tokens,
        scope_label=plan.scope.label,
    )
    write_report(
        estimate.as_json() if args.format == "json" else estimate.as_markdown(), args.output
    )
    return EXIT_OK
