"""Deleted files reviewed for what they break: where the new tree still uses their definitions.

diff/deleted.py gives a deleted file's unit the top-level names its old text defined. Here one
`git grep` (tools/code_tools.git_grep_any_word) over the new side looks for all of them at once,
compiled into one alternation: its cost does not grow with the number of names, where one `-e`
per name did (2,000 names on mypy's tree: over 30 s). Stubs, vendored and generated files are
left out (their file's verdict, diff/file_kind.py: a deleted `builtins.pyi` declared `int`, which
the new tree uses everywhere without needing the stub). The search is bounded in time and in
the bytes it reads back; when it is cut short, the review's coverage says so.
Where project memory is built, its graph names the files to read instead (deleted_memory.py),
with the grep's results. A name that the new tree defines again was moved, not removed, and is
dropped;
the others' remaining uses go into the unit (`symbol_uses`, and its patch, which a model
reads), and a unit whose names are no longer used anywhere is skipped. Offline, each still-used
name becomes a finding at its first use: "X is still used in Y:line".
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redline.diff.file_kind import kind_of
from redline.diff.tags import comment_line
from redline.errors import RedlineError
from redline.git import INDEX_REV, UNAVAILABLE_REV
from redline.git.scopes import ScopeDiff
from redline.model import (
    Category,
    Finding,
    PatchType,
    ReviewUnit,
    Severity,
    SymbolUse,
    Tag,
    finding_id,
)
from redline.plural import plural

if TYPE_CHECKING:
    from redline.memory.query import ProjectMemory

# Opens the repository's project memory (None: not built); called only when a deleted file's
# names are searched, so a review that deletes nothing never opens it.
MemoryOpener = Callable[[], "ProjectMemory | None"]

# tools/code_tools.py (and the agent's toolkit it brings) is imported where a deleted file's
# names are searched: a review that deletes no such file does not load it.

logger = logging.getLogger(__name__)

GREP_TIMEOUT = 30.0
GREP_MAX_OUTPUT = 8 * 1024 * 1024
MAX_USES_PER_SYMBOL = 20  # what the unit lists; the finding gives the count
MAX_LINE_CHARS = 200
SOURCE = "redline:deleted-symbols"
# A name as git grep -w tells words apart (its word characters), plus `$` for JavaScript names.
_TOKEN = re.compile(r"[\w$]+")
# Files of the new tree whose mention of a name runs nothing that the deletion breaks.
_NOT_CODE = frozenset({Tag.VENDORED, Tag.GENERATED, Tag.MINIFIED, Tag.DOCS})


class _SearchFailed(Exception):
    """The search did not finish: `reason` is what the coverage note says."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def find_uses(
    units: list[ReviewUnit], scope: ScopeDiff, memory: MemoryOpener | None = None
) -> list[ReviewUnit]:
    """The units, with each reviewable deleted file's remaining uses filled in (or skipped).
    `memory` opens the repository's project memory when a deleted file's names are searched:
    where it is built, its graph says which files to read (review/deleted_memory.py) instead
    of a `git grep` of the whole tree; the same uses come out either way."""
    deleted = [u for u in units if _searched(u)]
    if not deleted:
        return units
    words = list(dict.fromkeys(name for u in deleted for name in u.symbols))
    try:
        found = _from_memory(scope, words, memory) if memory is not None else None
        if found is None:
            found = _grep(scope, words)
    except _SearchFailed as failed:
        # The deletions are reviewed from their names alone, and the report says why.
        scope.notes.append(
            f"deleted files: the search of the new tree for the "
            f"{plural(len(words), 'definition')} of {plural(len(deleted), 'deleted file')} "
            f"was cut short ({failed.reason}); where they are still used is not reported"
        )
        return units
    if found is None:  # search not possible: the deletion is reviewed from its names alone
        return units
    gone = {u.file_path for u in units if u.patch_type is PatchType.DELETE}
    out = []
    for unit in units:
        if unit in deleted:
            unit = _with_uses(unit, found, gone)
        out.append(unit)
    return out


def _searched(unit: ReviewUnit) -> bool:
    return (
        unit.patch_type is PatchType.DELETE
        and bool(unit.symbols)
        and not unit.skip_reason
        and kind_of(unit.file_path).names_searched
    )


def _from_memory(scope: ScopeDiff, words: list[str], opener: MemoryOpener) -> _Found | None:
    """The uses and definitions of `words` read from the files project memory names; None
    when memory is not built or cannot answer for this scope (then the grep runs)."""
    from redline.review.deleted_memory import MemoryUnusable, files_to_scan, scan

    try:
        memory = opener()
    except Exception as exc:  # a broken index: the grep still answers
        logger.info("deleted-file search: project memory not opened (%s)", type(exc).__name__)
        return None
    if memory is None:
        return None
    try:
        paths = files_to_scan(scope, memory, words)
        return _collect(scan(scope, paths), words)
    except MemoryUnusable as exc:
        logger.info("deleted-file search: project memory not used (%s)", exc)
        return None
    finally:
        memory.close()


@dataclass(frozen=True, slots=True)
class _Found:
    uses: dict[str, list[SymbolUse]]  # name → its uses in code, in git grep's order
    defined: set[str]  # names a line of the new tree defines again


def _grep(scope: ScopeDiff, words: list[str]) -> _Found | None:
    """The uses and the definitions of `words` in the new tree; None when there is no tree to
    search. Raises _SearchFailed when git fails, times out or writes more than GREP_MAX_OUTPUT."""
    from redline.tools.code_tools import git_grep_any_word, grep_hits

    rev = scope.new_rev
    if rev == UNAVAILABLE_REV:
        return None
    cached = rev == INDEX_REV
    tree = rev if rev is not None and not cached else None
    try:
        result = git_grep_any_word(
            scope.runner,
            scope.repo_root,
            words,
            rev=tree,
            cached=cached,
            timeout=GREP_TIMEOUT,
            max_output=GREP_MAX_OUTPUT,
        )
    except RedlineError as exc:
        logger.info("deleted-file search failed: %s", exc.message)
        raise _SearchFailed(exc.message) from None
    if result.returncode not in (0, 1):
        raise _SearchFailed(f"git grep exited with status {result.returncode}")
    return _collect(grep_hits(result, tree), words)


def _collect(hits: Iterable[tuple[str, str, str]], words: list[str]) -> _Found:
    """The uses and definitions among (path, line number, line) hits, in their order."""
    from redline.tools.code_tools import defines

    found = _Found(defaultdict(list), set())
    wanted = set(words)
    for path, lineno, text in hits:
        names = _words_in(text, wanted)
        if not names:
            continue
        # A definition anywhere (a vendored copy, a stub) means the name lives on; only a
        # line of code uses it.
        found.defined.update(n for n in names if n not in found.defined and defines(n, text))
        if not _code_line(path, text):
            continue
        for word in names:
            found.uses[word].append(
                SymbolUse(
                    symbol=word, path=path, line=int(lineno), text=text.strip()[:MAX_LINE_CHARS]
                )
            )
    return found


def _code_line(path: str, text: str) -> bool:
    """A line that can use a name: in a file of a known language or format (code, tests,
    configuration such as an entry point in pyproject.toml) that is neither prose, docs,
    vendored nor generated (their verdict: diff/file_kind.py), and not a comment. On mypy's
    v0.900..v1.20.0 every use found elsewhere was a word in a comment or in the docs, or a
    vendored stub's own name."""
    kind = kind_of(path)
    if kind.syntax is None or kind.prose or kind.tags & _NOT_CODE:
        return False
    return not comment_line(kind.syntax, text)


def _words_in(text: str, wanted: set[str]) -> list[str]:
    """The wanted names that occur in the line as whole words (what `git grep -w` matched), in
    the order they first occur: one pass over the line's words, whatever the number of names."""
    return list(dict.fromkeys(token for token in _TOKEN.findall(text) if token in wanted))


def _with_uses(unit: ReviewUnit, found: _Found, gone: set[str]) -> ReviewUnit:
    kept: list[SymbolUse] = []
    for symbol in unit.symbols:
        if symbol in found.defined:
            continue  # defined again in the new tree: moved, not removed
        hits = [u for u in found.uses.get(symbol, []) if u.path not in gone]
        kept += hits[:MAX_USES_PER_SYMBOL]
    if not kept:
        return unit.model_copy(
            update={"skip_reason": "file deleted; none of its definitions is used in the new tree"}
        )
    lines = [f"#   {u.symbol} is still used at {u.path}:{u.line}: {u.text}" for u in kept]
    patch = unit.patch + "# uses left in the new tree:\n" + "\n".join(lines) + "\n"
    return unit.model_copy(update={"symbol_uses": kept, "patch": patch})


def deleted_findings(units: list[ReviewUnit]) -> list[Finding]:
    """One finding per deleted definition the new tree still uses, at its first use."""
    findings = []
    for unit in units:
        if unit.skip_reason or not unit.symbol_uses:
            continue
        by_symbol: dict[str, list[SymbolUse]] = defaultdict(list)
        for use in unit.symbol_uses:
            by_symbol[use.symbol].append(use)
        for symbol, uses in by_symbol.items():
            first = uses[0]
            where = ", ".join(f"{u.path}:{u.line}" for u in uses[:5])
            more = f" and {len(uses) - 5} more" if len(uses) > 5 else ""
            findings.append(
                Finding(
                    id=finding_id(
                        first.path, first.text, Category.FUNCTIONALITY, f"{SOURCE}:{symbol}"
                    ),
                    file=first.path,
                    line=first.line,
                    severity=Severity.MEDIUM,
                    category=Category.FUNCTIONALITY,
                    title=f"`{symbol}` is still used, but `{unit.file_path}` is deleted",
                    comment=(
                        f"`{unit.file_path}` is deleted in this change, and with it `{symbol}`; "
                        f"the new tree still uses the name at {where}{more}. Unless another "
                        "module provides it under that name (a name search cannot tell), these "
                        "uses fail at import or run time: remove them, or keep the definition."
                    ),
                    existing_code=first.text,
                    confidence=0.6,
                    sources=[SOURCE],
                )
            )
    return findings
