"""What the issue-24 file and tool rules cost, side by side in one run.

- the uncommitted scope of a change (`--files` tracked files, `--changed` of them edited),
  and the step it now starts with: listing the work-tree changes without reading them
  (`git diff --raw --no-renames`, git/unreadable.py) — its share of the scope's time;
- looking git, gh and glab up on a PATH of `--path-entries` directories (git/binaries.py),
  a fresh runner each time (the first lookup of a process), against `shutil.which` on the
  same PATH.

  python benchmarks/odd_files.py [--files 5000] [--changed 500] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redline.git import binaries
from redline.git.repo import Repo
from redline.git.runner import GitRunner
from redline.git.scopes import resolve_scope
from redline.requests import ScopeRequest

from gitrepo import GitRepo


def timed(fn: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--changed", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--path-entries", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = GitRepo(Path(tmp) / "repo")
        for i in range(args.files):
            repo.write(f"pkg{i % 50}/m{i}.py", f"def f{i}():\n    return {i}\n")
        repo.commit("files")
        for i in range(args.changed):
            repo.write(f"pkg{i % 50}/m{i}.py", f"def f{i}():\n    return {i + 1}\n")
        runner = GitRunner()
        git_repo = Repo(repo.root, runner)
        head = git_repo.head() or ""
        scope = timed(
            lambda: resolve_scope(repo.root, ScopeRequest("uncommitted", None), runner=runner),
            args.repeat,
        )
        listing = timed(lambda: git_repo.worktree_changes(head), args.repeat)
        print(f"uncommitted scope, {args.files} files, {args.changed} changed:")
        print(f"  whole scope      {scope * 1000:8.1f} ms (median of {args.repeat})")
        print(f"  raw listing step {listing * 1000:8.1f} ms (only when the diff fails)")

        dirs = []
        for i in range(args.path_entries):
            d = Path(tmp) / f"bin{i}"
            d.mkdir()
            dirs.append(str(d))
        path = os.pathsep.join([*dirs, os.environ.get("PATH", "/usr/bin:/bin")])
        environ = {**os.environ, "PATH": path}

        def lookup() -> None:
            # The first lookup of a process: no plan cached (binaries._plans).
            binaries._plans.clear()
            fresh = GitRunner(environ=environ)
            for name in ("git", "gh", "glab"):
                fresh.lookup(name, repo.root)

        def lookup_again() -> None:
            # A new runner later in the same process (the language server makes one per query).
            fresh = GitRunner(environ=environ)
            for name in ("git", "gh", "glab"):
                fresh.lookup(name, repo.root)

        def which() -> None:
            for name in ("git", "gh", "glab"):
                shutil.which(name, path=path)

        ours = timed(lookup, args.repeat * 4)
        again = timed(lookup_again, args.repeat * 4)
        plain = timed(which, args.repeat * 4)
        entries = len(path.split(os.pathsep))
        print(f"git+gh+glab lookup, PATH of {entries} entries:")
        print(f"  first in process {ours * 1000:8.2f} ms")
        print(f"  a later runner   {again * 1000:8.2f} ms")
        print(f"  shutil.which     {plain * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
