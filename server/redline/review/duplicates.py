"""Merge findings that report the same problem twice, before they are verified and shown.

Models repeat themselves: the same finding twice in one answer, or once per overlapping unit.
Two findings are *the same problem* when they are in the same file, their lines overlap (or
both are unanchored and quote the same code), they have the same category, and their titles
say the same thing: equal once whitespace and case are ignored, or sharing at least
`SAME_TITLE` of their significant words (Jaccard). Two analyzer findings (both with a rule id)
are never merged here: an analyzer reports each rule once per place, and two rules on one line
(`os` and `sys` unused) are two problems.

The kept finding is the better-sourced one (an analyzer's id survives re-reviews, so a fused
finding wins), then the more confident; it takes the higher severity and confidence of the two
and the sources of both. A kept finding without improved code takes the other's together with
its range and quoted code (a fix is only valid for the lines it was written against).
"""

from __future__ import annotations

import re

from redline.model import Finding
from redline.review.fusion import borrowed_fix

SAME_TITLE = 0.6
_WORD = re.compile(r"[a-z0-9_]{3,}")
_STOP = frozenset({"the", "and", "for", "with", "this", "that", "from", "are", "not", "can"})


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _same_place(a: Finding, b: Finding) -> bool:
    if a.file != b.file:
        return False
    if a.line is None or b.line is None:
        return a.line is None and b.line is None and a.existing_code == b.existing_code
    a_end, b_end = max(a.line, a.end_line or a.line), max(b.line, b.end_line or b.line)
    return a.line <= b_end and b.line <= a_end


def _same_title(a: str, b: str) -> bool:
    if " ".join(a.lower().split()) == " ".join(b.lower().split()):
        return True
    wa, wb = _words(a), _words(b)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= SAME_TITLE


def same_problem(a: Finding, b: Finding) -> bool:
    if a.rule_id and b.rule_id:
        return False
    return a.category is b.category and _same_place(a, b) and _same_title(a.title, b.title)


def _merge(kept: Finding, other: Finding) -> Finding:
    update: dict[str, object] = {
        "sources": list(dict.fromkeys([*kept.sources, *other.sources])),
        "severity": max(kept.severity, other.severity, key=lambda s: s.rank),
        "confidence": max(kept.confidence, other.confidence),
    }
    update.update(borrowed_fix(kept, other))
    return kept.model_copy(update=update)


def _rank(f: Finding) -> tuple[bool, int, float]:
    return (f.rule_id is not None, len(f.sources), f.confidence)


def merge_duplicates(findings: list[Finding]) -> tuple[list[Finding], int]:
    """`findings` with each problem once (in the order of its first report), and how many
    duplicates were merged away."""
    out: list[Finding] = []
    merged = 0
    for finding in findings:
        for i, kept in enumerate(out):
            if same_problem(kept, finding):
                better = _rank(kept) >= _rank(finding)
                out[i] = _merge(kept, finding) if better else _merge(finding, kept)
                merged += 1
                break
        else:
            out.append(finding)
    return out, merged
