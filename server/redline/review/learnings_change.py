"""An edit to the committed learnings, reported as findings on the edited learnings.

A review of commits reads `.redline/learnings.md` from its base (review/learnings_use.py), so
the change's own edit does not apply to the change; once merged it applies to every later
review. A person should look at such an edit, as at a settings edit (review/settings_change.py
— same category Security, same rule for one's own uncommitted work), source
`redline:learnings`:

- High: a learning the change adds or changes names analyzer rules — once merged, those
  findings are dropped inside its scope without anyone seeing them.
- Medium: a learning the change adds or changes without rules — later model reviews of the
  files in its scope are told what the team prefers, which can make them report less.
- Low: the change only removes learnings, or leaves lines that are not read (a typo in a
  scope line leaves that learning out).

Added after the model stages with the settings findings, so no model answer drops them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from redline.git import INDEX_REV, UNAVAILABLE_REV
from redline.git.repo import Repo
from redline.git.scopes import ScopeDiff
from redline.memory.learning_files import LearningFile, parse_bytes
from redline.memory.learnings import COMMITTED_FILE, Learning
from redline.model import Category, Finding, Severity, finding_id
from redline.review.ground import Ground, Reader, revision_reader

SOURCE: Final = "redline:learnings"


def learnings_findings(scope: ScopeDiff, ground: Ground, changed: Iterable[str]) -> list[Finding]:
    """Findings for the change's edits to `.redline/learnings.md` (`changed`: every path the
    change touches)."""
    if COMMITTED_FILE not in set(changed):
        return []
    own = ground.kind == "worktree"
    if scope.new_rev == UNAVAILABLE_REV or scope.old_rev == UNAVAILABLE_REV:
        return [_cap(_not_compared(), own)]
    old = _side(_reader(scope, ground, scope.old_rev, old=True))
    new_text = _text(_reader(scope, ground, scope.new_rev, old=False))
    new = parse_bytes(new_text.encode("utf-8") if new_text else None, "committed", "new")
    before = {k.id: k for k in old.learnings}
    findings = []
    for item in new.learnings:
        if before.get(item.id) == item:
            continue
        findings.append(_added(item, new_text, changed_id=item.id in before))
    after = {k.id for k in new.learnings}
    removed = [k for k in old.learnings if k.id not in after]
    if removed and not findings:
        ids = ", ".join(k.id for k in removed[:8]) + (" …" if len(removed) > 8 else "")
        findings.append(
            _finding(
                new_text, None, Severity.LOW,
                f"This change removes learnings: {ids}",
                f"Later reviews no longer apply {ids} once this change is merged: they see "
                "more, not less.",
                "removed",
            )
        )  # fmt: skip
    for problem in new.problems[:5]:
        if problem in old.problems:
            continue
        line = _problem_line(problem)
        findings.append(
            _finding(
                new_text, line, Severity.LOW,
                f"A learning in {COMMITTED_FILE} cannot be read",
                f"{problem}. Every other learning still applies; fix the line "
                "(`redline learn --list` shows what is read).",
                f"broken:{line}",
            )
        )  # fmt: skip
    return [_cap(f, own) for f in findings]


def _added(item: Learning, text: str, *, changed_id: bool) -> Finding:
    verb = "changes" if changed_id else "adds"
    line = _learning_line(text, item)
    if item.rules:
        rules = ", ".join(item.rules)
        return _finding(
            text, line, Severity.HIGH,
            f"This change {verb} a learning that drops {rules} findings ({item.scope})",
            f"Learning {item.id} ({item.scope}) drops the analyzers' {rules} findings: once "
            "this change is merged, later reviews hide them inside that scope without anyone "
            "seeing them. This review read the learnings of its base, so the change itself "
            "was reviewed without the edit. Make sure the team agrees, and keep the scope "
            f"narrow. The learning says: {item.text}",
            f"rules:{item.id}",
        )  # fmt: skip
    return _finding(
        text, line, Severity.MEDIUM,
        f"This change {verb} a learning the model is shown ({item.scope})",
        f"Learning {item.id} ({item.scope}) will be shown to the model reviewing files in that "
        "scope once this change is merged, as this team's preference — it can make later "
        "reviews report less there. This review read the learnings of its base. The learning "
        f"says: {item.text}",
        f"text:{item.id}",
    )  # fmt: skip


def _reader(scope: ScopeDiff, ground: Ground, rev: str | None, *, old: bool) -> Reader:
    if rev is None:
        return (lambda _name: None) if old else ground.read  # no base / the work tree
    if rev == INDEX_REV:
        return scope.read_new
    return revision_reader(Repo(scope.repo_root, scope.runner), rev)


def _text(read: Reader) -> str:
    try:
        data = read(COMMITTED_FILE)
    except Exception:  # a link, an unreadable blob: nothing to compare (reported as a problem)
        return ""
    return (data or b"").decode("utf-8", errors="replace")


def _side(read: Reader) -> LearningFile:
    text = _text(read)
    return parse_bytes(text.encode("utf-8") if text else None, "committed", "old")


def _learning_line(text: str, item: Learning) -> int | None:
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if item.id in line:
            # The id is on the scope line; the bullet above it is the learning's first line.
            return number - 1 if number > 1 and lines[number - 2].lstrip()[:1] in "-*" else number
    head = item.text[:40]
    return next((n for n, line in enumerate(lines, 1) if head and head in line), None)


def _problem_line(problem: str) -> int | None:
    word = problem.removeprefix("line ").split(":", 1)[0]
    return int(word) if word.isdigit() else None


def _finding(
    text: str, line: int | None, severity: Severity, title: str, comment: str, kind: str
) -> Finding:
    lines = text.split("\n")
    code = lines[line - 1] if line and 0 < line <= len(lines) else ""
    return Finding(
        id=finding_id(COMMITTED_FILE, code, Category.SECURITY, f"{SOURCE}:{kind}"),
        file=COMMITTED_FILE,
        line=line if code else None,
        end_line=line if code else None,
        severity=severity,
        category=Category.SECURITY,
        title=title[:200],
        comment=comment,
        existing_code=code,
        confidence=1.0,
        sources=[SOURCE],
    )


def _cap(finding: Finding, own: bool) -> Finding:
    """Uncommitted or staged: the user's own edit, applied to this review already (Low at
    most, as a settings edit: a pre-commit hook must let the user commit it)."""
    if not own:
        return finding
    severity = Severity.LOW if finding.severity.rank >= Severity.LOW.rank else finding.severity
    comment = (
        f"{finding.comment} (An uncommitted or staged edit is yours and applies to this review "
        "already; a review of the commit reports it against its base.)"
    )
    return finding.model_copy(update={"severity": severity, "comment": comment})


def _not_compared() -> Finding:
    return _finding(
        "", None, Severity.HIGH,
        f"This change edits {COMMITTED_FILE}, which could not be compared",
        "The change touches the team's learnings, but its base or head commit is not in the "
        "local repository, so the edit could not be read. This review used only your private "
        "learnings. Fetch the commits and review again to see what the edit does.",
        "not-compared",
    )  # fmt: skip
