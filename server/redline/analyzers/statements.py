"""The statements of the Python files analyzer results are in: the fix verdicts and the
cross-line merge of `convert` ask which statements hold a result's rows.

Pure functions and caches: no processes, no files.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from redline.analyzers.fixes import SourceText
from redline.model import FixState
from redline.review.fix_check import fix_state
from redline.review.quotes import NEWLINE

_BLOCK_HEADER = "if 1:\n"


@dataclass(frozen=True)
class Statement:
    first: int  # its first row, decorators included
    last: int
    indent: int  # its column (characters of indentation) when it has its rows to itself, else -1


class Statements:
    """The statements of each Python file the findings are in, from one `ast.parse` a file (None
    when it does not parse), for the fix verdicts and the cross-line merge. Only the statements
    that hold a row asked about are looked at (a descent from the module's top level), never
    every node of the tree."""

    def __init__(self, texts: Mapping[str, SourceText]) -> None:
        self._texts = texts
        self._trees: dict[str, ast.Module | None] = {}

    def release(self, keep: Collection[str]) -> None:
        """Drop the trees of the files not in `keep` (a file asked about again is parsed
        again): freeing a large tree takes a while, better spent while nothing else is to do."""
        for path in [p for p in self._trees if p not in keep]:
            del self._trees[path]

    def holding(self, path: str, line: int, end_line: int) -> list[Statement]:
        """The statements that hold rows line..end_line, outermost first."""
        if path not in self._trees:
            source = self._texts.get(path)
            self._trees[path] = _parse(source.text) if source is not None else None
        tree = self._trees[path]
        if tree is None:
            return []
        rows = self._texts[path].rows()
        out: list[Statement] = []
        body: list[ast.stmt] = tree.body
        while body:
            for node in body:
                if (node.end_lineno or node.lineno) < end_line:
                    continue  # ends before the rows (the statement's `last`, read cheaply)
                statement = _statement(node, rows)
                if statement.first <= line and end_line <= statement.last:
                    out.append(statement)
                    body = _children(node)
                    break
            else:
                break
        return out


def _parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not ours to show
            return ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _statement(node: ast.stmt, rows: list[str]) -> Statement:
    first = node.lineno
    decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
    if decorators:
        first = min(first, *(d.lineno for d in decorators))  # `@` is on its decorator's row
    last = node.end_lineno or node.lineno
    text = rows[first - 1] if first - 1 < len(rows) else ""
    width = len(text) - len(text.lstrip(" \t"))
    end_row = rows[last - 1] if last - 1 < len(rows) else ""
    # ast's columns count UTF-8 bytes.
    tail = end_row.encode("utf-8", "surrogatepass")[node.end_col_offset or 0 :].decode(
        "utf-8", "replace"
    )
    # A statement that shares a row with another (`a = 1; b = 2`, `if x: y()`) does not have
    # its rows to itself: they cannot stand for it.
    alone = node.col_offset == width and (not tail.strip() or tail.lstrip().startswith("#"))
    if decorators:
        alone = alone and text.lstrip().startswith("@")
    return Statement(first, last, width if alone else -1)


def _children(node: ast.stmt) -> list[ast.stmt]:
    """The statements directly in `node`'s blocks."""
    out: list[ast.stmt] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list):
            out.extend(n for n in block if isinstance(n, ast.stmt))
    for handler in getattr(node, "handlers", None) or ():
        out.extend(handler.body)
    for case in getattr(node, "cases", None) or ():
        out.extend(case.body)
    return out


class FixChecker:
    """Whether each fix keeps its file parsing (`fix_state`), asked of the statement around the
    fix instead of the whole file.

    `fix_state` parses the whole file once per fix: on a 25k-line change of large modules, 150
    ruff fixes (mostly UP031) cost 2.9 s, more than everything else in an offline review. Here
    the file is parsed once, for its statements (`Statements`), and each fix asks only the
    innermost statement that holds all its rows and has them to itself. Between two statements
    of one block the tokenizer holds nothing open (no bracket, string or continuation), so the
    file with the fix parses exactly when that statement's rows, with the fix, parse as one
    block opened at the statement's indentation — under `if 1:` when it is indented (`return`
    or `break` parse there: `ast.parse` does not ask where they stand, for the statement as
    for the file). `_one_block` keeps a fix that dedents past the statement (it would close
    blocks of the file the statement alone does not have) from passing. A "does not parse", or
    a file that does not parse before the fix, is left to the whole file, as before, so a fix
    is never called broken on the statement's word alone.
    """

    def __init__(self, statements: Statements) -> None:
        self._statements = statements

    def verdict(
        self, path: str, source: SourceText, line: int, end_line: int, improved: str
    ) -> FixState:
        if path.endswith((".py", ".pyi")) and self._parses_in_statement(
            path, source, line, end_line, improved
        ):
            return FixState.PARSES
        return fix_state(path, source.text, line, end_line, improved)

    def _parses_in_statement(
        self, path: str, source: SourceText, line: int, end_line: int, improved: str
    ) -> bool:
        holding = [s for s in self._statements.holding(path, line, end_line) if s.indent >= 0]
        if not holding:
            return False
        statement = holding[-1]
        rows = source.rows()
        run = (
            rows[statement.first - 1 : line - 1]
            + (NEWLINE.split(improved) if improved else [])
            + rows[end_line : statement.last]
        )
        opening = next((text for text in run if text.strip()), "")
        if len(opening) - len(opening.lstrip(" \t")) != statement.indent:
            return False  # the run would open its block at another indentation than the file's
        header = _BLOCK_HEADER if statement.indent else ""
        return _one_block(header + "\n".join(run) + "\n", header)


def _one_block(text: str, header: str) -> bool:
    """`text` parses, and under a `header` all of it stays in the header's block: a line the
    fix dedented past the statement's indentation would close blocks of the file that the
    statement alone does not have, so such a run tells nothing about the file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not an error
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return not header or len(tree.body) == 1
