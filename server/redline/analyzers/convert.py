"""Raw analyzer results → Findings: rule policy, changed-line filter, fixes, merging, redaction.

Pure functions: no processes, no files. The runner feeds them what the tools printed.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from redline.analyzers.base import RawResult
from redline.analyzers.fixes import SourceText, apply_fix
from redline.analyzers.rules import SECRET_RULES, family, is_noise, rule_info
from redline.model import AnchorState, Finding, FixState, finding_id
from redline.review.fix_check import fix_state
from redline.review.quotes import NEWLINE
from redline.shorten import shorten

_BACKTICKED = re.compile(r"`([^`]+)`")
_QUOTED = re.compile(r"""(['"])(.*?)\1""")
# bandit: "Possible hardcoded password: 'hunter2'"; keep the label, drop the value.
_SECRET_VALUE = re.compile(r"""(password|secret|token|key)(\s*:\s*)(['"]).*?\3""", re.IGNORECASE)
_TITLE_LIMIT = 100


@dataclass
class _Candidate:
    finding: Finding
    family: str
    tool: str


def to_findings(
    results: Iterable[RawResult],
    texts: Mapping[str, SourceText],
    changed_lines: Mapping[str, set[int]],
) -> list[Finding]:
    """Findings for the results that touch a changed line, merged across tools."""
    merged: dict[tuple[str, str, int], _Candidate] = {}
    checker = _FixChecker()
    for raw in results:
        if is_noise(raw.tool, raw.rule):
            continue
        source = texts.get(raw.file)
        changed = changed_lines.get(raw.file)
        if source is None or not changed or not _touches(raw.line, raw.end_line, changed):
            continue
        candidate = _Candidate(_finding(raw, source, checker), family(raw.tool, raw.rule), raw.tool)
        key = (raw.file, candidate.family, raw.line)
        existing = merged.get(key)
        if existing is None:
            merged[key] = candidate
        elif existing.tool != candidate.tool:  # the same tool twice is a duplicate, not evidence
            merged[key] = _merge(existing, candidate)
    findings = [c.finding for c in _merge_across_lines(list(merged.values()), texts)]
    findings.sort(key=lambda f: (f.file, f.line or 0, -f.severity.rank, f.rule_id or ""))
    return findings


def _touches(line: int, end_line: int, changed: set[int]) -> bool:
    if end_line - line < len(changed):
        return any(n in changed for n in range(line, end_line + 1))
    return any(line <= n <= end_line for n in changed)


def _finding(raw: RawResult, source: SourceText, checker: _FixChecker) -> Finding:
    info = rule_info(raw.tool, raw.rule, raw.message, raw.severity, raw.confidence, raw.security)
    key = family(raw.tool, raw.rule)
    line, end_line = raw.line, min(max(raw.end_line, raw.line), max(source.line_count, raw.line))
    existing = source.lines(line, end_line)
    improved: str | None = None
    fix = apply_fix(source, line, end_line, raw.edits) if raw.edits else None
    if fix is not None:
        line, end_line, existing, improved = (
            fix.line,
            fix.end_line,
            fix.existing_code,
            fix.improved_code,
        )
    message = _redact(raw.message, existing) if key in SECRET_RULES else _redact(raw.message, "")
    title = _title(info.title, message)
    comment = _comment(message, title, info.advice, raw, fix is not None)
    return Finding(
        # The id uses the rule family, so it does not change with which tool reported it.
        id=finding_id(raw.file, existing, info.category, key),
        file=raw.file,
        line=line,
        end_line=end_line,
        severity=info.severity,
        category=info.category,
        title=title,
        comment=comment,
        existing_code=existing,
        improved_code=improved,
        confidence=info.confidence,
        sources=[f"{raw.tool}:{raw.rule}"],
        rule_id=raw.rule,
        anchor=AnchorState.EXACT,
        # The same parse verdict as a model's fix: an analyzer's edit can break code too.
        fix=FixState.UNCHECKED
        if improved is None
        else checker.verdict(raw.file, source, line, end_line, improved),
    )


# What a line's code (after its indentation) may start with when it starts a statement: not a
# comment, not a closing bracket, not the `else`/`elif`/`except`/`finally` of a statement above.
_STATEMENT_START = re.compile(r"(?!(?:else|elif|except|finally)\b)[^\s#)\]}]")
_BLOCK_HEADER = "if 1:\n"
# Runs tried per fix, from the fix's own indentation outwards, before the whole file is parsed.
_RUN_TRIES = 4


class _FixChecker:
    """Whether each fix keeps its file parsing (`fix_state`), asked of the statements around
    the fix instead of the whole file.

    `fix_state` parses the whole file once per fix: on a 25k-line change of large modules, 150
    ruff fixes (mostly UP031) cost 2.9 s, more than everything else in an offline review. Where
    one statement ends and the next starts at the same indentation, the tokenizer holds nothing
    open (no bracket, string or continuation), so a fix inside a run of whole statements of one
    block keeps the file parsing exactly when that run, with the fix, parses as one block —
    under `if 1:` when it is indented (`return` or `break` parse there: `ast.parse` does not ask
    where they stand, for the run as for the file) — opened at the same indentation.

    The run is found by indentation, without a parse: from the nearest line above that starts a
    statement and is indented no deeper than any code between it and the fix (the statement
    the fix's first line is in), to the next line that starts a statement at that indentation
    or less (tried again one indentation further out when it is not trusted, see `verdict`).
    It is trusted only when its text *before* the fix parses as one block (a boundary
    guessed inside a multi-line string or bracket makes a run that does not), and its verdict
    only when it says "parses" and the fix kept it one block (`_one_block`). Anything else —
    no trusted run within `_RUN_TRIES`, or a "does not parse" — is checked on the whole file,
    as before, so a fix is never called broken on the run's word alone.
    """

    def __init__(self) -> None:
        self._trusted: dict[tuple[str, int, int], bool] = {}

    def verdict(
        self, path: str, source: SourceText, line: int, end_line: int, improved: str
    ) -> FixState:
        if path.endswith((".py", ".pyi")):
            lines = source.rows()
            if 1 <= line <= end_line <= len(lines):
                fix_line = lines[line - 1]
                width = len(fix_line) - len(fix_line.lstrip(" \t"))
                # The run at the fix's indentation, else at the next one out, and so on: a
                # continuation line (an argument of a multi-line call) looks like a statement
                # of its own, and only the parse of the run shows that it is not.
                for _ in range(_RUN_TRIES):
                    run, width = self._run(path, lines, line, end_line, width)
                    if run is not None:
                        if _parses_in_run(lines, line, end_line, improved, *run):
                            return FixState.PARSES
                        break  # the run says it does not parse: the whole file decides
                    if width < 0:
                        break
        return fix_state(path, source.text, line, end_line, improved)

    def _run(
        self, path: str, lines: list[str], line: int, end_line: int, width: int
    ) -> tuple[tuple[int, int, str] | None, int]:
        """The trusted run (first row, last row, indentation) around line..end_line indented at
        most `width`, or None; and the indentation to try next (-1: none)."""
        first = line
        while first >= 1:  # up to the statement that holds the fix's first line
            text = lines[first - 1]
            code = text.lstrip(" \t")
            if code and not code.startswith("#"):
                own = len(text) - len(code)
                width = min(width, own)  # the fix is in a statement that starts further out
                if own == width and _STATEMENT_START.match(code):
                    break
            first -= 1
        if first < 1:
            return None, -1
        outer = _outer_width(lines, first, width)
        if first == line and _after_decorator(lines, first):
            return None, outer  # the fix rewrites a decorated `def`/`class` line
        last = end_line
        while last < len(lines):  # down to the line before the next statement here or outside
            code = lines[last].lstrip(" \t")
            if code and not code.startswith("#"):
                own = len(lines[last]) - len(code)
                if own < width or (own == width and _STATEMENT_START.match(code)):
                    break
            last += 1
        if first == 1 and last == len(lines) and not width:
            return None, -1  # the whole file anyway
        indent = lines[first - 1][:width]
        key = (path, first, last)
        trusted = self._trusted.get(key)
        if trusted is None:
            header = _BLOCK_HEADER if width else ""
            trusted = _one_block(header + "\n".join(lines[first - 1 : last]) + "\n", header)
            self._trusted[key] = trusted
        return ((first, last, indent) if trusted else None), outer


def _outer_width(lines: list[str], row: int, width: int) -> int:
    """The indentation of the nearest code line above `row` indented less than `width`
    (0 past the top), or -1 when `width` is already 0."""
    if width == 0:
        return -1
    for text in reversed(lines[: row - 1]):
        code = text.lstrip(" \t")
        if code and not code.startswith("#") and len(text) - len(code) < width:
            return len(text) - len(code)
    return 0


def _parses_in_run(
    lines: list[str], line: int, end_line: int, improved: str, first: int, last: int, indent: str
) -> bool:
    new = NEWLINE.split(improved) if improved else []
    run = lines[first - 1 : line - 1] + new + lines[end_line:last]
    opening = next((text for text in run if text.strip()), "")
    if opening[: len(opening) - len(opening.lstrip(" \t"))] != indent:
        return False  # the run would open its block at another indentation than the file's
    header = _BLOCK_HEADER if indent else ""
    return _one_block(header + "\n".join(run) + "\n", header)


def _one_block(text: str, header: str) -> bool:
    """`text` parses, and under a `header` all of it stays in the header's block: a line the
    fix dedented past the run's indentation would close blocks the run does not have (in the
    file, those of the enclosing statements), so such a run tells nothing about the file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not an error
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return not header or len(tree.body) == 1


def _after_decorator(lines: list[str], row: int) -> bool:
    """Whether the code line above `row` may end a decorator (`@name`, or the closing bracket
    of a multi-line one): `row` is then the `def`/`class` it decorates, not a statement of its
    own."""
    for text in reversed(lines[: row - 1]):
        code = text.strip()
        if code and not code.startswith("#"):
            return code[0] in "@)]}"
    return False


def _title(template: str | None, message: str) -> str:
    if template:
        names = _BACKTICKED.findall(message)
        if "{0}" not in template:
            return template
        if names:
            return template.replace("{0}", names[0])
    first = message.strip().split("\n", 1)[0].rstrip(". ")
    first = first[:1].upper() + first[1:] if first[:1].isalpha() else first
    return shorten(first, _TITLE_LIMIT) or "Analyzer finding"


def _comment(message: str, title: str, advice: str, raw: RawResult, fixed: bool) -> str:
    """The body under the title: the tool's message unless the title already says all of it
    (`Undefined name `x`` twice in a row reads as a glitch), then the advice."""
    message = message.rstrip()
    parts = []
    if _plain(message) != _plain(title):
        parts.append(message + ("" if message.endswith((".", "!", "?")) else "."))
    if advice:
        parts.append(advice)
    if fixed and raw.fix_unsafe:
        parts.append(
            f"The suggested fix is marked unsafe by {raw.tool}: it may change behaviour, so "
            "review it before applying."
        )
    text = " ".join(parts)
    if raw.url:
        text = (text + "\n\n" if text else "") + f"Rule {raw.rule} ({raw.tool}): {raw.url}"
    return text


def _plain(text: str) -> str:
    return " ".join(text.split()).rstrip(".!?…").casefold()


def _redact(message: str, code: str) -> str:
    """Remove secret values from a message; the code itself stays (it is the evidence).

    Only values are masked, never the analyzer's own words: a value is masked where the message
    quotes it, or where it stands as a whole token and does not read as a word (`hunter2`). A
    plain substring match would turn "Possible hardcoded password" into "…hardcoded ***ord"
    for the literal "passw".
    """
    message = _SECRET_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2)}'***'", message)
    values = {value for _, value in _QUOTED.findall(code) if len(value) >= 3}
    if not values:
        return message

    def quoted(m: re.Match[str]) -> str:
        inner = m.group(2)
        for value in values:
            inner = inner.replace(value, "***")
        return f"{m.group(1)}{inner}{m.group(1)}"

    message = _QUOTED.sub(quoted, message)
    for value in values:
        if not value.isalpha():
            message = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", "***", message)
    return message


def _merge(a: _Candidate, b: _Candidate) -> _Candidate:
    """One finding for the same check on the same line from two tools (ruff S602 + bandit B602).

    The more precise report leads (the one with a fix, else ruff's exact range); confidence
    combines as independent evidence: 1 - (1 - a)(1 - b), capped below certainty.
    """
    lead, other = (a, b) if _precedence(a) >= _precedence(b) else (b, a)
    fa, fb = lead.finding, other.finding
    sources = fa.sources + [s for s in fb.sources if s not in fa.sources]
    confidence = min(0.99, 1 - (1 - fa.confidence) * (1 - fb.confidence))
    severity = fa.severity if fa.severity.rank >= fb.severity.rank else fb.severity
    finding = fa.model_copy(
        update={
            "sources": sources,
            "confidence": round(confidence, 3),
            "severity": severity,
            "improved_code": fa.improved_code
            if fa.improved_code is not None
            else (fb.improved_code if (fb.line, fb.end_line) == (fa.line, fa.end_line) else None),
        }
    )
    return _Candidate(finding, lead.family, lead.tool)


def _precedence(c: _Candidate) -> tuple[int, int]:
    return (c.finding.improved_code is not None, c.tool == "ruff")


def _merge_across_lines(
    candidates: list[_Candidate], texts: Mapping[str, SourceText]
) -> list[_Candidate]:
    """Merge the same check reported by two tools on different lines of one statement.

    bandit puts a multi-line call's result on the call's first line, ruff on the offending
    keyword (`subprocess.run(` on line 50, `shell=True` on line 52): one problem, so one
    finding. Two results belong together when they are the same rule family, from different
    tools, not merged yet, and the innermost statement (Python's `ast`) holding one line is the
    one holding the other. A compound statement's header and its body are different statements
    here, so a `with` header and a line in its block never merge. Only files where such a pair
    may exist are parsed; a file that does not parse merges nothing.

    The merged finding keeps the lead's place (`_merge`: the one with a fix, else ruff's), i.e.
    the line ruff points at, not the statement's first line: ruff names the exact expression
    and carries the fix's range, and a ruff finding's id (built from the quoted lines) then
    stays the same whether or not bandit ran on the file (`bandit_scope` leaves most files to
    ruff alone), so a dismissal keyed by that id keeps holding.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(candidates):
        if len(c.finding.sources) == 1:
            groups.setdefault((c.finding.file, c.family), []).append(i)
    spans_by_file: dict[str, list[tuple[int, int]] | None] = {}
    replaced: dict[int, _Candidate] = {}
    dropped: set[int] = set()
    for (file, _), members in groups.items():
        if len({candidates[i].tool for i in members}) < 2:
            continue
        if file not in spans_by_file:
            source = texts.get(file)
            spans_by_file[file] = _statement_spans(source.text) if source is not None else None
        spans = spans_by_file[file]
        if not spans:
            continue
        by_statement: dict[tuple[int, int], list[int]] = {}
        for i in members:
            line = candidates[i].finding.line or 0
            statement = _innermost(spans, line)
            if statement is not None:
                by_statement.setdefault(statement, []).append(i)
        for together in by_statement.values():
            by_tool: dict[str, list[int]] = {}
            for i in sorted(together, key=lambda i: candidates[i].finding.line or 0):
                by_tool.setdefault(candidates[i].tool, []).append(i)
            if len(by_tool) != 2:
                continue  # one tool only (or three: nothing says which two belong together)
            first, second = by_tool.values()
            # In line order, one to one: the n-th result of one tool in the statement with
            # the n-th of the other.
            for a, b in zip(first, second, strict=False):
                replaced[a] = _merge(candidates[a], candidates[b])
                dropped.add(b)
    if not replaced:
        return candidates
    return [replaced.get(i, c) for i, c in enumerate(candidates) if i not in dropped]


def _statement_spans(text: str) -> list[tuple[int, int]] | None:
    """(first line, last line) of every statement in Python source, or None if it does not
    parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not ours to show
            tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
    ]


def _innermost(spans: list[tuple[int, int]], line: int) -> tuple[int, int] | None:
    """The smallest statement span holding `line` (a compound statement's header line is held
    by it, not by a statement of its body)."""
    best: tuple[int, int] | None = None
    for start, end in spans:
        if start <= line <= end and (best is None or end - start < best[1] - best[0]):
            best = (start, end)
    return best
