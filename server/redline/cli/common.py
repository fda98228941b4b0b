"""What the `redline` subcommands share: exit codes, the parser class, the scope flags, the
settings with the user's flags, and writing the report with its exit code.

Its own module so `main.py` (the wiring) and the commands kept in their own modules
(`debate.py`) both import it without importing each other.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline import config
from redline.config_models import Settings
from redline.errors import UsageError
from redline.model import Review, Severity
from redline.requests import ScopeKind, ScopeRequest

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
# A configured model could not be used (no key, a refused key, an unknown model, nothing
# listening): the report holds the analyzers' findings only. Distinct from 0 so CI does not
# pass a build on a broken key, and from 1 and 2 so a script can tell it apart.
EXIT_MODEL = 3
EXIT_INTERRUPTED = 130  # as a shell reports a process ended by SIGINT

FORMATS = ("markdown", "json", "json-simple", "sarif")
FORMAT_HELP = (
    "report format (default: markdown; on a terminal, a coloured view of it, unless "
    "--format markdown is given explicitly)"
)
SEVERITIES = ("critical", "high", "medium", "low")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help states its default, except where there is none to state: a flag
    (off unless given), an unset value (None), or a help text that already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, False, argparse.SUPPRESS) or "default" in text:
            return text
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors already; keep its message but make it one line.
    Help states defaults (`HelpFormatter`) in every subcommand."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # A value outside the choices names the closest one (`redline reveiw` → review):
        # argparse's own message lists them all and leaves the user to spot the typo.
        if action.choices is not None and value not in action.choices:
            choices = [str(c) for c in action.choices]
            close = difflib.get_close_matches(str(value), choices, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            if isinstance(action, argparse._SubParsersAction):
                commands = ", ".join(choices)
                raise argparse.ArgumentError(
                    None, f"unknown command {value!r}{hint} (commands: {commands})"
                )
            raise argparse.ArgumentError(
                action, f"invalid choice: {value!r}{hint} (choose from {', '.join(choices)})"
            )
        super()._check_value(action, value)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"redline: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def add_scope_flags(parser: argparse.ArgumentParser) -> None:
    """The scope flags of `review` and `debate` (none: the uncommitted changes)."""
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--uncommitted", action="store_true", help="staged + unstaged + untracked (the default)"
    )
    scope.add_argument("--staged", action="store_true", help="the index against HEAD")
    scope.add_argument(
        "--branch", nargs="?", const="", metavar="BASE", help="the branch vs BASE (from merge-base)"
    )
    scope.add_argument("--commit", metavar="REF", help="one commit, like `git show REF`")
    scope.add_argument("--since", metavar="REF", help="REF..HEAD")
    scope.add_argument("--range", metavar="A..B", dest="range_", help="a revision range")
    scope.add_argument(
        "--pr",
        metavar="N|URL|!N",
        help="a pull request (N or a GitHub URL), or a GitLab merge request (!N or its URL)",
    )
    scope.add_argument("--mr", metavar="N", help="a GitLab merge request (with a GitLab origin)")


def add_fail_on(parser: argparse.ArgumentParser) -> None:
    """--fail-on, and --baseline: the earlier report whose findings it does not count."""
    parser.add_argument(
        "--fail-on",
        type=str.lower,  # HIGH and High are high, as in the environment and config files
        choices=SEVERITIES,
        help="exit 1 when a finding at or above this severity is found (with --baseline, a "
        "new finding)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="an earlier Redline SARIF report: mark findings new, unchanged or fixed in the "
        "JSON, SARIF and Markdown reports; --fail-on counts new findings only",
    )


def add_model_flags(parser: argparse.ArgumentParser, model_help: str) -> None:
    parser.add_argument(
        "--model",
        help=f"{model_help} (default: models.model from the configuration or REDLINE_MODEL)",
    )
    parser.add_argument(
        "--api-base",
        help="OpenAI-compatible API base URL for --model (default: models.api_base or "
        "REDLINE_API_BASE)",
    )
    add_max_requests(parser)


def add_max_requests(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-requests",
        type=int,
        metavar="N",
        help="send at most N model requests in this run, retries included (llm.max_requests)",
    )


def add_report_flags(parser: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """--repo, --format and --output, as every command that writes a report takes them."""
    parser.add_argument(
        "--repo", type=Path, default=Path.cwd(), metavar="PATH", help="repository (default: .)"
    )
    parser.add_argument("--format", choices=formats, help=FORMAT_HELP)
    parser.add_argument(
        "--output", "-o", type=Path, metavar="FILE", help="write the report here, not stdout"
    )


def add_color_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour on a terminal: auto (default; off when NO_COLOR is set), always (the "
        "terminal report even when stdout is piped), never (no escape codes)",
    )


def terminal_console(args: argparse.Namespace) -> Console | None:
    """The console the report is drawn on with rich, or None for a text format.

    The rich report is for a person: only when no --format was given (its default, None, means
    "auto"; an explicit `--format markdown` always gets Markdown), the report goes to stdout,
    and stdout is a terminal or --color always asked for it. Pipes and files thus get the
    Markdown, byte for byte as before."""
    if args.format is not None or args.output is not None:
        return None
    if args.color != "always" and not sys.stdout.isatty():
        return None
    from redline.report.terminal import console_for

    return console_for(sys.stdout, args.color)


def scope_request(args: argparse.Namespace) -> ScopeRequest:
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
    if getattr(args, "mr", None):
        return ScopeRequest(ScopeKind.PR, _mr_arg(args.mr))
    return ScopeRequest(ScopeKind.UNCOMMITTED)


def _mr_arg(value: str) -> str:
    """`--mr 7` (or `!7`, or the MR's URL) as the PR scope's argument `!7`."""
    text = value.strip()
    if re.fullmatch(r"!?[1-9][0-9]{0,8}", text):
        return "!" + text.lstrip("!")
    if "://" in text and "/-/merge_requests/" in text:
        return text
    raise UsageError(
        f"--mr {text[:120]!r}: not a merge request number",
        hint="e.g. --mr 7 (the merge request !7 of this repository's GitLab origin)",
    )


def repo_root(path: Path) -> Path:
    from redline.git.runner import find_repo_root

    if not path.exists():
        raise UsageError(f"--repo {path}: no such directory")
    return find_repo_root(path)


def write_report(text: str, output: Path | None) -> None:
    """Every report the CLI prints or writes (any format, estimates, history): the last
    choke point, where no control character from a file name or a model's text gets past."""
    from redline.report.controls import escape_controls

    text = escape_controls(text)
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


def cli_settings(
    repo: Path, args: argparse.Namespace, *, offline_warnings: bool = False, **extra: Any
) -> config.LoadedSettings:
    """The user's settings for a review, ask or debate, with the flags the user passed
    (`extra`: more dotted keys a command sets); with `offline_warnings`, settings a review
    without a model ignores are said on stderr. No repository file is read here: a review
    merges in its ground's (review/ground.py; `settings_in_use` then says so). A --baseline
    file is read here too, so a bad one stops the command before any work is spent."""
    if getattr(args, "baseline", None) is not None:
        from redline.report.baseline import read_baseline

        args.baseline_report = read_baseline(args.baseline)
    flags = {
        "review.fail_on": args.fail_on,
        "models.model": args.model,
        "models.api_base": args.api_base,
        "llm.max_requests": args.max_requests,
        **extra,
    }
    loaded = config.load_user_settings(flags)
    for warning in loaded.warnings + (config.idle_settings(loaded) if offline_warnings else []):
        sys.stderr.write(f"redline: warning: {warning}\n")
    args.settings_sources = loaded.sources
    return loaded


def settings_in_use(loaded: config.LoadedSettings, args: argparse.Namespace) -> Settings:
    """The settings a review runs with once its repository layer is merged in: its warnings
    (keys a repository file may not set, ...) go to stderr once, and its sources are kept with
    the invocation's arguments, for `report_and_exit_code` to say where the --fail-on
    threshold came from (a flag, the environment, a repository file)."""
    for warning in loaded.warnings:
        sys.stderr.write(f"redline: warning: {warning}\n")
    args.settings_sources = loaded.sources
    return loaded.settings


def report_and_exit_code(
    review: Review, settings: Settings, args: argparse.Namespace, *, what: str = "review"
) -> int:
    """Write the report (secrets redacted: it lands in terminals, CI logs and PR comments);
    exit 3 when a configured model could not be used (the one line on stderr), 2 when the
    {what} failed, 1 when a finding is at or above --fail-on (naming where that came from)."""
    from redline.redaction import redact, redact_data
    from redline.report import escape_controls, render
    from redline.report.baseline import Baseline, compare

    shown = Review.model_validate(redact_data(review.model_dump(mode="json")))
    previous: Baseline | None = getattr(args, "baseline_report", None)
    comparison = compare(previous, review.findings) if previous is not None else None
    if comparison is not None:
        # The fixed findings are the earlier file's text, shown again: redacted like the rest.
        comparison = replace(
            comparison,
            absent=[
                replace(a, title=redact(a.title), file=redact(a.file), result=redact_data(a.result))
                for a in comparison.absent
            ],
        )
    console = terminal_console(args)
    if console is not None:
        from redline.report.terminal import print_terminal

        print_terminal(shown, console)
    else:
        write_report(render(shown, args.format or "markdown", comparison), args.output)
    if review.model_error is not None:
        # Before --fail-on: the analyzers' findings alone say nothing about the change's worst.
        sys.stderr.write(f"redline: error: {escape_controls(shown.model_error or '')}\n")
        return EXIT_MODEL
    if review.failure is not None:
        failure = escape_controls(shown.failure or "")
        sys.stderr.write(f"redline: error: the {what} failed: {failure}\n")
        return EXIT_ERROR
    fail_on = settings.review.fail_on
    # With a baseline, only new findings fail: CI gates on what this change brought in.
    counted = [f for f in review.findings if comparison is None or comparison.state(f.id) == "new"]
    if fail_on is not None and any(f.severity.rank >= fail_on.rank for f in counted):
        worst = max(f.severity.rank for f in counted)
        name = next(s.value for s in Severity if s.rank == worst)
        sources = getattr(args, "settings_sources", None) or {}
        source = sources.get("review.fail_on", "the settings")
        what_failed = f"{name} finding"
        if comparison is not None:
            what_failed = f"new {name} finding (not in the baseline {comparison.file})"
        sys.stderr.write(
            f"redline: failing: a {what_failed} is at or above the fail-on threshold "
            f"{fail_on.value.lower()} (set by {source})\n"
        )
        return EXIT_FINDINGS
    return EXIT_OK
