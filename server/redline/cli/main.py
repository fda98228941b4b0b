"""The `redline` command line.

Exit codes: 0 done, 1 a finding at or above --fail-on, 2 a usage, configuration or repository
error, or a review that failed (`ask` when the agent never submitted — out of steps, looping;
the report is still written and its headline says why), 3 when a configured model could not
be used (the report holds the analyzers' findings; one line on stderr says why), 130 when
interrupted. The report goes to stdout (or --output); progress and messages go to
stderr. The shared helpers are in `common.py`; `redline debate` in `debate.py`,
`redline eval` in `eval.py`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from redline.cli.common import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    FORMATS,
    Parser,
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
from redline.cli.config import add_config_parser, add_init_parser, cmd_config, cmd_init
from redline.cli.debate import add_debate_parser
from redline.cli.eval import add_eval_parser
from redline.cli.history import add_history_parser, cmd_history
from redline.cli.memory import add_memory_parser
from redline.cli.post import add_post_flags, check_post_flags, post_if_asked
from redline.errors import ConfigError, RedlineError, UsageError
from redline.requests import AskRequest


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("redline")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """Every command and option; public so a test can walk it (every option has help)."""
    parser = Parser(
        prog="redline",
        description="An LLM code reviewer for your diff.",
        epilog="`redline COMMAND --help` shows a command's options. `redline` alone prints "
        "this help and exits 0.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {_version()}", help="print the version"
    )
    # Not required: `redline` alone prints the help (exit 0), as git-style tools do.
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    review = sub.add_parser(
        "review",
        help="review a change (default: uncommitted changes)",
        description="Review a change: the analyzers always, the model pipeline with a model. "
        "The report goes to stdout (or --output), progress to stderr.",
    )
    add_scope_flags(review)
    add_report_flags(review, FORMATS)
    add_color_flag(review)
    add_fail_on(review)
    add_model_flags(review, "litellm model string; without one, the analyzers only")
    review.add_argument(
        "--estimate", action="store_true", help="print units, skips and the plan; run nothing"
    )
    review.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    add_post_flags(review)

    _add_ask_parser(sub)
    add_debate_parser(sub)
    add_eval_parser(sub)

    add_init_parser(sub)
    sub.add_parser(
        "lsp",
        help="run the language server over stdio (for editors)",
        description="Run the language server over stdio; an editor starts this, not a person.",
    )
    add_history_parser(sub)
    add_memory_parser(sub)
    add_config_parser(sub)
    return parser


def _add_ask_parser(sub: Any) -> None:
    ask = sub.add_parser(
        "ask", help='review what a free-form request names, e.g. "review the current branch"'
    )
    ask.add_argument("request", help='e.g. "review pull request 12", "审查当前分支"')
    add_report_flags(ask, FORMATS)
    add_color_flag(ask)
    add_fail_on(ask)
    add_model_flags(ask, "litellm model string (required here: ask is model-driven)")
    ask.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")


def _cmd_review(args: argparse.Namespace) -> int:
    # Only what this path needs: litellm's loader with a model, the estimate with --estimate
    # (it brings the context builder and the prompts), never for an offline review.
    from redline.progress import ProgressEvent, Stage, StderrProgress
    from redline.review.pipeline import empty_review, plan_review, run_review
    from redline.store import TaskStore

    check_post_flags(args)
    repo = repo_root(args.repo)
    loaded = cli_settings(repo, args, offline_warnings=True)
    settings = loaded.settings  # the user's own: the repository's are merged in by the plan
    if not args.estimate:
        _preload_redaction(offline=settings.models.model is None)
    progress = StderrProgress(quiet=args.quiet, color=args.color)
    if settings.models.model is not None and not args.estimate:
        # litellm's import (seconds) overlaps the git, unit and analyzer work below. Not for
        # --estimate: it ends before the import's warm-up would, and a daemon thread still
        # importing at interpreter exit can hang the exit on the import lock.
        from redline.agent.litellm_loader import start_background_import

        start_background_import()

    with _frozen_after():
        plan = plan_review(
            repo, scope_request(args), loaded, progress, function_metrics=args.estimate or None
        )
    # From here on: with the repository's settings of the review's ground (its base revision
    # for a review of commits, review/ground.py).
    settings = settings_in_use(plan.loaded, args)
    if plan.empty:
        progress.report(ProgressEvent(Stage.DONE, f"nothing to review: {plan.scope.label}"))
        if args.estimate:
            return EXIT_OK
        # Still a report: CI reads --output (or a piped SARIF) whether or not anything changed.
        review = empty_review(plan)
        code = report_and_exit_code(review, settings, args)
        return post_if_asked(args, review, "review", plan.scope, code, settings)
    if args.estimate:
        from redline.review.estimate import estimate_model, render_estimate

        progress.report(ProgressEvent(Stage.DONE, f"estimate for {plan.scope.label}"))
        estimate = estimate_model(plan, settings)
        as_json = args.format not in (None, "markdown")
        text = render_estimate(plan, as_json=as_json, model_estimate=estimate)
        write_report(text, args.output)
        return EXIT_OK

    review = run_review(plan, settings, progress, store=TaskStore.for_settings(settings))
    code = report_and_exit_code(review, settings, args)
    return post_if_asked(args, review, "review", plan.scope, code, settings)


@contextlib.contextmanager
def _frozen_after() -> Iterator[None]:
    """In a whole `redline` process: the collector paused for the block, and what the block
    allocated frozen before it resumes.

    The plan (tens of thousands of objects on a large change, no reference cycles) lives until
    the process ends. plan_review pauses the collector too, but then the first collection after
    it scans the whole plan (~25 ms on 2,000 files) and older generations do again later;
    frozen first, no collection traverses it. Elsewhere (tests, embedders) nothing changes."""
    if not _whole_process or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        gc.enable()


def _preload_redaction(offline: bool) -> None:
    """detect-secrets' plugins (~0.15 s of imports and regexes), loaded while git works.

    A review always needs them: its task record and its report are redacted, and both hold ids
    that pass the redactor's pre-filter. Loaded on first use they sat between the diff and the
    report; in this thread they fill the waits on git's processes. Not a daemon: an early exit
    (a bad ref) waits for it rather than ending the interpreter mid-import."""
    import functools
    import threading

    from redline.redaction import get_redactor

    # Offline, nothing in this process imports `requests` (litellm never loads), so the
    # plugins load without it (redaction/plugins.py `_inert_requests`).
    load = functools.partial(get_redactor().load_plugins, without_requests=offline)
    threading.Thread(target=_quietly, args=(load,), name="redline-redaction-load").start()


def _quietly(load: Callable[[], None]) -> None:
    """A warm-up only: if it fails, the first redaction loads again in the main thread, which
    says why in one line (an exception left to the thread would print its traceback)."""
    try:
        load()
    except Exception:
        logging.getLogger(__name__).debug("preloading the redaction plugins failed", exc_info=True)


def _cmd_ask(args: argparse.Namespace) -> int:
    from redline import interruptible
    from redline.agent.litellm_loader import start_background_import
    from redline.progress import StderrProgress
    from redline.review.ask import ASK_NEEDS_MODEL, ROLE, ask_settings, run_ask
    from redline.store import TaskStore

    repo = repo_root(args.repo)
    user = cli_settings(repo, args)
    if user.settings.models.for_role(ROLE)[0] is None:
        # Unlike review, there is no offline fallback: the model is what reads the request.
        raise UsageError(ASK_NEEDS_MODEL)
    start_background_import()  # overlaps the agent's set-up
    progress = StderrProgress(quiet=args.quiet, color=args.color)
    request = AskRequest(args.request).check()
    loaded, ground = ask_settings(repo, user)
    settings = settings_in_use(loaded, args)
    review = interruptible.run(
        run_ask(
            request,
            repo,
            settings,
            ground=ground,
            progress=progress,
            store=TaskStore.for_settings(settings),
        )
    )
    return report_and_exit_code(review, settings, args)


# True when `main` runs the whole process (the console script, `python -m`): what is allocated
# before the work starts lives until the exit, so it can be frozen (see gc.freeze below).
_whole_process = False


def main(argv: Sequence[str] | None = None) -> int:
    global _whole_process
    _whole_process = argv is None
    if _whole_process:
        gc.freeze()  # the imports' objects (modules, classes, pydantic schemas) outlive the run
    args: argparse.Namespace | None = None
    try:
        parser = build_parser()
        from redline.redaction.stream import redacting_stderr

        with redacting_stderr():  # argparse echoes arguments in its errors
            args = parser.parse_args(argv)
        code = _dispatch(parser, args)
    except SystemExit as exc:
        if args is None and not _whole_process:
            raise  # argparse's own exit (--help, a usage error), as its callers expect
        code = _exit_code(exc)  # raised inside a command: its code is the exit code
    except KeyboardInterrupt:
        _say("redline: interrupted")
        code = EXIT_INTERRUPTED
    except BaseException as exc:
        if not _whole_process and not isinstance(exc, Exception):
            raise  # a caller's own control flow (a test's outcome, GeneratorExit)
        # Anything else is a bug (or input nothing foresaw): one line and exit 2 — never a
        # traceback, and never 1, which says "findings at or above --fail-on". Even when its
        # message cannot be formatted, or stderr is gone: nothing may skip `_before_exit`.
        _say(
            f"redline: internal error: {type(exc).__name__}: {_one_line(_message(exc))} "
            "(a bug in Redline: please report it)"
        )
        code = EXIT_ERROR
    if _whole_process:
        _before_exit(code)
    return code


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    if args.command == "lsp":
        # Imported here: the CLI stays light, and nothing may touch stdout before the server
        # takes it over for JSON-RPC.
        from redline.lsp.server import main as lsp_main

        return lsp_main()
    from redline.redaction.stream import redacting_stderr

    with redacting_stderr():  # whatever the command writes to stderr: see stream.py
        return _run_command(args)


def _message(exc: object) -> str:
    """An exception's message (or a SystemExit's); empty when its `__str__` raises."""
    try:
        return str(exc)
    except Exception:
        return ""


def _say(line: str) -> None:
    """One line on stderr. A stderr that is gone (the terminal closed) loses the line, never
    the exit code: nothing may escape `main` past `_before_exit`."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _before_exit(code: int) -> None:
    """The process ends next (the console script or `python -m`); its code is `code`."""
    loader = sys.modules.get("redline.agent.litellm_loader")
    if code == EXIT_INTERRUPTED or (loader is not None and loader.import_in_progress()):
        # Ctrl+C: "interrupted" is written, and a model call's executor thread may still be
        # setting up (interruptible.py): the interpreter's exit would join it, for seconds.
        # An early exit (a bad ref, an estimate) while a daemon thread still imports litellm:
        # the interpreter's shutdown can deadlock on the import lock it holds. Everything is
        # written by now (report, task record, the error line): leave at once.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe loses no exit code
                stream.flush()
        os._exit(code)
    # With litellm loaded, the interpreter's final collections scan ~250k objects for ~1.2 s
    # after the report is out. Frozen, they are left to the exit. (Callers passing argv —
    # tests, embedders — keep their collector as it was.)
    gc.freeze()


def _exit_code(exc: SystemExit) -> int:
    """The exit code a SystemExit asks for (a message instead of a code: one line, exit 2)."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or EXIT_OK
    _say(f"redline: error: {_one_line(_message(exc.code))}")
    return EXIT_ERROR


def _one_line(text: str) -> str:
    """The first line of a message, redacted, without control characters, at most 300
    characters; "(no message)" when there is none, or when the redactor itself fails (never the
    unredacted text)."""
    try:
        from redline.git.process import strip_control
        from redline.redaction import redact

        line = strip_control(redact(text).strip().split("\n", 1)[0])
    except Exception:
        return "(no message)"
    if not line:
        return "(no message)"
    return line if len(line) <= 300 else line[:299] + "…"


def _run_command(args: argparse.Namespace) -> int:
    from redline.redaction import redact
    from redline.redaction.logfilter import configure_cli_logging

    configure_cli_logging()  # warnings on stderr, secrets redacted
    try:
        if args.command == "review":
            return _cmd_review(args)
        if args.command == "ask":
            return _cmd_ask(args)
        if args.command == "debate":
            from redline.cli.debate import cmd_debate

            return cmd_debate(args)
        if args.command == "eval":
            from redline.cli.eval import cmd_eval

            return cmd_eval(args)
        if args.command == "init":
            return cmd_init(args)
        if args.command == "history":
            return cmd_history(args)
        if args.command == "memory":
            from redline.cli.memory import cmd_memory

            return cmd_memory(args)
        return cmd_config(args)
    except ConfigError as exc:
        sys.stderr.write(f"redline: configuration error: {redact(str(exc))}\n")
        return EXIT_ERROR
    except RedlineError as exc:
        sys.stderr.write(f"redline: error: {redact(str(exc))}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("redline: interrupted\n")
        return EXIT_INTERRUPTED
    finally:
        progress = sys.modules.get("redline.progress")
        if progress is not None:
            progress.close_live_lines()  # an error or Ctrl+C must not leave the line drawn


if __name__ == "__main__":
    raise SystemExit(main())
