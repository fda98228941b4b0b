"""Noise of the offline analyzers on real code: for each of the last N commits (first parent) of
real repositories, the installed CLI's offline review of that commit, counted per analyzer —
findings, changed lines of the files that analyzer takes, findings per 1,000 changed lines, its
time — and a random sample of findings per analyzer to judge by hand.

    .venv/bin/python benchmarks/analyzer_noise.py /tmp/noise/gin /tmp/noise/knex [...]
        [--commits 30] [--sample 30] [--dump findings.json] [--judged judged.json]

Each repository is a clone with a work tree (outside this one; `git clone` a bare mirror). Each
review is `redline review --commit <sha> --format json` run as a user would, offline: a private
HOME and REDLINE_CACHE_DIR, REDLINE_CONFIG=/dev/null, no API key in the environment (no model
runs), so the repository's own settings are read as they would be. "Changed lines" are the
lines the commit adds (git's numstat): the only lines an analyzer's finding is kept on. An
analyzer's files are those the review's file verdicts give it (diff/file_kind.py, and
analyzers/kinds.py for the native ones), among the files the review read.

A finding fused from two analyzers counts for each. `--dump` writes every finding with the code
at its line for judging; `--judged` reads verdicts back ({"<id>": "real|debatable|noise"}) and
prints the share of real problems per analyzer.

Not part of `make bench`: it needs repositories that are not in this one and minutes of reviews
(the noise is measured once, for an issue's closing note; `make bench` uses generated changes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redline.analyzers import astgrep, kinds
from redline.diff.file_kind import files_for, kind_with_content

REDLINE = str(Path(sys.executable).with_name("redline"))
ANALYZERS = ("ruff", "bandit", "ast-grep", "oxlint", "shellcheck", "hadolint", "zizmor")
# Environment variables passed through: nothing that names a model or a key.
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "TMPDIR")


@dataclass
class Tally:
    findings: int = 0
    lines: int = 0
    files: int = 0
    seconds: float = 0.0
    runs: int = 0  # commits on which the analyzer had files
    rules: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)  # failed / partial runs


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "core.fsmonitor=false", *args],
        capture_output=True,
        check=True,
    ).stdout


def last_commits(repo: Path, n: int) -> list[str]:
    """The last `n` first-parent commits that have a parent (a root commit has no diff base)."""
    shas = git(repo, "rev-list", "--first-parent", f"--max-count={n + 1}", "HEAD").decode().split()
    return [sha for sha in shas[:n] if git(repo, "rev-list", "--parents", "-n1", sha).split()[1:]]


def added_lines(repo: Path, sha: str) -> dict[str, int]:
    """Lines each file gains in the commit (first parent; renames followed like the review)."""
    out = git(repo, "diff", "--numstat", "-z", "-M", f"{sha}^1", sha).decode(errors="replace")
    counts: dict[str, int] = {}
    fields = out.split("\0")
    i = 0
    while i < len(fields) - 1:
        added, _removed, path = fields[i].split("\t", 2)
        if path == "":  # a rename: the old and the new path follow
            path = fields[i + 2]
            i += 3
        else:
            i += 1
        counts[path] = 0 if added == "-" else int(added)
    return counts


def analyzer_files(repo: Path, sha: str, paths: list[str]) -> dict[str, list[str]]:
    """Which of `paths` each analyzer takes, as the review decides it."""

    def head(path: str) -> bytes:
        try:
            return git(repo, "cat-file", "blob", f"{sha}:{path}")[:256]
        except subprocess.CalledProcessError:  # not in the commit's tree
            return b""

    heads = {p: head(p) for p in paths}
    verdicts = [kind_with_content(p, heads[p]) for p in paths]
    chosen = {name: files_for(name, verdicts) for name in ("ruff", "bandit")}
    chosen["ast-grep"] = [p for p in files_for("ast-grep", verdicts) if astgrep.takes(p)]
    chosen.update(kinds.select(paths, heads.__getitem__))
    return chosen


def review(repo: Path, sha: str, tmp: Path) -> tuple[dict[str, Any], float]:
    home = tmp / sha  # a fresh HOME and cache a review: nothing carried over between them
    home.mkdir()
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env.update(HOME=str(home), REDLINE_CACHE_DIR=str(home / "cache"), REDLINE_CONFIG=os.devnull)
    started = time.perf_counter()
    proc = subprocess.run(
        [REDLINE, "review", "--commit", sha, "--format", "json", "--quiet", "--repo", str(repo)],
        capture_output=True,
        env=env,
        cwd=home,
        timeout=900,
    )
    took = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{repo} {sha}: exit {proc.returncode}: {proc.stderr.decode()[-500:]}")
    data: dict[str, Any] = json.loads(proc.stdout)
    return data, took


def code_at(repo: Path, sha: str, path: str, line: int, around: int = 3) -> str:
    try:
        rows = git(repo, "cat-file", "blob", f"{sha}:{path}").decode(errors="replace").splitlines()
    except subprocess.CalledProcessError:
        return ""
    lo, hi = max(1, line - around), min(len(rows), line + around)
    return "\n".join(
        f"{'>' if n == line else ' '}{n:5} {rows[n - 1][:160]}" for n in range(lo, hi + 1)
    )


def measure(
    repo: Path, n: int, home: Path
) -> tuple[dict[str, Tally], list[dict[str, Any]], float, int]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    found: list[dict[str, Any]] = []
    wall = 0.0
    commits = last_commits(repo, n)
    for sha in commits:
        data, took = review(repo, sha, home)
        wall += took
        reviewed = list(data["coverage"]["reviewed_files"])
        lines = added_lines(repo, sha)
        taken = analyzer_files(repo, sha, reviewed)
        runs = {run["name"]: run for run in data["coverage"]["analyzers"]}
        for name, files in taken.items():
            if not files:
                continue
            tally = tallies[name]
            tally.runs += 1
            tally.files += len(files)
            tally.lines += sum(lines.get(p, 0) for p in files)
            run = runs.get(name)
            if run is None:
                tally.problems.append(f"{sha[:8]}: not run")
                continue
            tally.seconds += run["seconds"] or 0.0
            if run["status"] not in ("ok", "skipped"):
                tally.problems.append(f"{sha[:8]}: {run['status']} {run['message'][:120]}")
            if run["files"] != len(files):
                tally.problems.append(f"{sha[:8]}: ran on {run['files']} files, {len(files)} taken")
        for finding in data["findings"]:
            for source in finding["sources"]:
                tool, _, rule = source.partition(":")
                tallies[tool].findings += 1
                tallies[tool].rules[rule] += 1
                found.append(
                    {
                        "key": f"{repo.name}:{sha[:8]}:{finding['file']}:"
                        f"{finding['line']}:{source}",
                        "analyzer": tool,
                        "rule": rule,
                        "repo": repo.name,
                        "sha": sha,
                        "file": finding["file"],
                        "line": finding["line"],
                        "title": finding["title"],
                        "severity": finding["severity"],
                        "code": code_at(repo, sha, finding["file"], finding["line"]),
                    }
                )
    return tallies, found, wall, len(commits)


def rate(findings: int, lines: int) -> str:
    return f"{1000 * findings / lines:.2f}" if lines else "-"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repos", nargs="+", type=Path, help="clones with a work tree")
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--sample", type=int, default=30, help="findings sampled per analyzer")
    parser.add_argument("--dump", type=Path, help="write every finding (and the sample) here")
    parser.add_argument("--judged", type=Path, help="verdicts by key: the precision per analyzer")
    args = parser.parse_args()

    totals: dict[str, Tally] = defaultdict(Tally)
    everything: list[dict[str, Any]] = []
    print(
        "| repository | analyzer | commits with its files | files | added lines | findings "
        "| per 1,000 lines | its time (s) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="redline-noise-") as tmp:
        for repo in args.repos:
            tallies, found, wall, count = measure(repo.resolve(), args.commits, Path(tmp))
            everything.extend(found)
            for name in ANALYZERS:
                t = tallies.get(name)
                if t is None or (not t.runs and not t.findings):
                    continue
                print(
                    f"| {repo.name} ({count} commits, {wall:.0f} s) | {name} | {t.runs} | "
                    f"{t.files} | {t.lines} | {t.findings} | {rate(t.findings, t.lines)} | "
                    f"{t.seconds:.1f} |"
                )
                total = totals[name]
                total.runs += t.runs
                total.files += t.files
                total.lines += t.lines
                total.findings += t.findings
                total.seconds += t.seconds
                total.rules.update(t.rules)
                total.problems.extend(f"{repo.name} {p}" for p in t.problems)
    for name in ANALYZERS:
        t = totals.get(name)
        if t is None:
            continue
        print(
            f"| **all** | {name} | {t.runs} | {t.files} | {t.lines} | {t.findings} | "
            f"{rate(t.findings, t.lines)} | {t.seconds:.1f} |"
        )
    print()
    for name in ANALYZERS:
        t = totals.get(name)
        if t is None or not t.rules:
            continue
        rules = ", ".join(f"{rule} {count}" for rule, count in t.rules.most_common())
        print(f"- {name} rules: {rules}")
    for name in ANALYZERS:
        for problem in totals[name].problems if name in totals else []:
            print(f"- {name}: {problem}")

    rng = random.Random(26)
    sample: list[dict[str, Any]] = []
    for name in ANALYZERS:
        mine = [f for f in everything if f["analyzer"] == name]
        sample.extend(rng.sample(mine, min(args.sample, len(mine))))
    if args.dump:
        args.dump.write_text(json.dumps({"all": everything, "sample": sample}, indent=1))
    if args.judged:
        verdicts: dict[str, str] = json.loads(args.judged.read_text())
        print()
        for name in ANALYZERS:
            judged = [verdicts.get(f["key"], "") for f in sample if f["analyzer"] == name]
            judged = [v for v in judged if v]
            if judged:
                c = Counter(judged)
                print(
                    f"- {name}: {len(judged)} judged, real {c['real']} "
                    f"({c['real'] / len(judged):.0%}), debatable {c['debatable']}, "
                    f"noise {c['noise']}"
                )


if __name__ == "__main__":
    main()
