"""A suggested fix never keeps a worse defect (issue 24).

ruff's UP031 rewrites `cur.execute("... '%s'" % name)` to `.format(name)`: an Info finding
whose fix keeps the High SQL injection reported on the same line. Offering it would tell the
user "apply this" on code that stays injectable, in the report, as a SARIF fix, as an editor
quick fix and as a one-click GitHub suggestion. So where findings are finalised (before any
renderer, `review/assemble.py` and the analyzers' early findings in the pipeline), a fix whose
lines overlap a *more severe* finding that the fix does not resolve is withheld: the finding
stays, its improved code goes, and its comment says why there is no fix.

Whether a fix resolves the worse finding cannot be told without re-running its analyzer, so
only two cases count as resolving: the fix *is* the worse finding's own fix (same lines, same
code: one problem reported twice), or it deletes lines that hold the whole worse finding. A
finding of the same severity never withholds another's fix.
"""

from __future__ import annotations

import re

from redline.analyzers.convert import UNSAFE_FIX_NOTE
from redline.enums import FixState
from redline.model import Finding

_UNSAFE = re.compile(r" ?" + re.escape(UNSAFE_FIX_NOTE).replace(re.escape("{tool}"), r"[\w.-]+"))


def _span(f: Finding) -> tuple[int, int] | None:
    if f.line is None:
        return None
    return f.line, max(f.line, f.end_line or f.line)


def _resolves(fix: Finding, worse: Finding) -> bool:
    fix_span, worse_span = _span(fix), _span(worse)
    assert fix_span is not None and worse_span is not None
    if worse.improved_code is not None and (fix_span, fix.improved_code) == (
        worse_span,
        worse.improved_code,
    ):
        return True
    deletes = fix.improved_code is not None and fix.improved_code.strip() == ""
    return deletes and fix_span[0] <= worse_span[0] and worse_span[1] <= fix_span[1]


def worse_finding(fix: Finding, findings: list[Finding]) -> Finding | None:
    """The most severe finding that `fix`'s lines overlap, is more severe than it and that its
    fix does not resolve; None when the fix may be offered."""
    span = _span(fix)
    if fix.improved_code is None or span is None:
        return None
    worse = [
        other
        for other in findings
        if other is not fix
        and other.file == fix.file
        and other.severity.rank > fix.severity.rank
        and (other_span := _span(other)) is not None
        and other_span[0] <= span[1]
        and span[0] <= other_span[1]
        and not _resolves(fix, other)
    ]
    return max(worse, key=lambda f: (f.severity.rank, -(f.line or 0)), default=None)


def _withheld(fix: Finding, worse: Finding) -> Finding:
    reason = (
        f"No fix offered: the suggested change would keep the more severe "
        f"{worse.severity.value} finding on line {worse.line} ({worse.title}); fix that first."
    )
    # Into the first paragraph: the editor's diagnostic and SARIF's message show only that.
    first, sep, rest = _UNSAFE.sub("", fix.comment).partition("\n\n")
    first = first.rstrip()
    comment = f"{first} {reason}" if first else reason
    return fix.model_copy(
        update={
            "improved_code": None,
            "fix": FixState.UNCHECKED,
            "comment": comment + sep + rest,
        }
    )


def withhold_worse_fixes(findings: list[Finding]) -> list[Finding]:
    """`findings` in the same order, each fix that would keep a worse defect withheld (see the
    module docstring)."""
    out: list[Finding] = []
    for finding in findings:
        worse = worse_finding(finding, findings)
        out.append(finding if worse is None else _withheld(finding, worse))
    return out
