"""Does a finding's fix parse? One verdict, made once in the pipeline, that every output
follows: the JSON (`fix`), SARIF (a `fixes` entry only for an applicable fix), Markdown
("Suggested fix" vs "Suggested code (does not parse as is)") and the language server (an
apply-fix action only for an applicable fix).

The check is `ast.parse` for Python and a tree-sitter parse for JavaScript, TypeScript/TSX and
Go, on the whole file with the finding's lines replaced by its improved code. A fix is judged by
what it changes: when the file does not parse *before* the fix either, the check cannot tell,
exactly as for a language without a grammar (`FixState.UNCHECKED`, still applicable).
"""

from __future__ import annotations

import ast
import warnings
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from redline.enums import FixState
from redline.review.quotes import NEWLINE

if TYPE_CHECKING:
    from tree_sitter import Parser

_TREE_SITTER_KINDS = ("javascript", "typescript", "tsx", "go", "java", "rust")


def fixed_text_parses(path: str, text: str) -> bool | None:
    """Whether `text` parses as the language of `path`: True/False, or None when it cannot be
    checked (no grammar for the language)."""
    # Imported here: tree-sitter's grammar table is only needed once a fix is checked.
    from redline.diff.functions import language_for

    kind = language_for(path)
    if kind == "python":
        return _python_parses(text)
    if kind in _TREE_SITTER_KINDS:
        return _tree_sitter_parses(kind, text)
    return None


@lru_cache(maxsize=16)
def _python_parses(text: str) -> bool:
    # Cached: a review checks every fix in a file against the same "before" text.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not an error
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


@cache
def _parser(kind: str) -> Parser | None:
    from tree_sitter import Parser

    # `load_language` is the grammar loader the function-span code uses: one place decides which
    # grammar wheels exist and how a broken one is tolerated.
    from redline.diff.functions import load_language

    language = load_language(kind)
    return Parser(language) if language is not None else None


@lru_cache(maxsize=16)
def _tree_sitter_parses(kind: str, text: str) -> bool | None:
    parser = _parser(kind)
    if parser is None:
        return None
    tree = parser.parse(text.encode("utf-8", errors="surrogatepass"))
    return not tree.root_node.has_error


def fix_check(path: str, before: str, after: str) -> bool | None:
    """Does the fix keep the file parsing? None when that cannot be told: no grammar, or the
    file does not parse before the fix either."""
    parsed = fixed_text_parses(path, after)
    if parsed is False and fixed_text_parses(path, before) is False:
        return None
    return parsed


def replace_lines(text: str, start: int, end: int, improved: str) -> str:
    """`text` with its 1-based lines `start`..`end` replaced by `improved` ("" deletes them),
    each line keeping the file's line ending."""
    lines = NEWLINE.split(text)
    eol = m.group(0) if (m := NEWLINE.search(text)) else "\n"
    new = NEWLINE.split(improved) if improved != "" else []
    return eol.join(lines[: start - 1] + new + lines[end:])


def fix_state(path: str, text: str, start: int, end: int, improved: str) -> FixState:
    """The verdict on replacing lines `start`..`end` of the file `path` (whose text is `text`)
    with `improved`."""
    verdict = fix_check(path, text, replace_lines(text, start, end, improved))
    if verdict is None:
        return FixState.UNCHECKED
    return FixState.PARSES if verdict else FixState.DOES_NOT_PARSE
