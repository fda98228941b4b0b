"""The neutral summary's action items and agreed problems that point at code, as findings.

Each item with a `file` and quoted `existing_code` becomes a `ModelFinding` and is anchored
exactly like a review's (review/anchoring.py: the quote located in the file's current text,
the fix checked, the id stable). What the debate adds is how sure it is: a point every
debater held is likely, one that a single debater held is contested, and the finding's
comment says which. Its sources name the debaters behind it (`debate:<name>`), read back
through the anonymous labels the summarizer cited.

A consensus point and the action item that fixes it are one problem: the action item (it
carries the change to make) takes the point's supporters. Other repeats go the way every
review's do (review/duplicates.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redline.debate.anonymity import AnonymousPosition, names_for
from redline.debate.schemas import ActionItem, CodeRef, ConsensusPoint, DebateSummaryAnswer
from redline.model import Category, Finding, Severity, normalize_code
from redline.review.anchoring import anchor_finding
from redline.review.duplicates import merge_duplicates
from redline.review.schemas import ModelFinding
from redline.shorten import shorten

AGREED = 0.9  # every debater whose final position was heard held it
MAJORITY = 0.7
CONTESTED = 0.5  # held by fewer than half (one, in a three-way debate)
MAX_TITLE = 200

ReadText = Callable[[str], str | None]


@dataclass
class _Candidate:
    finding: Finding  # anchored; confidence and comment are set once support is known
    detail: str
    support: list[str]  # debater names, in position order


def debate_findings(
    answer: DebateSummaryAnswer, positions: Sequence[AnonymousPosition], read_text: ReadText
) -> list[Finding]:
    """Anchored findings for the answer's code-bound action items and consensus points."""
    heard = len(positions)
    actions = [
        _candidate(a, a.title, a.detail, positions, read_text)
        for a in answer.action_items
        if _points_at_code(a)
    ]
    candidates = [c for c in actions if c is not None]
    for point in answer.consensus:
        if not _points_at_code(point):
            continue
        made = _candidate(point, point.point, point.point, positions, read_text)
        if made is None:
            continue
        same = next((c for c in candidates if _same_code(c.finding, made.finding)), None)
        if same is None:
            candidates.append(made)
        else:
            same.support = [n for n in _in_order(positions) if n in {*same.support, *made.support}]
    findings = [_final(c, heard) for c in candidates]
    return merge_duplicates(findings)[0]


def _points_at_code(ref: CodeRef) -> bool:
    return bool(ref.file and ref.file.strip() and ref.existing_code and ref.existing_code.strip())


def _in_order(positions: Sequence[AnonymousPosition]) -> list[str]:
    return [p.debater.name for p in positions]


def _candidate(
    ref: ActionItem | ConsensusPoint,
    title: str,
    detail: str,
    positions: Sequence[AnonymousPosition],
    read_text: ReadText,
) -> _Candidate | None:
    support = names_for(ref.supported_by, positions)
    if not support:
        # No label the summarizer was given: it would be the summarizer's own finding, and
        # it is neutral by contract (it reports what the positions say).
        return None
    assert ref.file is not None and ref.existing_code is not None
    file = ref.file.strip().removeprefix("./")
    title = " ".join(title.split())
    mf = ModelFinding(
        file=file,
        severity=ref.severity or Severity.MEDIUM,
        category=ref.category or Category.QUALITY,
        title=shorten(title, MAX_TITLE),
        comment=detail.strip() or title,
        existing_code=ref.existing_code,
        improved_code=ref.improved_code,
        # 1.0 here: anchoring scales it down for an approximate place; the debate's own
        # confidence is multiplied in once the support is final.
        confidence=1.0,
    )
    anchored = anchor_finding(mf, read_text(file), source=f"debate:{support[0]}")
    return _Candidate(anchored, detail.strip() or title, support)


def _same_code(a: Finding, b: Finding) -> bool:
    if a.file != b.file:
        return False
    if a.line is not None and b.line is not None:
        a_end, b_end = a.end_line or a.line, b.end_line or b.line
        return a.line <= b_end and b.line <= a_end
    return normalize_code(a.existing_code) == normalize_code(b.existing_code)


def support_note(held: int, heard: int) -> tuple[float, str]:
    """The confidence of a point `held` of `heard` debaters supported, and what the finding
    says about it."""
    if heard >= 2 and held >= heard:
        return AGREED, f"All {heard} debaters agreed."
    if heard >= 2 and held * 2 > heard:
        return MAJORITY, f"Held by {held} of {heard} debaters."
    noun = "debater" if heard == 1 else "debaters"
    return CONTESTED, f"Contested: held by {held} of {heard} {noun}."


def _final(candidate: _Candidate, heard: int) -> Finding:
    confidence, note = support_note(len(candidate.support), heard)
    finding = candidate.finding
    return finding.model_copy(
        update={
            "comment": f"{candidate.detail}\n\n{note}",
            "confidence": round(confidence * finding.confidence, 3),
            "sources": sorted(f"debate:{name}" for name in candidate.support),
        }
    )
