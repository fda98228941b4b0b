"""Learnings proposed from dismissals: what the team dismissed again and again.

`.redline/dismissed.toml` lists each dismissal with its file, title, reason and (since
learnings) the analyzer rule. The same rule dismissed in several places is a preference the
team keeps stating one finding at a time ("we allow assert in tests"); `redline learn
--from-dismissals` proposes it as one learning — the rule, scoped to where it was dismissed,
with the reason given most often — and adds it only when the user accepts it (`--accept`).
A dismissal without a rule (a model's finding, or one written before rules were recorded) is
grouped by its title and proposed as guidance only (no rule to drop).

Pure: dismissals in, proposals out (no file read here).
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from redline.memory.learnings import Learning, LearningError, make_learning
from redline.model import Finding
from redline.store.dismissals import Dismissal

MIN_TIMES = 3  # dismissals of one rule before it is proposed
MAX_PATHS = 5


@dataclass(frozen=True)
class Proposal:
    learning: Learning
    times: int  # dismissals behind it
    files: int  # distinct files they were in
    what: str  # the rule or the title they share


def propose(
    dismissals: Iterable[Dismissal], *, min_times: int = MIN_TIMES, known: Sequence[Learning] = ()
) -> list[Proposal]:
    """One proposal per rule (or title) dismissed at least `min_times` times, most dismissed
    first; none for what a known learning already says (same id)."""
    groups: dict[tuple[str, str], list[Dismissal]] = {}
    for d in dismissals:
        key = ("rule", d.rule) if d.rule else ("title", d.title.strip())
        if key[1]:
            groups.setdefault(key, []).append(d)
    known_ids = {k.id for k in known}
    out: list[Proposal] = []
    for (kind, what), entries in groups.items():
        if len(entries) < min_times:
            continue
        learning = _learning(kind, what, entries)
        if learning is None or learning.id in known_ids:
            continue
        out.append(Proposal(learning, len(entries), len({d.file for d in entries}), what))
    out.sort(key=lambda p: (-p.times, p.what))
    return out


def from_dismissal(
    dismissal: Dismissal, text: str | None, paths: Sequence[str], language: str | None
) -> Learning:
    """The learning one dismissal's reason states: its text (or `text`), its rule, scoped to
    `paths` or else the dismissal's file."""
    body = text if text is not None else dismissal.reason
    if not body.strip():
        raise LearningError(
            f"dismissal {dismissal.id} has no reason to learn from: give the learning's text"
        )
    return make_learning(
        body,
        paths or ([dismissal.file] if dismissal.file else []),
        language,
        [dismissal.rule] if dismissal.rule else [],
    )


def from_findings(findings: Sequence[Finding], reason: str, paths: Sequence[str] = ()) -> Learning:
    """The learning a dismissal in the editor states when the user asks for one (`learn` on
    `redline.dismiss`): the reason as its text, the findings' analyzer rules, scoped to `paths`
    or else to the findings' files."""
    if not reason.strip():
        raise LearningError("a dismissal becomes a learning only with a reason: give one")
    rules = [f.rule_id for f in findings if f.rule_id]
    files = sorted({f.file for f in findings})
    return make_learning(reason, paths or files, None, rules)


def _learning(kind: str, what: str, entries: list[Dismissal]) -> Learning | None:
    reasons = Counter(d.reason.strip() for d in entries if d.reason.strip())
    text = reasons.most_common(1)[0][0] if reasons else f"{what}: accepted here (dismissed)"
    try:
        return make_learning(
            text, scope_globs([d.file for d in entries]), None, [what] if kind == "rule" else []
        )
    except LearningError:
        return None  # a title or rule that is not a valid learning: nothing to propose


def scope_globs(files: Sequence[str]) -> list[str]:
    """Globs that cover `files` and not much more: their deepest common directory (`tests/**`)
    when they share one, else each file's directory (at most MAX_PATHS), else [] (the whole
    repository)."""
    dirs = sorted({posixpath.dirname(f) for f in files if f})
    if not dirs:
        return []
    common = posixpath.commonpath(dirs) if all(dirs) else ""
    if common:
        return [f"{common}/**"]
    if len(dirs) > MAX_PATHS:
        return []
    return [f"{d}/**" if d else posixpath.basename(f) for d, f in _first_file(dirs, files)]


def _first_file(dirs: list[str], files: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for d in dirs:
        if d:
            out.append((d, ""))
        else:  # files at the top: each named
            out += [("", f) for f in sorted({f for f in files if "/" not in f})]
    return out
