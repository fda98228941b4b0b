"""Fuse model findings with static-analyzer findings: agreement is evidence.

A model finding and an analyzer finding are *the same problem* when they are in the same file,
their line ranges overlap, and they talk about the same thing:

- the model's title/comment names the analyzer's rule (`B602`, `S602`) or uses one of the
  rule family's keywords (`_TOPICS`: "shell" for S602, "mutable default" for B006, ...), or
- for rules without keywords, both have the same category and share at least two significant
  words between the analyzer's title and the model's title and comment.

Sharing a line and a category alone is not enough: merging two different problems would lose
one of them, while leaving a duplicate costs only a second squiggle.

Pairs are formed one-to-one, best match first; then an analyzer finding left over that a fused
model finding names by rule or topic, on its lines, is absorbed into it (a bare `except: pass`
is ruff's E722 and S110: one defect, not two findings on one line). A fused finding keeps:

- the model's title, comment and category (they explain the problem in this change's terms);
- the higher severity of the two;
- confidence 1 - (1 - a)(1 - b), capped at 0.99 (independent evidence);
- sources from both, the analyzer's `rule_id`;
- the analyzer's **id**: analyzers are deterministic and models are not, so the analyzer's id
  is the one that survives a re-review in which the model misses the problem (dismissals are
  keyed by id);
- the model's `improved_code` with the model's range, or — when the model proposed none — the
  analyzer's fix *together with the analyzer's range and existing code*, because a fix is only
  valid for the exact lines it was computed against.

Analyzer-only findings in a file a model reviewed: strong rules (confidence ≥
`STRONG_CONFIDENCE`, the per-rule confidence from `analyzers/rules.py`) are kept as they are;
weak ones are downgraded (confidence × 0.6, severity one step lower, not below Info), because a
reviewer that read the same code did not think it worth a mention. In files no model reviewed
(`reviewed_files`), nothing is downgraded. Model-only findings are kept as they are; unanchored
ones never merge (they have no line).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from redline.analyzers.rules import family
from redline.model import Finding, Severity

STRONG_CONFIDENCE = 0.85
WEAK_FACTOR = 0.6
CONFIDENCE_CAP = 0.99
_BY_RANK = {s.rank: s for s in Severity}

# Words a model uses when it reports the same thing a rule family checks. Lower case; each
# matches at the start of a word in the model's title + comment ("hang" matches "hangs", not
# "change").
_TOPICS: dict[str, tuple[str, ...]] = {
    "S602": ("shell", "command injection"),
    "S604": ("shell", "command injection"),
    "S605": ("shell", "command injection", "os.system", "os.popen"),
    "S608": ("sql",),
    "S307": ("eval",),
    "S102": ("exec",),
    "S301": ("pickle", "deserializ"),
    "S506": ("yaml",),
    "S501": ("verify", "certificate", "tls", "ssl"),
    "S105": ("password", "secret", "credential", "hardcoded", "hard-coded"),
    "S106": ("password", "secret", "credential", "hardcoded", "hard-coded"),
    "S107": ("password", "secret", "credential", "hardcoded", "hard-coded"),
    "S108": ("tempfile", "temporary", "tmp"),
    "S110": ("swallow", "silently", "ignored exception", "except"),
    "S113": ("timeout", "hang"),
    "S104": ("0.0.0.0", "all interfaces", "bind"),
    "S324": ("md5", "sha1", "weak hash", "insecure hash"),
    "B006": ("mutable default", "default argument", "shared between calls"),
    "B008": ("default argument", "definition time"),
    "B023": ("closure", "loop variable", "late binding", "late-binding"),
    "B904": ("raise from", "exception chain", "chain the exception", "from err"),
    "E722": ("bare except", "except:", "catches everything", "keyboardinterrupt"),
    "F401": ("unused import",),
    "F811": ("redefin",),
    "F821": ("undefined", "nameerror", "not defined"),
    "F841": ("unused variable", "never used", "assigned but"),
    "F632": ("identity", "`is`"),
    "RUF006": ("create_task", "garbage", "task reference", "weak reference"),
}

_START = r"(?<![a-z0-9_])"
_WORD = re.compile(r"[a-z][a-z0-9_]{3,}")
# fmt: off
_STOP = frozenset(
    {
        "this", "that", "with", "from", "have", "will", "when", "code", "line", "lines",
        "function", "value", "values", "should", "could", "would", "which", "there", "their",
        "where", "used", "uses", "using", "call", "calls", "called", "make", "makes", "does",
        "into", "only", "also", "more", "than", "then", "here", "them", "they", "these",
        "those", "change", "changes",
    }
)
# fmt: on


def _span(f: Finding) -> tuple[int, int] | None:
    if f.line is None:
        return None
    return f.line, f.end_line if f.end_line is not None and f.end_line >= f.line else f.line


def _overlap(a: Finding, b: Finding) -> int:
    """Number of shared lines (0 when disjoint or either is unanchored)."""
    sa, sb = _span(a), _span(b)
    if sa is None or sb is None:
        return 0
    return max(0, min(sa[1], sb[1]) - max(sa[0], sb[0]) + 1)


def _rule_family(f: Finding) -> str | None:
    if not f.rule_id:
        return None
    tool = f.sources[0].split(":", 1)[0] if f.sources else ""
    return family(tool, f.rule_id)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _compatibility(model: Finding, analyzer: Finding) -> int:
    """2 = names the rule or its topic, 1 = same category and shared words, 0 = unrelated."""
    # Backticks dropped: a model that titles in ruff's style ("Bare `except`") names the topic.
    text = f"{model.title}\n{model.comment}".lower().replace("`", "")
    fam = _rule_family(analyzer)
    codes = {c.lower() for c in (analyzer.rule_id, fam) if c}
    if any(re.search(rf"\b{re.escape(c)}\b", text) for c in codes):
        return 2
    topics = _TOPICS.get(fam or "")
    if topics is not None:
        return 2 if any(re.search(_START + re.escape(t), text) for t in topics) else 0
    if model.category is analyzer.category and len(_words(analyzer.title) & _words(text)) >= 2:
        return 1
    return 0


def _combine(a: float, b: float) -> float:
    return round(min(CONFIDENCE_CAP, 1 - (1 - a) * (1 - b)), 3)


def _merge(model: Finding, analyzer: Finding) -> Finding:
    sources = list(dict.fromkeys([*model.sources, *analyzer.sources]))
    severity = (
        model.severity if model.severity.rank >= analyzer.severity.rank else analyzer.severity
    )
    update: dict[str, object] = {
        "id": analyzer.id,
        "severity": severity,
        "confidence": _combine(model.confidence, analyzer.confidence),
        "sources": sources,
        "rule_id": analyzer.rule_id,
    }
    update.update(borrowed_fix(model, analyzer))
    return model.model_copy(update=update)


def _absorb(fused: Finding, analyzer: Finding) -> Finding:
    """`fused` (a model finding already merged with one analyzer finding) as the evidence of a
    second analyzer finding on its lines that it names: its sources, the higher severity,
    combined confidence, and its fix when `fused` has none. Id and rule stay the first's."""
    update: dict[str, object] = {
        "sources": list(dict.fromkeys([*fused.sources, *analyzer.sources])),
        "severity": max(fused.severity, analyzer.severity, key=lambda s: s.rank),
        "confidence": _combine(fused.confidence, analyzer.confidence),
    }
    update.update(borrowed_fix(fused, analyzer))
    return fused.model_copy(update=update)


def borrowed_fix(kept: Finding, other: Finding) -> dict[str, object]:
    """When two findings become one and only `other` carries a fix: its fix with the place and
    quote the fix replaces (they go together), as a `model_copy` update; else nothing."""
    if kept.improved_code is not None or other.improved_code is None:
        return {}
    return {
        "line": other.line,
        "end_line": other.end_line,
        "existing_code": other.existing_code,
        "improved_code": other.improved_code,
        "anchor": other.anchor,
        "fix": other.fix,
        "focus_line": other.focus_line,
        "focus_end_line": other.focus_end_line,
    }


def _downgrade(f: Finding) -> Finding:
    lower = _BY_RANK[max(0, f.severity.rank - 1)]
    return f.model_copy(
        update={"confidence": round(f.confidence * WEAK_FACTOR, 3), "severity": lower}
    )


def sort_key(f: Finding) -> tuple[str, bool, int, int, str]:
    """File, then anchored findings by line, unanchored last, then most severe first."""
    return (f.file, f.line is None, f.line or 0, -f.severity.rank, f.id)


def fuse(
    model_findings: list[Finding],
    analyzer_findings: list[Finding],
    *,
    reviewed_files: Collection[str] | None = None,
) -> list[Finding]:
    """One list of findings from both kinds of reviewer (see the module docstring).

    `reviewed_files` are the files a model actually reviewed; None means every file. Pass an
    empty collection when no model ran (the offline pipeline), so analyzer findings keep their
    own confidence.
    """
    pairs: list[tuple[tuple[int, int, float, int, int], int, int]] = []
    pairs_by_topic: dict[tuple[int, int], int] = {}
    for mi, m in enumerate(model_findings):
        if m.line is None:
            continue
        for ai, a in enumerate(analyzer_findings):
            if a.file != m.file:
                continue
            overlap = _overlap(m, a)
            if not overlap:
                continue
            compat = _compatibility(m, a)
            pairs_by_topic[(mi, ai)] = compat
            if compat:
                # Best first: stronger topical match, more shared lines, more confident model.
                pairs.append(((-compat, -overlap, -m.confidence, mi, ai), mi, ai))
    pairs.sort()
    used_m: set[int] = set()
    used_a: set[int] = set()
    fused: dict[int, Finding] = {}
    for _, mi, ai in pairs:
        if mi in used_m or ai in used_a:
            continue
        used_m.add(mi)
        used_a.add(ai)
        fused[mi] = _merge(model_findings[mi], analyzer_findings[ai])
    # A model finding that names what a second analyzer finding on its lines checks is that
    # finding too (a bare `except: pass` is E722 and S110, and "Bare except silently swallows
    # errors" names both): absorbed, or the report shows the defect twice on one line.
    for _, mi, ai in pairs:
        if ai not in used_a and mi in fused and pairs_by_topic.get((mi, ai)) == 2:
            used_a.add(ai)
            fused[mi] = _absorb(fused[mi], analyzer_findings[ai])
    out: list[Finding] = list(fused.values())
    out.extend(m for mi, m in enumerate(model_findings) if mi not in used_m)
    out.extend(
        _analyzer_only(a, reviewed_files)
        for ai, a in enumerate(analyzer_findings)
        if ai not in used_a
    )
    return sorted(out, key=sort_key)


def _analyzer_only(f: Finding, reviewed_files: Collection[str] | None) -> Finding:
    if reviewed_files is not None and f.file not in reviewed_files:
        return f
    return f if f.confidence >= STRONG_CONFIDENCE else _downgrade(f)
