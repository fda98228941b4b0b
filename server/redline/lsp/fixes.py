"""Code actions for findings: apply the suggested fix, show it, or dismiss the finding.

Plain specs, no pygls: the server turns an `ActionSpec` into an lsprotocol `CodeAction`
(converting positions to the client's encoding) and registers the commands named here.

Decisions:

- A fix replaces the finding's whole lines (what the tracker anchored) with the improved code,
  written with the document's line ending; the last line's break is kept, so the file's
  trailing newline (or its absence) is preserved. Improved code "" deletes the lines.
- "Apply fix" is offered only for a fresh finding whose fix the pipeline judged applicable
  (`Finding.fix`, decided once by `review/fix_check.py` for every output: the fixed file
  parses, or the language has no grammar). The editor does not re-judge it, so the Problems
  view, the report and the SARIF file never disagree about a fix.
- "Cannot tell" (`FixState.UNCHECKED`: no grammar, or the file was already broken) still offers
  "apply fix", but never as preferred. `is_preferred` needs both a verifier verdict of CORRECT
  and `FixState.PARSES`, so an editor's "auto fix" only ever applies a verified fix that is
  known to parse.
- A fix that does not parse, one whose quoted code is not in the file (an approximate
  location), or a stale finding's fix (its code changed, the replacement may no longer fit) is
  offered only as "show suggested code" (a command: nothing is edited).
- The apply-fix action carries the edit *and* the `FIX_APPLIED` command: LSP clients run the
  command after applying the edit, so the server can close the finding (never re-published).
- Only a fix (or "show suggested code") is a `quickfix`. A dismissal writes
  `.redline/dismissed.toml`, a file the team commits, so it is never of a kind editors apply
  without the user picking it: Neovim's and eglot's "apply the only quick fix", VS Code's auto
  fix and its `source.fixAll` on save. Its kind is `DISMISS_KIND`, which no `context.only` of
  theirs asks for; a menu lists it with the rest.
- A request that is not at a place (the whole document: Kate 22.12's Quick Fix asks so, and
  runs every action returned) gets no dismissal at all (`dismissals=False`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from redline.enums import FixState
from redline.lsp.document_findings import TrackedFinding
from redline.lsp.textlines import Range, split_keepends
from redline.review.quotes import split_lines

# Only the leaf review/quotes.py is imported from the engine (no pydantic): the server imports
# this module at start-up for the command ids below, long before its first code action.

QUICKFIX = "quickfix"
DISMISS_KIND = "redline.dismiss"

# Commands the server must register (`workspace/executeCommand`); arguments are listed per id.
DISMISS = "redline.dismissFinding"  # [uri, finding_id]
DISMISS_ALL = "redline.dismissAllLikeThis"  # [uri, finding_id]: every occurrence of its base id
DISMISS_FILE = "redline.dismissFile"  # [uri]
SHOW_SUGGESTED = "redline.showSuggestedCode"  # [uri, finding_id]
FIX_APPLIED = "redline.fixApplied"  # [uri, finding_id]

_TITLE_LIMIT = 80
# Said in the "show suggested code" title, so the user knows why there is no "apply fix".
_NOT_APPLICABLE = {
    FixState.DOES_NOT_PARSE: " (does not parse as is)",
    FixState.NOT_IN_FILE: " (quoted code not in the file)",
}
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class FixEdit:
    """Replace `range` (0-based lines, code-point characters) with `new_text`."""

    range: Range
    new_text: str
    fixed_text: str  # the whole document after the edit


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


def repeated_families(findings: Iterable[TrackedFinding]) -> set[str]:
    """The base ids more than one of `findings` share (identical code in one file)."""
    counts = Counter(t.finding.family_id for t in findings)
    return {base for base, n in counts.items() if n > 1}


def code_actions_for(
    findings_in_range: Sequence[TrackedFinding],
    doc_text: str,
    path: str,
    only: Sequence[str] | None = None,
    *,
    uri: str | None = None,
    repeated: Collection[str] = (),
    dismissals: bool = True,
) -> list[ActionSpec]:
    """Code actions for the findings under the cursor/selection, in display order: for each
    finding its fix (or "show suggested code") and "dismiss finding" (and "dismiss all like
    this" when its base id is in `repeated`: identical findings elsewhere in the file), then
    one "dismiss all Redline findings in this file". `uri` is passed back in command arguments
    (default `path`); `only` is the request's `context.only`: only actions of a kind it asks
    for; without `dismissals`, fixes only."""
    specs = _all_actions(findings_in_range, doc_text, path, uri, repeated)
    return [
        s for s in specs if kind_allowed(s.kind, only) and (dismissals or s.kind != DISMISS_KIND)
    ]


def _all_actions(
    findings_in_range: Sequence[TrackedFinding],
    doc_text: str,
    path: str,
    uri: str | None,
    repeated: Collection[str],
) -> list[ActionSpec]:
    if not findings_in_range:
        return []
    target = uri if uri is not None else path
    actions: list[ActionSpec] = []
    for tracked in findings_in_range:
        finding = tracked.finding
        title = _short(finding.title)
        ids = (finding.id,)
        if finding.improved_code is not None:
            edit = (
                fix_edit(tracked.range, doc_text, finding.improved_code)
                if finding.fix_applicable and not tracked.stale
                else None
            )
            if edit is not None:
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
                        is_preferred=verified and finding.fix is FixState.PARSES,
                    )
                )
            else:
                why = _NOT_APPLICABLE.get(finding.fix, "")
                actions.append(
                    ActionSpec(
                        title=f"Redline: show suggested code{why} — {title}",
                        kind=QUICKFIX,
                        finding_ids=ids,
                        command=CommandSpec(SHOW_SUGGESTED, (target, finding.id)),
                    )
                )
        actions.append(
            ActionSpec(
                title=f"Redline: dismiss finding — {title}",
                kind=DISMISS_KIND,
                finding_ids=ids,
                command=CommandSpec(DISMISS, (target, finding.id)),
            )
        )
        if finding.family_id in repeated:
            actions.append(
                ActionSpec(
                    title=f"Redline: dismiss all like this — {title}",
                    kind=DISMISS_KIND,
                    finding_ids=ids,
                    command=CommandSpec(DISMISS_ALL, (target, finding.id)),
                )
            )
    actions.append(
        ActionSpec(
            title="Redline: dismiss all Redline findings in this file",
            kind=DISMISS_KIND,
            finding_ids=tuple(t.id for t in findings_in_range),
            command=CommandSpec(DISMISS_FILE, (target,)),
        )
    )
    return actions
