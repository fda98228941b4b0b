"""Retrieval cases mined from a repository's own history, for benchmarks/memory_retrieval.py.

Nobody wrote these cases for the benchmark: they are what the repository's authors changed
together. For each of the last `commits` non-merge commits, the changed lines of every file
(`git diff -U0` against the first parent, new side; a pure deletion counts as touching the line
it happened at) are mapped to their innermost enclosing function in the commit's own version of
the file (redline.diff.functions.function_spans, the spans a review uses). A commit is a
co-change case when, after keeping only the functions that still exist at HEAD (same path, same
qualified name), its changed functions lie in two or more files. Commits touching more than
MAX_FILES files or MAX_FUNCTIONS functions are skipped (mass renames, reformatting, vendoring:
"changed together" says nothing there).

Docstring cases are the documented functions at HEAD (their first paragraph, at least
MIN_DOC_WORDS words), sampled evenly.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redline.diff.functions import FunctionSpan, function_spans, has_grammar

MAX_FILES: Final = 20
MAX_FUNCTIONS: Final = 40
MIN_DOC_WORDS: Final = 4
MAX_FILE_BYTES: Final = 1_000_000

Key = tuple[str, str]  # (path, qualified name)

_HUNK: Final = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


@dataclass(frozen=True)
class CoChange:
    commit: str
    subject: str
    functions: tuple[Key, ...]  # changed functions that still exist at HEAD, 2+ files


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=root,
        capture_output=True,
        text=True,
        errors="replace",
        check=True,
    ).stdout


def git_bytes(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=True).stdout


def innermost(spans: list[FunctionSpan], line: int) -> str | None:
    """The qualified name of the innermost function holding `line` (spans sorted outer-first)."""
    found = None
    for span in spans:
        if span.start > line:
            break
        if span.end >= line:
            found = span.name
    return found


def changed_lines(patch: str) -> dict[str, list[int]]:
    """path → new-side lines a `git diff -U0 --no-prefix` touched."""
    out: dict[str, list[int]] = {}
    for section in patch.split("\ndiff --git ")[0:]:
        head, _, body = section.partition("\n@@")
        path = None
        for line in head.splitlines():
            if line.startswith("+++ "):
                name = line[4:]
                path = None if name == "/dev/null" else name.removeprefix("b/")
        if path is None or not body:
            continue
        lines = out.setdefault(path, [])
        for match in _HUNK.finditer("@@" + body):
            start, count = int(match.group(1)), int(match.group(2) or "1")
            lines.extend(range(start, start + count) if count else [max(start, 1)])
    return out


def head_functions(root: Path) -> dict[str, list[FunctionSpan]]:
    """path → function spans of every tracked file with a grammar, at HEAD."""
    out: dict[str, list[FunctionSpan]] = {}
    for path in git(root, "ls-files", "-z").split("\0"):
        if not path or not has_grammar(path):
            continue
        file = root / path
        if file.is_symlink() or not file.is_file() or file.stat().st_size > MAX_FILE_BYTES:
            continue
        out[path] = function_spans(path, file.read_bytes())
    return out


def co_changes(root: Path, commits: int, at_head: set[Key]) -> list[CoChange]:
    """The co-change cases among the last `commits` non-merge commits (newest first)."""
    log = git(root, "log", "--no-merges", f"-n{commits}", "--format=%H%x00%s", "HEAD")
    cases: list[CoChange] = []
    for row in log.splitlines():
        commit, _, subject = row.partition("\0")
        names = git(root, "diff-tree", "-r", "--no-commit-id", "--name-only", "-M", commit)
        files = [p for p in names.splitlines() if p and has_grammar(p)]
        if len(files) < 2 or len(names.splitlines()) > MAX_FILES:
            continue
        parent = git(root, "rev-list", "--parents", "-n1", commit).split()[1:2]
        if not parent:
            continue  # the root commit: everything is "changed together"
        patch = git(root, "diff", "-U0", "--no-color", "-M", parent[0], commit, "--", *files)
        functions: set[Key] = set()
        for path, lines in changed_lines(patch).items():
            try:
                data = git_bytes(root, "show", f"{commit}:{path}")
            except subprocess.CalledProcessError:
                continue
            if len(data) > MAX_FILE_BYTES:
                continue
            spans = function_spans(path, data)
            for line in lines:
                name = innermost(spans, line)
                if name is not None:
                    functions.add((path, name))
        if len(functions) > MAX_FUNCTIONS:
            continue
        kept = tuple(sorted(k for k in functions if k in at_head))
        if len({path for path, _ in kept}) >= 2:
            cases.append(CoChange(commit, subject, kept))
    return cases


def first_paragraph(docstring: str) -> str:
    """A docstring's summary: its first paragraph, whitespace collapsed."""
    text = docstring.strip().strip("\"'`").strip()
    return " ".join(text.split("\n\n", 1)[0].split())


def sample(items: list[Key], limit: int) -> list[Key]:
    """At most `limit` of `items`, spread evenly (deterministic)."""
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]
