"""The diff text Redline reviews: the options git writes it with, and its totals.

Totals (files, added and removed lines) are counted from the text rather than asked of git a
second time; the count is additive over pieces cut at file sections, so a streamed diff is
counted as it arrives (git/stream.py).
"""

from __future__ import annotations

from typing import Final

from redline.git.process import split_nul
from redline.model import DiffStats
from redline.plural import plural

# Options for every diff Redline reviews. Prefixes are explicit so user config (noprefix,
# mnemonicPrefix) cannot change the format the unitizer parses; submodules are compared by
# commit only ("dirty" ignored) because inspecting their work trees would start a child git
# in a repository whose config we have not vetted.
DIFF_OPTIONS: Final[tuple[str, ...]] = (
    "--no-color",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-M",
    "-U3",
    "--submodule=short",
    "--ignore-submodules=dirty",
)


def stats_suffix(stats: DiffStats, diff_text: str) -> str:
    if not diff_text:
        return " — no changes"
    return f" — {plural(stats.files, 'file')}, +{stats.added} −{stats.removed}"


def parse_numstat(data: bytes) -> DiffStats:
    """Totals from `git diff --numstat -z` (binary files count as files with 0 lines)."""
    records = split_nul(data)
    files = added = removed = 0
    i = 0
    while i < len(records):
        fields = records[i].split(b"\t", 2)
        i += 1
        if len(fields) != 3:
            continue
        if fields[2] == b"":  # rename/copy: the two names follow as separate records
            i += 2
        files += 1
        if fields[0].isdigit():
            added += int(fields[0])
        if fields[1].isdigit():
            removed += int(fields[1])
    return DiffStats(files=files, added=added, removed=removed)


def stats_from_diff(text: str) -> DiffStats:
    """Totals counted from unified diff text: files, '+' and '-' lines inside hunks.

    For git's own output this equals `git diff --numstat` (tests/test_scopes.py proves it on
    binary files, renames, submodules, CRLF and non-UTF-8 content), so Redline asks git for the
    patch only instead of computing the diff twice.

    Counted per file section rather than per line, which keeps it at C speed on large diffs:
    a section starts at a line beginning with "diff --git " (no body line can: body lines start
    with ' ', '+', '-' or '\\', and git C-quotes names containing a newline). Inside a section,
    every line after its first "@@" line that starts with '+' or '-' is a changed line; the
    "--- "/"+++ " name lines come before the first "@@", so they are not counted.
    """
    files, added, removed = diff_counts(text)
    return DiffStats(files=files, added=added, removed=removed)


def diff_counts(text: str) -> tuple[int, int, int]:
    """(files, added, removed) of stats_from_diff.

    Additive over pieces of a diff cut just before a "diff --git " line: each piece's sections
    are the whole text's (the newline a piece ends with cannot start a "\\n+"/"\\n-"/"\\n@@"),
    so a streamed diff is counted piece by piece as it arrives (see stream.DiffStream).
    """
    # The leading "\n" lets the text's first line be found like every other line.
    sections = ("\n" + text).split("\ndiff --git ")
    added = removed = 0
    for section in sections:
        first_hunk = section.find("\n@@")
        if first_hunk != -1:
            added += section.count("\n+", first_hunk)
            removed += section.count("\n-", first_hunk)
    return len(sections) - 1, added, removed


__all__ = [
    "DIFF_OPTIONS",
    "diff_counts",
    "parse_numstat",
    "plural",
    "stats_from_diff",
    "stats_suffix",
]
