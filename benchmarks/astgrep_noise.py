"""Noise of the ast-grep rule pack on real code: findings per 1,000 lines per rule, and a sample
of findings to judge by hand.

    .venv/bin/python benchmarks/astgrep_noise.py /path/to/repo.git [...] [--sample N]

Each repository's HEAD tree is exported (`git archive`, no checkout, no hooks) to a temporary
directory; every file the pack takes is scanned whole, as the analyzer job scans a changed file
(Redline's config and rules, private copies, suppression comments respelled). Not part of
`make bench`: it needs repositories that are not in this one.
"""

from __future__ import annotations

import argparse
import io
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

from redline.analyzers import astgrep
from redline.analyzers.base import RawResult, run_process

EXE = str(Path(sys.executable).with_name("ast-grep"))
BATCH = 400


def export(git_dir: Path, target: Path) -> None:
    tar = subprocess.run(
        ["git", "--git-dir", str(git_dir), "-c", "core.fsmonitor=false", "archive", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(target, filter="data")


def scan(root: Path) -> tuple[list[str], int, list[RawResult], float]:
    files = sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and astgrep.takes(str(p))
    )
    lines = sum((root / f).read_bytes().count(b"\n") for f in files)
    results: list[RawResult] = []
    started = time.perf_counter()
    with astgrep.Workdir() as work:
        work.copy(root, files)
        for i in range(0, len(files), BATCH):
            argv = astgrep.argv(EXE, work.config, files[i : i + BATCH])
            proc = run_process(argv, work.files, 600)
            results.extend(astgrep.parse(proc.stdout, work.files).results)
    return files, lines, results, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--sample", type=int, default=5, help="findings shown per rule and repo")
    args = parser.parse_args()
    rng = random.Random(26)
    for git_dir in args.repos:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            export(git_dir, root)
            files, lines, results, took = scan(root)
            per_rule = Counter(r.rule for r in results)
            by_language = Counter(astgrep.language_of(f) for f in files)
            print(
                f"## {git_dir}: {len(files)} files {dict(by_language)}, {lines} lines, "
                f"{len(results)} findings, {took:.2f} s"
            )
            for rule, count in per_rule.most_common():
                print(f"  {rule:28} {count:5}  {1000 * count / max(lines, 1):.3f} per 1,000 lines")
                chosen = [r for r in results if r.rule == rule]
                for r in rng.sample(chosen, min(args.sample, len(chosen))):
                    text = (root / r.file).read_text(errors="replace").splitlines()[r.line - 1]
                    print(f"      {r.file}:{r.line}: {text.strip()[:140]}")


if __name__ == "__main__":
    main()
