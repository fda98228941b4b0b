"""`redline learn`: add, list and remove learnings (memory/learnings.py), and turn dismissals
into learnings.

    redline learn "we allow assert in tests" --path 'tests/**' --rules S101 [--private]
    redline learn --list [--format json]
    redline learn --remove L-3f2a9c01
    redline learn --from-dismissal RL-0123456789ab [--path 'tests/**']
    redline learn --from-dismissals [--min 3] [--accept L-… | --accept all]

Learnings go to `.redline/learnings.md` (commit it: the team reviews what Redline is taught),
or with `--private` to the user's own file for this repository. The list shows both, with ids,
scope, rules and source; problems in a hand-edited file are warnings on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from redline.cli.common import EXIT_OK, repo_root, write_report
from redline.errors import UsageError
from redline.memory.learning_files import (
    LearningFile,
    add_learning,
    read_committed,
    read_private,
    write_learnings,
)
from redline.memory.learnings import COMMITTED_FILE, Learning, Source, make_learning, normal_id


def add_learn_parser(sub: Any) -> None:
    learn = sub.add_parser(
        "learn",
        help="teach Redline a rule for later reviews, or list/remove what it learned",
        description="Learnings are short rules with a scope that later reviews apply: the "
        "model is shown those whose scope matches a file, and a learning naming analyzer rules "
        f"drops their findings inside its scope. They live in {COMMITTED_FILE} (commit it) or, "
        "with --private, in your own file for this repository.",
    )
    learn.add_argument("text", nargs="?", help='the learning, e.g. "we allow assert in tests"')
    mode = learn.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="list the learnings (both files)")
    mode.add_argument("--remove", metavar="ID", help="remove the learning with this id")
    mode.add_argument(
        "--from-dismissal",
        metavar="RL-ID",
        help="learn from one dismissal in .redline/dismissed.toml: its reason (or TEXT), its "
        "rule, scoped to its file (or --path)",
    )
    mode.add_argument(
        "--from-dismissals",
        action="store_true",
        help="propose learnings for rules dismissed again and again (see --min, --accept)",
    )
    learn.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="GLOB",
        help="scope: a path glob (repeatable; any may match), e.g. 'tests/**'",
    )
    learn.add_argument("--language", metavar="NAME", help="scope: a language, e.g. python")
    learn.add_argument(
        "--rules",
        metavar="ID[,ID]",
        help="analyzer rules whose findings this learning drops inside its scope, e.g. S101",
    )
    learn.add_argument(
        "--private",
        action="store_true",
        help="keep it in your own file for this repository, not the committed one",
    )
    learn.add_argument(
        "--min",
        type=int,
        default=3,
        metavar="N",
        help="with --from-dismissals: dismissals of one rule before it is proposed",
    )
    learn.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="ID",
        help="with --from-dismissals: add this proposal (repeatable), or 'all'",
    )
    learn.add_argument(
        "--format", choices=("text", "json"), default="text", help="--list's output format"
    )
    learn.add_argument(
        "--repo", type=Path, default=Path.cwd(), metavar="PATH", help="the repository (default: .)"
    )


def cmd_learn(args: argparse.Namespace) -> int:
    _check(args)
    root = repo_root(args.repo)
    if args.list:
        return _list(root, args.format)
    if args.remove is not None:
        return _remove(root, normal_id(args.remove))
    if args.from_dismissals:
        return _from_dismissals(root, args)
    rules = _split_rules(args.rules)
    if args.from_dismissal is not None:
        from redline.memory.dismissal_learnings import from_dismissal

        learning = from_dismissal(
            _dismissal(root, args.from_dismissal), args.text, args.path, args.language
        )
        if rules:
            learning = make_learning(learning.text, learning.paths, learning.language, rules)
    else:
        learning = make_learning(args.text, args.path, args.language, rules)
    return _add(root, learning, "private" if args.private else "committed")


def _check(args: argparse.Namespace) -> None:
    listing = args.list or args.remove is not None or args.from_dismissals
    if listing and (args.text is not None or args.path or args.language or args.rules):
        raise UsageError("--list, --remove and --from-dismissals take no text or scope")
    if not listing and args.from_dismissal is None and args.text is None:
        raise UsageError(
            'give the learning\'s text (redline learn "…"), or --list, --remove ID, '
            "--from-dismissal ID or --from-dismissals"
        )
    if args.accept and not args.from_dismissals:
        raise UsageError("--accept goes with --from-dismissals")
    if args.min < 1:
        raise UsageError(f"--min {args.min}: at least 1")


def _split_rules(text: str | None) -> list[str]:
    return [r for r in (text or "").split(",") if r.strip()]


def _files(root: Path) -> list[LearningFile]:
    files = [read_committed(root), read_private(root)]
    for f in files:
        for problem in f.problems:
            sys.stderr.write(f"redline: warning: {f.label}: {problem}\n")
    return files


def _add(root: Path, learning: Learning, source: Source) -> int:
    _files(root)  # its problems, as warnings
    path = add_learning(root, learning, source)
    assert path is not None  # refused, not skipped, when it exists
    where = COMMITTED_FILE + " (commit it)" if source == "committed" else str(path)
    write_report(f"learned {learning.id} ({learning.scope}) in {where}", None)
    return EXIT_OK


def _remove(root: Path, ident: str) -> int:
    for f in _files(root):
        kept = [k for k in f.learnings if k.id != ident]
        if len(kept) != len(f.learnings):
            write_learnings(root, f.source, kept)
            write_report(f"removed {ident} from {f.label}", None)
            return EXIT_OK
    raise UsageError(f"no learning {ident} (redline learn --list shows the ids)")


def _list(root: Path, fmt: str) -> int:
    files = _files(root)
    rows = [(f, k) for f in files for k in f.learnings]
    if fmt == "json":
        data = [_as_json(k, f) for f, k in rows]
        write_report(json.dumps(data, indent=2, ensure_ascii=False), None)
        return EXIT_OK
    if not rows:
        write_report('no learnings yet (add one: redline learn "…" --path GLOB)', None)
        return EXIT_OK
    lines = [_line(k, f.source) for f, k in rows]
    write_report("\n".join(lines), None)
    return EXIT_OK


def _line(k: Learning, source: str) -> str:
    rules = f" · rules {', '.join(k.rules)}" if k.rules else ""
    return f"{k.id}  [{source}] {k.scope}{rules}\n    {k.text}"


def _as_json(k: Learning, f: LearningFile) -> dict[str, Any]:
    return {
        "id": k.id,
        "text": k.text,
        "paths": list(k.paths),
        "language": k.language,
        "rules": list(k.rules),
        "source": f.source,
        "file": f.label,
    }


def _dismissal(root: Path, ident: str) -> Any:
    from redline.store.dismissals import DismissalStore

    wanted = ident.strip()
    for d in DismissalStore(root).list():
        if d.id == wanted:
            return d
    raise UsageError(f"no dismissal {wanted} in .redline/dismissed.toml")


def _from_dismissals(root: Path, args: argparse.Namespace) -> int:
    from redline.memory.dismissal_learnings import propose
    from redline.store.dismissals import DismissalStore

    files = _files(root)
    known = [k for f in files for k in f.learnings]
    proposals = propose(DismissalStore(root).list(), min_times=args.min, known=known)
    accept = {normal_id(a) if a != "all" else a for a in args.accept}
    unknown = accept - {p.learning.id for p in proposals} - {"all"}
    if unknown:
        raise UsageError(f"no such proposal: {', '.join(sorted(unknown))}")
    if not accept:
        if not proposals:
            write_report(f"nothing dismissed {args.min} times or more to propose", None)
            return EXIT_OK
        lines = []
        for p in proposals:
            lines.append(
                f"{_line(p.learning, 'proposed')}\n    ({p.what}: dismissed {p.times} times in "
                f"{p.files} files)"
            )
        lines.append("add one with --accept ID (or --accept all)")
        write_report("\n".join(lines), None)
        return EXIT_OK
    chosen = [p.learning for p in proposals if "all" in accept or p.learning.id in accept]
    if not chosen:
        write_report(f"nothing dismissed {args.min} times or more to accept", None)
        return EXIT_OK
    source: Source = "private" if args.private else "committed"
    target = files[0] if source == "committed" else files[1]
    write_learnings(root, source, [*target.learnings, *chosen])
    write_report("\n".join(f"learned {k.id} ({k.scope})" for k in chosen), None)
    return EXIT_OK
