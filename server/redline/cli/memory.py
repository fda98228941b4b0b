"""`redline memory build|status|search|forget`: the repository's project memory by hand.

`build` brings the index up to date with the work tree (every tracked file, or the paths
given), with progress on stderr and one summary line at the end; `status` says what the index
holds and where it lives (never a password); `search` answers a free-text query from it (exit
2 with "memory: not built" when there is none); `forget` removes it and says what went. The
settings are the user's only (a repository's file does not choose where its index goes, or how
big it may grow).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from redline.cli.common import EXIT_ERROR, EXIT_OK, Parser, repo_root, write_report
from redline.errors import UsageError

_REPO_HELP = "the repository (default: the one the current directory is in)"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"{value} is not between 1 and 1000")
    return value


def add_memory_parser(sub: Any) -> None:
    memory = sub.add_parser(
        "memory",
        help="build, inspect, search or forget the project memory",
        description="Project memory: a code graph and a semantic index of the repository, "
        "kept in Redline's cache (or the PostgreSQL database of the user file's memory.url). "
        "Reviews use what is there and never wait for it.",
    )
    memory.set_defaults(print_memory_help=memory.print_help)
    mem = memory.add_subparsers(dest="memory_command", metavar="COMMAND", parser_class=Parser)

    build = mem.add_parser(
        "build",
        help="index the work tree's tracked files (only what changed since the last build)",
        description="Index the tracked files of the work tree: a file whose content is already "
        "indexed is not parsed again, removed files leave the index. With paths, refresh only "
        "those files.",
    )
    build.add_argument("paths", nargs="*", metavar="PATH", help="refresh only these files")
    build.add_argument("--repo", type=Path, default=Path.cwd(), metavar="PATH", help=_REPO_HELP)
    build.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")

    status = mem.add_parser("status", help="what the index holds, when it was built, where")
    status.add_argument("--repo", type=Path, default=Path.cwd(), metavar="PATH", help=_REPO_HELP)
    status.add_argument("--format", choices=("text", "json"), default="text", help="output format")

    search = mem.add_parser("search", help="find functions and classes by words or meaning")
    search.add_argument("query", help='what to look for, e.g. "retry with backoff"')
    search.add_argument("--repo", type=Path, default=Path.cwd(), metavar="PATH", help=_REPO_HELP)
    search.add_argument(
        "--limit", type=_positive, default=10, metavar="N", help="at most N results (1-1000)"
    )
    search.add_argument("--format", choices=("text", "json"), default="text", help="output format")

    forget = mem.add_parser("forget", help="remove the repository's index")
    forget.add_argument("--repo", type=Path, default=Path.cwd(), metavar="PATH", help=_REPO_HELP)


def cmd_memory(args: argparse.Namespace) -> int:
    command = getattr(args, "memory_command", None)
    if command is None:
        args.print_memory_help()
        return EXIT_OK
    from redline import config

    repo = repo_root(args.repo)
    settings = config.load_user_settings().settings
    if command == "build":
        return _build(repo, settings, args)
    if command == "status":
        return _status(repo, settings, args)
    if command == "search":
        return _search(repo, settings, args)
    return _forget(repo, settings)


def _build(repo: Path, settings: Any, args: argparse.Namespace) -> int:
    from redline.memory.build import build_memory
    from redline.progress import StderrProgress

    paths = [_repo_relative(repo, p) for p in args.paths] or None
    with StderrProgress(quiet=args.quiet) as progress:
        report = build_memory(repo, settings, paths=paths, progress=progress)
    sys.stderr.write(report.summary() + "\n")
    return EXIT_OK


def _repo_relative(repo: Path, given: str) -> str:
    """A PATH argument as the index spells it: relative to the repository's top, `/`. A
    relative PATH is taken from the current directory when that is inside the repository
    (as git does), else from the repository's top (`--repo` from elsewhere, as the language
    server runs it)."""
    path = Path(given)
    real = repo.resolve()
    cwd = Path.cwd().resolve()
    base = cwd if cwd.is_relative_to(real) else real
    absolute = path if path.is_absolute() else base / path
    # Not resolved: a link in the tree is the tree's name for a file, not where it points.
    normal = Path(os.path.normpath(absolute))
    for top in (real, repo):
        if normal.is_relative_to(top):
            rel = normal.relative_to(top)
            break
    else:
        raise UsageError(f"{given}: not inside the repository {repo}")
    if not rel.parts:
        raise UsageError(f"{given}: the repository's top, not a file (build without paths)")
    return rel.as_posix()


def _status(repo: Path, settings: Any, args: argparse.Namespace) -> int:
    from redline.memory.query import ProjectMemory
    from redline.memory.status import NOT_BUILT, age_text

    where = _where(repo, settings.memory)
    memory = ProjectMemory.open(repo, settings)
    if memory is None:
        if args.format == "json":
            write_report(json.dumps({"built": False, "store": where}, indent=2), None)
        else:
            write_report(f"{NOT_BUILT} (store: {where}); run `redline memory build`", None)
        return EXIT_OK
    with memory:
        meta = memory.meta
    if args.format == "json":
        entry = {
            "built": True,
            "symbols": meta.symbols,
            "files": meta.files,
            "edges": meta.edges,
            "size_bytes": meta.size_bytes,
            "built_at": meta.built_at,
            "head": meta.head,
            "model": meta.model,
            "store": where,
            "limits_reached": list(meta.limits_reached),
        }
        write_report(json.dumps(entry, indent=2), None)
        return EXIT_OK
    built = "never finished" if meta.built_at is None else age_text(time.time() - meta.built_at)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(meta.built_at)) if meta.built_at else ""
    lines = [
        memory.status_line(),
        f"symbols: {meta.symbols:,}",
        f"files:   {meta.files:,}",
        f"edges:   {meta.edges:,}",
        f"size:    {_size(meta.size_bytes)}",
        f"built:   {built}" + (f" ({when})" if when else ""),
        f"head:    {meta.head or '(no commits)'}",
        f"model:   {meta.model or '(none)'}",
        f"store:   {where}",
        "limits reached: " + ("; ".join(meta.limits_reached) or "none"),
    ]
    write_report("\n".join(lines), None)
    return EXIT_OK


def _where(repo: Path, memory: Any) -> str:
    """Where the index lives: the SQLite file, or the PostgreSQL URL without its password."""
    from redline.memory.store import store_path
    from redline.memory.url import url_without_password

    if memory.url is None:
        return f"SQLite {store_path(repo, create_dir=False)}"
    return f"PostgreSQL {url_without_password(memory.url)}"


def _size(n: int) -> str:
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"


def _search(repo: Path, settings: Any, args: argparse.Namespace) -> int:
    from redline.memory.query import ProjectMemory
    from redline.memory.status import NOT_BUILT

    if not args.query.strip():
        raise UsageError("the search query is empty")
    memory = ProjectMemory.open(repo, settings)
    if memory is None:
        sys.stderr.write(f"redline: {NOT_BUILT} — run `redline memory build`\n")
        return EXIT_ERROR
    with memory:
        hits = memory.search(args.query, limit=args.limit)
    if args.format == "json":
        rows = [
            {
                "path": h.stored.symbol.path,
                "line": h.stored.symbol.start,
                "end": h.stored.symbol.end,
                "qualname": h.stored.symbol.qualname,
                "kind": h.stored.symbol.kind,
                "score": round(h.score, 6),
                "why": h.why,
            }
            for h in hits
        ]
        write_report(json.dumps(rows, indent=2, ensure_ascii=False), None)
        return EXIT_OK
    if not hits:
        sys.stderr.write(f"redline: nothing in memory matches {args.query[:100]!r}\n")
        return EXIT_OK
    write_report(
        "\n".join(
            f"{h.stored.symbol.path}:{h.stored.symbol.start} {h.stored.symbol.qualname}  "
            f"{h.score:.3f}  {h.why}"
            for h in hits
        ),
        None,
    )
    return EXIT_OK


def _forget(repo: Path, settings: Any) -> int:
    from redline.memory.lock import build_lock
    from redline.memory.query import ProjectMemory
    from redline.memory.store import forget_store

    where = _where(repo, settings.memory)
    with build_lock(repo, timeout=60):  # never under a build's feet
        memory = ProjectMemory.open(repo, settings)
        meta = None
        if memory is not None:
            with memory:
                meta = memory.meta
        existed = forget_store(repo, settings)
    if meta is None:
        said = "removed an empty index" if existed else "nothing to forget"
        write_report(f"memory: {said} (store: {where})", None)
        return EXIT_OK
    write_report(
        f"memory: forgot {meta.symbols:,} symbols in {meta.files:,} files "
        f"({_size(meta.size_bytes)}) from {where}",
        None,
    )
    return EXIT_OK
