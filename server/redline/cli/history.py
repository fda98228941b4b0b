"""`redline history`: the reviews recorded in the task store, or one of them re-rendered.

The list shows the current repository's reviews when run inside one (the question asked most:
"what did I review here?"), every repository's with `--all` or outside a repository, another
one's with `--repo`. Each entry: id, when (local time), status, repository, scope, findings
and cost. `--format json` gives the same as a JSON list; with a task id, any report format.
`--prune` removes the records the `[store]` retention settings do not keep, and says what went.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from redline.cli.common import EXIT_OK, FORMATS, repo_root, write_report
from redline.errors import RedlineError, UsageError
from redline.model import Severity
from redline.money import usd
from redline.store.tasks import TaskStore, TaskSummary


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive (at least 1)")
    return value


def add_history_parser(sub: Any) -> None:
    history = sub.add_parser(
        "history",
        help="list past reviews, or re-render one",
        description="List past reviews, newest first: the current repository's when run inside "
        "one, else every repository's. With a task id, print that review's report again.",
    )
    history.add_argument(
        "task_id", nargs="?", help="the review to show again (an id from the list)"
    )
    which = history.add_mutually_exclusive_group()
    which.add_argument(
        "--repo",
        type=Path,
        metavar="PATH",
        help="list this repository's reviews (default: the current repository, if any)",
    )
    which.add_argument("--all", action="store_true", help="list every repository's reviews")
    history.add_argument(
        "--format",
        choices=FORMATS,
        default="markdown",
        help="json lists entries as JSON; with a task id, the report's format",
    )
    history.add_argument(
        "--limit", type=_positive, default=20, metavar="N", help="list at most N reviews"
    )
    history.add_argument(
        "--prune",
        action="store_true",
        help="remove the records the [store] settings do not keep (keep_records, keep_days; "
        "never a running review's) and print how many and how many bytes went",
    )


def cmd_history(args: argparse.Namespace) -> int:
    from redline.model import Review
    from redline.report import render

    store = TaskStore()
    if args.prune:
        return _prune(store, args)
    if args.task_id is not None:
        data = store.load(args.task_id)
        if not data.get("review"):
            raise UsageError(
                f"review {args.task_id} has no result (status: {data.get('status', 'unknown')})"
            )
        write_report(render(Review.model_validate(data["review"]), args.format), None)
        return EXIT_OK
    repo = _repository(args)
    rows = store.list(limit=args.limit, repo=repo)
    if args.format != "markdown":
        write_report(json.dumps([_entry(row) for row in rows], indent=2, ensure_ascii=False), None)
        return EXIT_OK
    if not rows:
        where = f" for {repo}" if repo is not None else ""
        more = " (`redline history --all` lists every repository)" if repo is not None else ""
        sys.stderr.write(f"redline: no reviews recorded{where} in {store.root}{more}\n")
        return EXIT_OK
    # Scope labels name branches and pull requests: attacker text, through the choke point.
    write_report("".join(_line(row) for row in rows), None)
    return EXIT_OK


def _prune(store: TaskStore, args: argparse.Namespace) -> int:
    if args.task_id is not None or args.repo is not None or args.all:
        raise UsageError("--prune takes no task id, --repo or --all: it applies to every record")
    pruned = store.prune()
    if args.format != "markdown":
        entry = {
            "removed": len(pruned.removed),
            "bytes": pruned.bytes,
            "kept": pruned.kept,
            "task_ids": pruned.removed,
            "store": str(store.root),
        }
        sys.stdout.write(json.dumps(entry, indent=2) + "\n")
        return EXIT_OK
    policy = store.retention()
    sys.stdout.write(
        f"removed {len(pruned.removed)} record{'s' if len(pruned.removed) != 1 else ''} "
        f"({_size(pruned.bytes)}) from {store.root}; {pruned.kept} kept "
        f"(keep_records = {policy.keep_records}, keep_days = {policy.keep_days:g})\n"
    )
    return EXIT_OK


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB, {n:,} bytes"
    return f"{n / 1024 / 1024:.1f} MiB, {n:,} bytes"


def _repository(args: argparse.Namespace) -> Path | None:
    if args.all:
        return None
    if args.repo is not None:
        return repo_root(args.repo)
    try:
        return repo_root(Path.cwd())
    except RedlineError:
        return None  # outside any repository: every repository's reviews


def _line(row: TaskSummary) -> str:
    when = row.created.astimezone().strftime("%Y-%m-%d %H:%M")
    head = f"{row.task_id}  {when}  {row.status}"
    where = _home(row.repo) or "(repository not recorded)"
    counts = ", ".join(f"{n} {s}" for s, n in sorted(row.counts.items(), key=_most_serious))
    found = f"{row.findings} finding{'s' if row.findings != 1 else ''}"
    found += f" ({counts})" if counts else ""
    return f"{head}\n    {where}\n    {row.scope_label}\n    {found} · {_cost(row)}\n"


def _most_serious(item: tuple[str, int]) -> int:
    try:
        return -Severity(item[0]).rank
    except ValueError:
        return 0


def _home(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if path.startswith(home + "/") else path


def _cost(row: TaskSummary) -> str:
    if not row.models and not row.tokens:
        if row.cached_models:
            return f"cached answers of {', '.join(row.cached_models)} (no model called)"
        return "offline (no model)"
    tokens = f"{row.tokens:,} tokens"
    return f"{tokens}, {usd(row.cost_usd)}"


def _entry(row: TaskSummary) -> dict[str, Any]:
    return {
        "task_id": row.task_id,
        "created": row.created.isoformat(),
        "status": row.status,
        "repository": row.repo or None,
        "scope": row.scope_label,
        "findings": row.findings,
        "by_severity": row.counts,
        "models": list(row.models),
        "cached_models": list(row.cached_models),
        "tokens": row.tokens,
        "cost_usd": row.cost_usd,
    }
