"""Generated reviews for the renderers' property tests (hypothesis): one strategy module, so
every renderer — terminal, Markdown, JSON, json-simple, SARIF, the posted comments, the language
server's diagnostics, hovers and sidebar — is tried on the same kinds of review.

A generated finding may be of every severity, category, source and verification verdict; its
fix applicable, not parsing, not in the file, a deletion or absent; its location exact,
relocated, approximate or not found; its title, comment, code and path in several scripts
(Hebrew and Arabic right to left), with Markdown, HTML, mentions, escape sequences and bidi
overrides. Reviews run from empty to a few dozen findings; `many_findings` builds thousands.

Each finding's title starts with its own marker (`RLT0007X`), a word no sanitizer, wrapper or
escape changes: a test finds every finding in any output by it (`marker(i)`), whatever the
random text around it became.
"""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import strategies as st

from redline.model import (
    AnalyzerRun,
    AnchorState,
    Category,
    Coverage,
    DiffStats,
    Finding,
    FixState,
    Review,
    Severity,
    SkippedFile,
    Verification,
)

# Letters of several scripts (Hebrew and Arabic right to left), digits, punctuation, spaces,
# and what hostile text carries: Markdown, HTML, mentions, quick actions, fences, escape
# sequences, C1 and bidi controls.
_WORDS = st.sampled_from(
    [
        "שלום", "مرحبا", "中文", "éü", "emoji🙂", "\u202eevil", "\u2066iso\u2069",
        "\x1b[2J", "\x1b]52;c;eA==\x07", "\x9b31m", "\x07", "*bold*", "_it_", "`code`",
        "```", "~~~", "<img src=x onerror=alert(1)>", "<b>", "</details>", "[x](javascript:y)",
        "![i](http://e/x.png)", "@alice", "@org/team", "owner/repo#1", "#2", "!3", "/merge",
        "| cell |", "\\", "&amp;", "{0}", "%s", "$5", "->", "—", "\t", "\r\n", "\n\n",
        "# heading", "> quote", "- item", "1.", "\u200b", "\ufeff",
    ]
)  # fmt: skip
_FREE = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "M", "N", "P", "S", "Zs")),
    max_size=12,
)
TEXT = st.lists(st.one_of(_WORDS, _FREE), max_size=6).map(" ".join)
_CODE_LINE = st.one_of(
    st.sampled_from(["x = 1", "    return f(x)", "", "```", "````", "\tpass", "print('ש')"]),
    TEXT,
)
CODE = st.lists(_CODE_LINE, min_size=1, max_size=4).map("\n".join)

# Path segments: letters of several scripts, spaces and the characters a URI must escape; never
# "." or "..", never a slash or a NUL inside (a file of that name can be written to disk).
_SEGMENT = st.text(
    alphabet=st.sampled_from("abcXYZ019_-. éü中שلم#%?&+ \u202e"), min_size=1, max_size=12
).filter(lambda s: s.strip(". ") != "" and s not in (".", ".."))
PATH = st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join)

SOURCES = [
    "ruff:F401", "ruff:UP031", "bandit:B602", "model:openai/gpt-4o-mini", "model:ollama/qwen",
    "redline:deleted-symbols", "redline:settings", "custom:rule-שלום",
]  # fmt: skip
VERDICTS = [None, "CORRECT", "INCORRECT", "PARTIALLY_CORRECT", "unknown verdict"]
# (fix state, improved code): applicable, a deletion, does not parse, not in the file, none.
_FIXES = st.one_of(
    st.tuples(st.sampled_from([FixState.PARSES, FixState.UNCHECKED]), CODE),
    st.tuples(st.sampled_from([FixState.PARSES, FixState.UNCHECKED]), st.just("")),
    st.tuples(st.sampled_from([FixState.DOES_NOT_PARSE, FixState.NOT_IN_FILE]), CODE),
    st.tuples(st.sampled_from(list(FixState)), st.none()),
)


def marker(index: int) -> str:
    """The word that starts finding `index`'s title."""
    return f"RLT{index:04d}X"


def finding_id(index: int) -> str:
    return "RL-" + hashlib.sha256(str(index).encode()).hexdigest()[:12]


@st.composite
def _finding_fields(draw: st.DrawFn) -> dict[str, Any]:
    anchor = draw(st.sampled_from(AnchorState))
    line = None if anchor is AnchorState.UNANCHORED else draw(st.integers(1, 5_000))
    end_line = None if line is None else draw(st.one_of(st.none(), st.integers(line, line + 3)))
    fix, improved = draw(_FIXES)
    verdict = draw(st.sampled_from(VERDICTS))
    verification = None if verdict is None else Verification(verdict=verdict, evidence=draw(TEXT))
    rule = draw(st.one_of(st.none(), st.sampled_from(["F401", "UP031", "B602", "S608", "ש1"])))
    return {
        "file": draw(PATH),
        "line": line,
        "end_line": end_line,
        "severity": draw(st.sampled_from(Severity)),
        "category": draw(st.sampled_from(Category)),
        "title": draw(TEXT),
        "comment": draw(TEXT),
        "existing_code": draw(st.one_of(st.just(""), CODE)),
        "improved_code": improved,
        "confidence": draw(st.floats(0, 1)),
        "sources": draw(st.lists(st.sampled_from(SOURCES), max_size=2, unique=True)),
        "rule_id": rule,
        "verification": verification,
        "anchor": anchor,
        "fix": fix,
    }


def build_finding(index: int, fields: dict[str, Any]) -> Finding:
    """Finding `index`: its marker starts the title, its id is unique in the review."""
    title = f"{marker(index)} {fields['title']}".rstrip()
    return Finding(**{**fields, "id": finding_id(index), "title": title})


@st.composite
def findings(draw: st.DrawFn, max_size: int = 12) -> list[Finding]:
    drawn = draw(st.lists(_finding_fields(), max_size=max_size))
    return [build_finding(i, fields) for i, fields in enumerate(drawn)]


_ANALYZER = st.builds(
    AnalyzerRun,
    name=st.sampled_from(["ruff", "bandit", "custom שלום"]),
    status=st.sampled_from(["ok", "partial", "missing", "failed", "skipped"]),
    files=st.integers(0, 3),
    findings=st.integers(0, 3),
    message=st.one_of(st.just(""), TEXT),
    version=st.one_of(st.none(), st.just("0.14.1")),
)


@st.composite
def reviews(draw: st.DrawFn, max_findings: int = 12) -> Review:
    found = draw(findings(max_findings))
    models = draw(st.sampled_from([[], ["openai/gpt-4o-mini"], ["a", "b/ש"]]))
    coverage = Coverage(
        reviewed_files=sorted({f.file for f in found}),
        skipped=draw(st.lists(st.builds(SkippedFile, path=PATH, reason=TEXT), max_size=2)),
        analyzers=draw(st.lists(_ANALYZER, max_size=2)),
        models=models,
        notes=draw(st.lists(TEXT, max_size=2)),
        tokens=draw(st.integers(0, 10**6)) if models else 0,
        cost_usd=draw(st.one_of(st.none(), st.floats(0, 5))) if models else None,
        model_calls=draw(st.integers(0, 40)) if models else 0,
    )
    return Review(
        task_id="t1",
        scope=draw(st.sampled_from(["uncommitted", "branch", "pr"])),
        scope_label=draw(TEXT),
        repo="/r",
        stats=DiffStats(files=len(coverage.reviewed_files), added=len(found), removed=0),
        findings=found,
        coverage=coverage,
        summary=draw(st.one_of(st.none(), TEXT)),
        quality_score=draw(st.one_of(st.none(), st.integers(0, 100))),
        attempts=1 if models else 0,
        # Rarely: a review that could not be done, or a model that could not be used.
        failure=draw(st.one_of(st.none(), st.none(), st.none(), TEXT)),
        model_error=draw(st.one_of(st.none(), st.none(), st.none(), TEXT)),
    )


# Long model prose: up to ~130,000 characters, more than a forge takes in one comment.
LONG = st.integers(1, 30).map(lambda k: "long words and `code` " * 200 * k)


@st.composite
def long_parts(draw: st.DrawFn, review: Review) -> Review:
    """`review` with some of its model-written parts long: the summary, a note, a skipped
    file's reason, a finding's title or comment."""
    update: dict[str, Any] = {}
    if draw(st.booleans()):
        update["summary"] = draw(LONG)
    coverage = review.coverage
    if draw(st.booleans()):
        coverage = coverage.model_copy(update={"notes": [*coverage.notes, draw(LONG)]})
    if draw(st.booleans()):
        skipped = [*coverage.skipped, SkippedFile(path="big.py", reason=draw(LONG))]
        coverage = coverage.model_copy(update={"skipped": skipped})
    update["coverage"] = coverage
    found = list(review.findings)
    if found and draw(st.booleans()):
        i = draw(st.integers(0, len(found) - 1))
        field = draw(st.sampled_from(["title", "comment"]))
        text = f"{found[i].title} {draw(LONG)}" if field == "title" else draw(LONG)
        found[i] = found[i].model_copy(update={field: text})
    update["findings"] = found
    return review.model_copy(update=update)


def many_findings(count: int) -> Review:
    """A review with `count` findings cycling through every severity, anchor and fix state,
    spread over a few dozen files (thousands: the size limits of each output)."""
    anchors = list(AnchorState)
    fixes: list[tuple[FixState, str | None]] = [
        (FixState.PARSES, "x = 2"),
        (FixState.UNCHECKED, ""),
        (FixState.DOES_NOT_PARSE, "x = ("),
        (FixState.NOT_IN_FILE, "y = 1"),
        (FixState.UNCHECKED, None),
    ]
    found = []
    for i in range(count):
        anchor = anchors[i % len(anchors)]
        fix, improved = fixes[i % len(fixes)]
        fields: dict[str, Any] = {
            "file": f"pkg/מודול{i % 40}/m.py",
            "line": None if anchor is AnchorState.UNANCHORED else i + 1,
            "end_line": None,
            "severity": list(Severity)[i % len(Severity)],
            "category": list(Category)[i % len(Category)],
            "title": f"finding שלום number {i}",
            "comment": "why it matters, with `code` and **emphasis**",
            "existing_code": f"x{i} = 1",
            "improved_code": improved,
            "confidence": 0.5,
            "sources": [SOURCES[i % len(SOURCES)]],
            "rule_id": None,
            "verification": None,
            "anchor": anchor,
            "fix": fix,
        }
        found.append(build_finding(i, fields))
    files = sorted({f.file for f in found})
    return Review(
        task_id="t-many",
        scope="branch",
        scope_label="branch feature vs main",
        repo="/r",
        stats=DiffStats(files=len(files), added=count),
        findings=found,
        coverage=Coverage(reviewed_files=files, models=["openai/gpt-4o-mini"], tokens=10),
    )
