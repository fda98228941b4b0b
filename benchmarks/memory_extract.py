"""Code-graph extraction throughput: memory/extract.py over real source trees.

For each tree (default: this checkout's tracked files, and aiohttp from the local mirror when
it is there) it reads every file that has a grammar into memory first, then times, side by
side on the same bytes and one core:

- parse: tree-sitter's parse alone (the floor: what any extractor pays);
- spans: diff/functions.function_spans (what a review already pays per file);
- extract: memory/extract.extract (symbols with signature, docstring and body; edges);

and prints, per language and in total, files, lines, lines per CPU second of each, symbols
and edges (by kind), the files a cap truncated, and the characters of text the graph holds
(signatures, docstrings, bodies, edges: what a store keeps before its own overhead).
The target: 100,000 lines in well under 10 s on one core.

    python benchmarks/memory_extract.py [--rounds 3] [TREE ...]

A TREE is a directory (its files, .git skipped) or a bare git directory (its HEAD, read with
`git archive` into a temporary directory).
"""

from __future__ import annotations

import argparse
import collections
import functools
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tree_sitter import Parser

from redline.diff.functions import function_spans, grammar_for, language_for
from redline.memory.extract import extract

ROOT = Path(__file__).resolve().parents[1]
AIOHTTP = Path("/work/.mirror/aio-libs+aiohttp/repo")


def _tracked(root: Path) -> list[Path]:
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True
    ).stdout
    return [root / name for name in out.decode().split("\0") if name]


def _archived(git_dir: Path, into: Path) -> list[Path]:
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "HEAD"], capture_output=True, check=True
    ).stdout
    tar_path = into / "tree.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into / "tree", filter="data")
    return [p for p in (into / "tree").rglob("*") if p.is_file()]


def _files(tree: Path, scratch: Path) -> list[tuple[str, bytes]]:
    if (tree / "HEAD").is_file() and (tree / "objects").is_dir():  # a bare git directory
        base = Path(tempfile.mkdtemp(dir=scratch))
        paths = _archived(tree, base)
        root = base / "tree"
    elif (tree / ".git").exists():
        paths, root = _tracked(tree), tree
    else:
        paths = [p for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts]
        root = tree
    found = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        kind = language_for(rel)
        if kind and grammar_for(kind) is not None and path.is_file() and not path.is_symlink():
            found.append((rel, path.read_bytes()))
    return found


def _time(rounds: int, fn: Callable[[], object]) -> float:
    """Median CPU seconds of this process: the machine's cores are shared, and wall time
    would measure the neighbours; extraction is single-threaded, so CPU time is one core's."""
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def _parse_all(files: list[tuple[str, bytes]]) -> None:
    for path, data in files:
        kind = language_for(path)
        grammar = grammar_for(kind) if kind else None
        if grammar is not None:
            Parser(grammar.language).parse(data)


def _spans_all(files: list[tuple[str, bytes]]) -> None:
    for path, data in files:
        function_spans(path, data)


def _extract_all(files: list[tuple[str, bytes]]) -> None:
    for path, data in files:
        extract(path, data)


def _report(name: str, files: list[tuple[str, bytes]], rounds: int) -> None:
    by_language: dict[str, list[tuple[str, bytes]]] = collections.defaultdict(list)
    for path, data in files:
        by_language[language_for(path) or "?"].append((path, data))
    print(f"\n== {name}: {len(files)} files")
    header = (
        f"{'language':<11}{'files':>6}{'lines':>9}{'parse l/s':>12}{'spans l/s':>12}"
        f"{'extract l/s':>13}{'extract s':>10}{'symbols':>9}{'calls':>8}{'imports':>8}"
        f"{'refs':>7}{'cut':>5}{'text MB':>9}"
    )
    print(header)
    rows = [*sorted(by_language.items()), ("total", files)]
    for language, group in rows:
        lines = sum(data.count(b"\n") + 1 for _, data in group)
        parse = _time(rounds, functools.partial(_parse_all, group))
        spans = _time(rounds, functools.partial(_spans_all, group))
        took = _time(rounds, functools.partial(_extract_all, group))
        graphs = [extract(path, data) for path, data in group]
        symbols = sum(len(g.symbols) for g in graphs if g)
        kinds = collections.Counter(e.kind for g in graphs if g for e in g.edges)
        cut = sum(1 for g in graphs if g and g.truncated)
        text = sum(
            len(s.signature) + len(s.docstring) + len(s.body)
            for g in graphs
            if g
            for s in g.symbols
        ) + sum(len(e.text) + len(e.target) + len(e.source) for g in graphs if g for e in g.edges)
        print(
            f"{language:<11}{len(group):>6}{lines:>9}{lines / parse:>12,.0f}"
            f"{lines / spans:>12,.0f}{lines / took:>13,.0f}{took:>10.2f}{symbols:>9}"
            f"{kinds['call']:>8}{kinds['import']:>8}{kinds['reference']:>7}{cut:>5}"
            f"{text / 1e6:>9.1f}"
        )
    total_lines = sum(data.count(b"\n") + 1 for _, data in files)
    took = _time(rounds, lambda: _extract_all(files))
    print(f"100,000 lines at this rate: {100_000 * took / total_lines:.2f} s (target: < 10 s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    trees = args.trees or [ROOT] + ([AIOHTTP] if AIOHTTP.is_dir() else [])
    with tempfile.TemporaryDirectory() as scratch:
        for tree in trees:
            _report(str(tree), _files(tree, Path(scratch)), args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
