"""Raw analyzer results → Findings: rule policy, changed-line filter, fixes, merging, redaction.

Pure functions: no processes, no files. The runner feeds them what the tools printed.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from redline.analyzers.base import RawResult
from redline.analyzers.fixes import SourceText, apply_fix
from redline.analyzers.rules import SECRET_RULES, RuleInfo, family, is_noise, rule_info
from redline.analyzers.statements import FixChecker, Statements
from redline.analyzers.wording import body_of, title_of
from redline.model import AnchorState, Finding, FixState, finding_id

_CWE_TAG = re.compile(r"\s*\((CWE-\d+)\)\s*$")
_QUOTED = re.compile(r"""(['"])(.*?)\1""")
# bandit: "Possible hardcoded password: 'hunter2'"; keep the label, drop the value.
_SECRET_VALUE = re.compile(r"""(password|secret|token|key)(\s*:\s*)(['"]).*?\3""", re.IGNORECASE)


@dataclass
class Candidate:
    """One result as a finding of its own, before the merge across tools."""

    finding: Finding
    family: str
    tool: str
    line: int  # the result's own line (the finding's may have moved to its fix's first row)


def to_findings(
    results: Iterable[RawResult],
    texts: Mapping[str, SourceText],
    changed_lines: Mapping[str, set[int]],
) -> list[Finding]:
    """Findings for the results that touch a changed line, merged across tools."""
    conversion = Conversion(texts, changed_lines)
    return conversion.findings([conversion.candidates(results)])


class Conversion:
    """Results → findings in two steps, so that the costly one runs while other tools still do.

    `candidates` turns one tool's results into findings of their own (the fix and its parse
    verdict, the expensive part), as soon as that tool is done; `findings` then merges them
    across tools, given every tool's candidates in the order the tools are listed. The findings
    are those of one `to_findings` over all the results in that order: each candidate depends
    on its own result alone (and on the files' statements, parsed once and kept here), and the
    merge sees the candidates in the same order.
    """

    def __init__(self, texts: Mapping[str, SourceText], changed_lines: Mapping[str, set[int]]):
        self._texts = texts
        self._changed = changed_lines
        self._statements = Statements(texts)
        self._checker = FixChecker(self._statements)

    def candidates(self, results: Iterable[RawResult]) -> list[Candidate]:
        """One tool's results that touch a changed line, each a finding of its own."""
        out: list[Candidate] = []
        for raw in results:
            if is_noise(raw.tool, raw.rule):
                continue
            changed = self._changed.get(raw.file)
            if not changed or not _touches(raw.line, raw.end_line, changed):
                continue
            # Only now: a file's text is decoded and indexed on its first lookup.
            source = self._texts.get(raw.file)
            if source is None:
                continue
            finding = _finding(raw, source, self._checker)
            out.append(Candidate(finding, family(raw.tool, raw.rule), raw.tool, raw.line))
        return out

    def release(self, keep: Collection[str]) -> None:
        """Free what was parsed for the files not in `keep` (see `Statements.release`)."""
        self._statements.release(keep)

    def findings(self, candidates: Iterable[list[Candidate]]) -> list[Finding]:
        """Every tool's candidates (in the tools' order) merged across tools, sorted."""
        merged: dict[tuple[str, str, int], Candidate] = {}
        for candidate in (c for tool in candidates for c in tool):
            key = (candidate.finding.file, candidate.family, candidate.line)
            existing = merged.get(key)
            if existing is None:
                merged[key] = candidate
            elif existing.tool != candidate.tool:  # the same tool twice is a duplicate
                merged[key] = _merge(existing, candidate)
        findings = [c.finding for c in _merge_across_lines(list(merged.values()), self._statements)]
        findings.sort(key=lambda f: (f.file, f.line or 0, -f.severity.rank, f.rule_id or ""))
        return findings


# Said under an analyzer's fix that its tool marks unsafe; review/fix_guard.py removes it with
# the fix when the fix is withheld.
UNSAFE_FIX_NOTE = (
    "The suggested fix is marked unsafe by {tool}: it may change behaviour, so review it "
    "before applying."
)


def _touches(line: int, end_line: int, changed: set[int]) -> bool:
    if end_line - line < len(changed):
        return any(n in changed for n in range(line, end_line + 1))
    return any(line <= n <= end_line for n in changed)


def _finding(raw: RawResult, source: SourceText, checker: FixChecker) -> Finding:
    info = rule_info(raw.tool, raw.rule, raw.message, raw.severity, raw.confidence, raw.security)
    key = family(raw.tool, raw.rule)
    line, end_line = raw.line, min(max(raw.end_line, raw.line), max(source.line_count, raw.line))
    existing = source.lines(line, end_line)
    improved: str | None = None
    fix = apply_fix(source, line, end_line, raw.edits) if raw.edits else None
    focus: tuple[int | None, int | None] = (None, None)
    if fix is not None and (fix.line, fix.end_line) != (line, end_line):
        focus = (line, end_line)  # the fix widened the range: the problem's own lines
    if fix is not None:
        line, end_line, existing, improved = (
            fix.line,
            fix.end_line,
            fix.existing_code,
            fix.improved_code,
        )
    message = _redact(raw.message, existing) if key in SECRET_RULES else _redact(raw.message, "")
    message, tag = _split_tag(message)
    title = title_of(info.title, message)
    comment = _comment(message, title, info, raw, fix is not None, tag)
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
        focus_line=focus[0],
        focus_end_line=focus[1],
        # The same parse verdict as a model's fix: an analyzer's edit can break code too.
        fix=FixState.UNCHECKED
        if improved is None
        else checker.verdict(raw.file, source, line, end_line, improved),
    )


def _split_tag(message: str) -> tuple[str, str]:
    """The message without the weakness class bandit's results carry ("… (CWE-20)"), and that
    class: it names the rule, so it goes with the rule's line, not into the sentences."""
    match = _CWE_TAG.search(message)
    if match is None:
        return message, ""
    return message[: match.start()], match.group(1)


def _comment(
    message: str, title: str, info: RuleInfo, raw: RawResult, fixed: bool, tag: str = ""
) -> str:
    """The body under the title: what of the tool's message the title and the advice do not
    already say (wording.py), then the advice; the rule's line last."""
    parts = body_of(info.title, message, title, info.advice)
    if info.advice:
        parts.append(info.advice)
    if fixed and raw.fix_unsafe:
        parts.append(UNSAFE_FIX_NOTE.format(tool=raw.tool))
    text = " ".join(parts)
    named = f"{raw.tool}, {tag}" if tag else raw.tool
    if raw.url:
        text = (text + "\n\n" if text else "") + f"Rule {raw.rule} ({named}): {raw.url}"
    elif tag:
        text = (text + "\n\n" if text else "") + f"Rule {raw.rule} ({named})"
    return text


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


def _merge(a: Candidate, b: Candidate) -> Candidate:
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
    return Candidate(finding, lead.family, lead.tool, lead.line)


def _precedence(c: Candidate) -> tuple[int, int]:
    return (c.finding.improved_code is not None, c.tool == "ruff")


def _merge_across_lines(candidates: list[Candidate], statements: Statements) -> list[Candidate]:
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
    replaced: dict[int, Candidate] = {}
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
