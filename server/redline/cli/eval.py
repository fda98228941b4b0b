"""`redline eval`: plant bugs, review each planted change with the real pipeline, and score
what reached the user, for one or several models side by side (or the analyzers alone).

The table goes to stdout, progress to stderr; the results are saved under Redline's cache
directory (`<cache>/evals/<id>.json`). Exit codes: 0 the eval ran, 2 bad input (a usage,
configuration or repository error, nothing to plant a bug in), 3 a model could not be used
(its cases are errors in the table; the others ran), 130 interrupted. The temporary
repositories are removed in every case.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.cli.common import EXIT_MODEL, EXIT_OK, add_max_requests, repo_root, write_report
from redline.errors import UsageError

if TYPE_CHECKING:
    from redline.eval.cases import Workspace
    from redline.eval.run import Target
    from redline.eval.truth import CaseResult

DEFAULT_CASES = 20
MAX_CASES = 1000
CORPORA = ("bundled",)


def add_eval_parser(sub: Any) -> None:
    ev = sub.add_parser(
        "eval",
        help="measure models: plant bugs, review them, report recall, precision and losses",
        description="Plant known bugs (one per case) in the bundled corpus or a clone of your "
        "repository, review each planted change with the real pipeline, and report what "
        "reached you. Without a model, the analyzers are measured.",
    )
    source = ev.add_mutually_exclusive_group()
    source.add_argument(
        "--repo",
        type=Path,
        metavar="PATH",
        help="plant the bugs in a temporary clone of this repository at its HEAD commit "
        "(default: the bundled corpus)",
    )
    source.add_argument(
        "--corpus",
        choices=CORPORA,
        help="plant the bugs in the programs shipped with Redline (the default source)",
    )
    ev.add_argument(
        "--cases",
        type=int,
        default=DEFAULT_CASES,
        metavar="N",
        help=f"number of planted bugs, 1 to {MAX_CASES}",
    )
    ev.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the mutant generator")
    ev.add_argument(
        "--model",
        action="append",
        metavar="M",
        help="litellm model string; repeat to compare models on the same cases (default: "
        "models.model from the configuration or REDLINE_MODEL; none: the analyzers only)",
    )
    ev.add_argument(
        "--api-base",
        help="OpenAI-compatible API base URL for every --model (default: models.api_base or "
        "REDLINE_API_BASE)",
    )
    add_max_requests(ev)
    ev.add_argument(
        "--format", choices=("markdown", "json"), default="markdown", help="output format"
    )
    ev.add_argument(
        "--estimate",
        action="store_true",
        help="print the planned calls and cost of the cases; send nothing",
    )
    ev.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        sys.stderr.write(f"redline: eval: {text}\n")
        sys.stderr.flush()


def _targets(args: argparse.Namespace, repo: Path | None) -> list[Target]:
    from redline import config
    from redline.eval.run import Target

    models: list[str | None] = list(dict.fromkeys(args.model or [])) or [None]
    targets: list[Target] = []
    warned = False
    for model in models:
        flags = {
            "models.model": model,
            "models.api_base": args.api_base,
            "llm.max_requests": args.max_requests,
        }
        # The user's own: each case's review merges in the repository settings of its base
        # (the clone of HEAD), like any review of commits (review/ground.py).
        loaded = config.load_user_settings(flags)
        if not warned:
            for warning in loaded.warnings:
                sys.stderr.write(f"redline: warning: {warning}\n")
            warned = True
        targets.append(Target.of(loaded.settings))
    return targets


def cmd_eval(args: argparse.Namespace) -> int:
    from redline.eval.cases import case_workspace

    if not 1 <= args.cases <= MAX_CASES:
        raise UsageError(f"--cases {args.cases}: give a number from 1 to {MAX_CASES}")
    repo = repo_root(args.repo) if args.repo is not None else None
    targets = _targets(args, repo)
    source = str(repo) if repo is not None else "bundled corpus"
    with case_workspace() as ws:
        _plant(ws, args, repo)
        if args.estimate:
            from redline.eval.report import render_estimate
            from redline.eval.run import estimate_eval

            estimates = estimate_eval(ws.cases, targets)
            text = render_estimate(estimates, len(ws.cases), source, as_json=args.format == "json")
            write_report(text, None)
            return EXIT_OK
        return _run(ws, args, targets, source)


def _plant(ws: Workspace, args: argparse.Namespace, repo: Path | None) -> None:
    from redline.eval import cases

    if repo is not None:
        _say(args, f"cloning {repo} at HEAD into a temporary directory")
        cases.clone_head(ws, repo)
        files = ws.source_files()
        if not files:
            raise UsageError(
                f"{repo}: no Python, JavaScript, TypeScript or Go file at HEAD to plant a bug in"
            )
        mutants = cases.generate_mutants(files, seed=args.seed, limit=args.cases)
    else:
        corpus, own = cases.bundled_files()
        mutants = cases.generate_mutants([*corpus, *own], seed=args.seed, limit=args.cases)
        cases.commit_files(ws, cases.bundled_base(mutants, corpus, own))
    if not mutants:
        raise UsageError(
            f"no bug could be planted in {repo or 'the bundled corpus'}",
            hint="the generator mutates Python, JavaScript, TypeScript and Go functions",
        )
    cases.add_cases(ws, mutants[: args.cases])
    _say(args, f"{len(ws.cases)} cases planted (seed {args.seed})")


def _run(ws: Workspace, args: argparse.Namespace, targets: list[Target], source: str) -> int:
    from redline.eval.report import label, render_json, render_markdown
    from redline.eval.run import run_eval, save_run

    if any(t.settings.models.model for t in targets):
        from redline.agent.litellm_loader import start_background_import

        start_background_import()

    def on_case(done: int, total: int, result: CaseResult) -> None:
        verdict = "found" if result.found else "missed"
        if result.error is not None:
            verdict = f"error: {result.error}"
        _say(args, f"{done}/{total} {result.case_id} ({label(result.model)}): {verdict}")

    run = run_eval(ws.cases, targets, source=source, seed=args.seed, on_case=on_case)
    path = save_run(run)
    text = render_json(run) if args.format == "json" else render_markdown(run)
    write_report(text, None)
    _say(args, f"results saved to {path}")
    for model, error in run.model_errors.items():
        sys.stderr.write(f"redline: error: {label(model)}: {error}\n")
    return EXIT_MODEL if run.model_errors else EXIT_OK
