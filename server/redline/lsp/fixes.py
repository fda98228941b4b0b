"""Code actions for findings: apply the suggested fix, show it, or dismiss the finding.

Plain specs, no pygls: the server turns an `ActionSpec` into an lsprotocol `CodeAction`
(converting positions to the client's encoding) and registers the commands named here.

Decisions:

- A fix replaces the finding's whole lines (what the tracker anchored) with the improved code,
  written with the document's line ending; the last line's break is kept, so the file's
  trailing newline (or its absence) is preserved. Improved code "" deletes the lines.
- "Apply fix" is offered only for a fresh finding whose fixed document still parses. The check
  is `ast.parse` for Python and a tree-sitter parse for JavaScript, TypeScript/TSX and Go.
  A fix is judged by what it changes: when the document does not parse *before* the fix either
  (the user is mid-edit), the check cannot tell, exactly as for a language without a parser.
- "Cannot tell" (None: unknown language, or already broken) still offers "apply fix", but never
  as preferred. `is_preferred` needs both a verifier verdict of CORRECT and a passing parse, so
  an editor's "auto fix" only ever applies a verified fix that is known to parse.
- A fix that fails the check, or a stale finding's fix (its code changed, the replacement may
  no longer fit), is offered only as "show suggested code" (a command: nothing is edited).
- The apply-fix action carries the edit *and* the `FIX_APPLIED` command: LSP clients run the
  command after applying the edit, so the server can close the finding (never re-published).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from redline.lsp.tracking import Range, TrackedFinding, split_keepends

if TYPE_CHECKING:
    from tree_sitter import Parser

# tree-sitter, `redline.diff.functions` and `redline.review.anchoring` (pydantic) are imported
# inside the functions that use them: the server imports this module at start-up for the
# command ids below, long before its first code action.

QUICKFIX = "quickfix"

# Commands the server must register (`workspace/executeCommand`); arguments are listed per id.
DISMISS = "redline.dismissFinding"  # [uri, finding_id]
DISMISS_FILE = "redline.dismissFile"  # [uri]
SHOW_SUGGESTED = "redline.showSuggestedCode"  # [uri, finding_id]
FIX_APPLIED = "redline.fixApplied"  # [uri, finding_id]

_TITLE_LIMIT = 80
_TREE_SITTER_KINDS = ("javascript", "typescript", "tsx", "go")
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class FixEdit:
    """Replace `range` (0-based lines, code-point characters) with `new_text`."""

    range: Range
    new_text: str
    fixed_text: str  # the whole document after the edit (what the parse check looks at)


@dataclass(frozen=True)
class CommandSpec:
    name: str
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class ActionSpec:
    title: str
    kind: str
    finding_ids: tuple[str, ...]  # the diagnostics this action is about
    edit: FixEdit | None = None
    command: CommandSpec | None = None
    is_preferred: bool = False


def line_ending(text: str) -> str:
    """The document's line ending: its first line break, else "\\n"."""
    match = _NEWLINE.search(text)
    return match.group(0) if match else "\n"


def fix_edit(finding_range: Range, doc_text: str, improved_code: str | None) -> FixEdit | None:
    """The edit that puts `improved_code` in place of the lines `finding_range` covers.

    The range is widened to whole lines (start of its first line to the end of its last line's
    text). None when there is no improved code, the range is outside the document, or the fix
    would change nothing."""
    if improved_code is None:
        return None
    lines = split_keepends(doc_text)
    first, last = finding_range.start_line, finding_range.end_line
    if first < 0 or last < first or last >= len(lines):
        return None
    eol = line_ending(doc_text)
    last_text = _content(lines[last])
    if improved_code == "":
        rng = _deletion_range(lines, first, last)
        new_text = ""
    else:
        from redline.review.anchoring import split_lines

        body = split_lines(improved_code)
        rng = Range(first, 0, last, len(last_text))
        new_text = eol.join(body)
    fixed = _apply(lines, rng, new_text)
    if fixed == doc_text:
        return None
    return FixEdit(rng, new_text, fixed)


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def _deletion_range(lines: list[str], first: int, last: int) -> Range:
    # Delete the lines with their breaks. The last line of the document has none: take the
    # break before the first line instead, so no empty line is left behind.
    if last + 1 < len(lines) and lines[last] != _content(lines[last]):
        return Range(first, 0, last + 1, 0)
    if first > 0:
        return Range(first - 1, len(_content(lines[first - 1])), last, len(_content(lines[last])))
    return Range(first, 0, last, len(_content(lines[last])))


def _apply(lines: list[str], rng: Range, new_text: str) -> str:
    head = "".join(lines[: rng.start_line]) + _content(lines[rng.start_line])[: rng.start_char]
    tail = lines[rng.end_line][rng.end_char :] + "".join(lines[rng.end_line + 1 :])
    return head + new_text + tail


def fixed_text_parses(path: str, new_text: str) -> bool | None:
    """Whether `new_text` parses as the language of `path`: True/False, or None when it cannot
    be checked (no parser for the language)."""
    from redline.diff.functions import language_for

    kind = language_for(path)
    if kind == "python":
        return _python_parses(new_text)
    if kind in _TREE_SITTER_KINDS:
        return _tree_sitter_parses(kind, new_text)
    return None


@lru_cache(maxsize=16)
def _python_parses(text: str) -> bool:
    # Cached: code-action requests come on every cursor move, with the same text each time.
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


def fix_check(path: str, doc_text: str, fixed_text: str) -> bool | None:
    """Does the fix keep the document parsing? None when that cannot be told: no parser, or
    the document does not parse before the fix either."""
    after = fixed_text_parses(path, fixed_text)
    if after is False and fixed_text_parses(path, doc_text) is False:
        return None
    return after


def kind_allowed(kind: str, only: Sequence[str] | None) -> bool:
    """LSP `context.only`: a kind is wanted when it equals or is nested under a listed kind
    ("quickfix" allows "quickfix" and "quickfix.x"; "source" does not allow "quickfix")."""
    if not only:
        return True
    return any(o == "" or kind == o or kind.startswith(o + ".") for o in only)


def _short(title: str) -> str:
    one_line = " ".join(title.split())
    if len(one_line) <= _TITLE_LIMIT:
        return one_line
    return one_line[: _TITLE_LIMIT - 1].rstrip() + "…"


def code_actions_for(
    findings_in_range: Sequence[TrackedFinding],
    doc_text: str,
    path: str,
    only: Sequence[str] | None = None,
    *,
    uri: str | None = None,
) -> list[ActionSpec]:
    """Code actions for the findings under the cursor/selection, in display order: for each
    finding its fix (or "show suggested code") and "dismiss finding", then one "dismiss all
    Redline findings in this file". `uri` is passed back in command arguments (default
    `path`); `only` is the request's `context.only`."""
    if not findings_in_range or not kind_allowed(QUICKFIX, only):
        return []
    target = uri if uri is not None else path
    actions: list[ActionSpec] = []
    for tracked in findings_in_range:
        finding = tracked.finding
        title = _short(finding.title)
        ids = (finding.id,)
        if finding.improved_code is not None:
            edit = (
                None if tracked.stale else fix_edit(tracked.range, doc_text, finding.improved_code)
            )
            check = fix_check(path, doc_text, edit.fixed_text) if edit is not None else False
            if edit is not None and check is not False:
                verified = (
                    finding.verification is not None
                    and finding.verification.verdict.strip().upper() == "CORRECT"
                )
                actions.append(
                    ActionSpec(
                        title=f"Redline: apply fix — {title}",
                        kind=QUICKFIX,
                        finding_ids=ids,
                        edit=edit,
                        command=CommandSpec(FIX_APPLIED, (target, finding.id)),
                        is_preferred=verified and check is True,
                    )
                )
            else:
                actions.append(
                    ActionSpec(
                        title=f"Redline: show suggested code — {title}",
                        kind=QUICKFIX,
                        finding_ids=ids,
                        command=CommandSpec(SHOW_SUGGESTED, (target, finding.id)),
                    )
                )
        actions.append(
            ActionSpec(
                title=f"Redline: dismiss finding — {title}",
                kind=QUICKFIX,
                finding_ids=ids,
                command=CommandSpec(DISMISS, (target, finding.id)),
            )
        )
    actions.append(
        ActionSpec(
            title="Redline: dismiss all Redline findings in this file",
            kind=QUICKFIX,
            finding_ids=tuple(t.id for t in findings_in_range),
            command=CommandSpec(DISMISS_FILE, (target,)),
        )
    )
    return actions
