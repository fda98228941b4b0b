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
    statements = _Statements(texts)
    checker = _FixChecker(statements)
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
    findings = [c.finding for c in _merge_across_lines(list(merged.values()), statements)]
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


_BLOCK_HEADER = "if 1:\n"


@dataclass(frozen=True)
class _Statement:
    first: int  # its first row, decorators included
    last: int
    indent: int  # its column (characters of indentation) when it has its rows to itself, else -1


class _Statements:
    """The statements of each Python file the findings are in, from one `ast.parse` a file (None
    when it does not parse), for the fix verdicts and the cross-line merge. Only the statements
    that hold a row asked about are looked at (a descent from the module's top level), never
    every node of the tree."""

    def __init__(self, texts: Mapping[str, SourceText]) -> None:
        self._texts = texts
        self._trees: dict[str, ast.Module | None] = {}

    def holding(self, path: str, line: int, end_line: int) -> list[_Statement]:
        """The statements that hold rows line..end_line, outermost first."""
        if path not in self._trees:
            source = self._texts.get(path)
            self._trees[path] = _parse(source.text) if source is not None else None
        tree = self._trees[path]
        if tree is None:
            return []
        rows = self._texts[path].rows()
        out: list[_Statement] = []
        body: list[ast.stmt] = tree.body
        while body:
            for node in body:
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


def _statement(node: ast.stmt, rows: list[str]) -> _Statement:
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
    return _Statement(first, last, width if alone else -1)


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


class _FixChecker:
    """Whether each fix keeps its file parsing (`fix_state`), asked of the statement around the
    fix instead of the whole file.

    `fix_state` parses the whole file once per fix: on a 25k-line change of large modules, 150
    ruff fixes (mostly UP031) cost 2.9 s, more than everything else in an offline review. Here
    the file is parsed once, for its statements (`_Statements`), and each fix asks only the
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

    def __init__(self, statements: _Statements) -> None:
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


def _merge_across_lines(candidates: list[_Candidate], statements: _Statements) -> list[_Candidate]:
    """Merge the same check reported by two tools on different lines of one statement.

    bandit puts a multi-line call's result on the call's first line, ruff on the offending
    keyword (flask's conftest.py: B106 on `app.config.update(` at line 50, S106 on
    `SECRET_KEY="test key",` at line 52): one problem, so one finding. (For `shell=True` both
    already point at the call's first line.) Two results belong together when they are the
    same rule family, from different tools, not merged yet, and the innermost statement
    (Python's `ast`) holding one line is the one holding the other. A compound statement's
    header and its body are different statements here, so a `with` header and a line in its
    block never merge. Only files where such a pair may exist are parsed; a file that does not
    parse merges nothing.

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
    replaced: dict[int, _Candidate] = {}
    dropped: set[int] = set()
    for (file, _), members in groups.items():
        if len({candidates[i].tool for i in members}) < 2:
            continue
        by_statement: dict[tuple[int, int], list[int]] = {}
        for i in members:
            line = candidates[i].finding.line or 0
            holding = statements.holding(file, line, line)
            if holding:  # the innermost statement holding the line
                by_statement.setdefault((holding[-1].first, holding[-1].last), []).append(i)
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
