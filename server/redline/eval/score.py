"""Matching findings to planted bugs, and the numbers an eval reports. Pure: no I/O.

A finding matches a planted bug when it is in the bug's file and either

- its lines (line..end_line) come within ±1 line of a planted line, or
- its `existing_code` quotes a planted line: the whole line (stripped, whitespace collapsed, not
  blank) is in the quote, or a quoted line of at least `MIN_QUOTE` characters is part of it.

The same rule applies at every stage of the funnel: to what the model *said* (its raw reviewer
answer, parsed with the reviewer's own schema; its line numbers are file lines), to the findings
after anchoring, to those the verifier kept, and to those shown. The funnel follows the model's
findings; `found` (recall) counts every shown finding, the analyzers' too.

Per model: recall = found / cases run (errored cases are counted apart, never as misses),
precision = matching findings / findings on the planted change (the mutated file), F1.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from redline.eval.truth import CaseResult, Mutant, PlantedBug, StageCounts
from redline.model import Finding, Review, normalize_code
from redline.review.schemas import BatchReviewerAnswer, ModelFinding, ReviewerAnswer
from redline.review.structured import extract_json

LINE_TOLERANCE = 1
MIN_QUOTE = 8  # a quoted fragment shorter than this matches too much to count as a quote
OFFLINE = "offline"  # CaseResult.model when only the analyzers ran


@dataclass(frozen=True)
class Truth:
    """A planted bug with the text of its planted lines (stripped, whitespace collapsed)."""

    bug: PlantedBug
    texts: tuple[str, ...]

    @classmethod
    def of(cls, mutant: Mutant) -> Truth:
        lines = mutant.source.splitlines()
        texts = tuple(normalize_code(lines[n - 1]) for n in mutant.bug.lines if 0 < n <= len(lines))
        return cls(bug=mutant.bug, texts=tuple(t for t in texts if t))


def _same_file(a: str, b: str) -> bool:
    return a.strip().removeprefix("./") == b


def near(line: int | None, end_line: int | None, planted: Sequence[int]) -> bool:
    """The span line..end_line comes within LINE_TOLERANCE of a planted line."""
    if line is None:
        return False
    end = end_line if end_line is not None and end_line >= line else line
    return any(line - LINE_TOLERANCE <= p <= end + LINE_TOLERANCE for p in planted)


def quotes(code: str, texts: Sequence[str]) -> bool:
    """`code` quotes one of the planted lines (see the module docstring)."""
    whole = normalize_code(code)
    if not whole or not texts:
        return False
    if any(t in whole for t in texts):
        return True
    parts = [normalize_code(p) for p in code.splitlines()]
    return any(len(p) >= MIN_QUOTE and any(p in t for t in texts) for p in parts)


def matches(
    truth: Truth, file: str, line: int | None, end_line: int | None, existing_code: str
) -> bool:
    if not _same_file(file, truth.bug.file):
        return False
    return near(line, end_line, truth.bug.lines) or quotes(existing_code, truth.texts)


def finding_matches(truth: Truth, finding: Finding) -> bool:
    return matches(truth, finding.file, finding.line, finding.end_line, finding.existing_code)


# --- what the model said ---------------------------------------------------------------------


def said_findings(contents: Iterable[str | None], path: str) -> list[ModelFinding]:
    """The findings of a file's raw reviewer answers (a single-file or a batched answer), as
    the reviewer parses them; an answer the reviewer rejected still says what it says, so
    its findings are read one by one. A finding without a file is the answer's file."""
    out: list[ModelFinding] = []
    for content in contents:
        try:
            data = extract_json(content)
        except ValueError:
            continue
        for item in _finding_items(data, path):
            try:
                mf = ModelFinding.model_validate(item)
            except ValidationError:
                continue
            out.append(mf.model_copy(update={"file": mf.file.strip() or path}))
    return out


def _finding_items(data: Any, path: str) -> list[Any]:
    for schema in (ReviewerAnswer, BatchReviewerAnswer):
        try:
            answer = schema.model_validate(data)
        except ValidationError:
            continue
        if isinstance(answer, BatchReviewerAnswer):
            entries = [e for e in answer.files if _same_file(e.file, path)]
            return [f.model_dump() for e in entries for f in e.findings]
        return [f.model_dump() for f in answer.findings]
    # Not valid as a whole: its items, leniently.
    if not isinstance(data, dict):
        return []
    if isinstance(data.get("files"), list):
        items: list[Any] = []
        for entry in data["files"]:
            if isinstance(entry, dict) and _same_file(str(entry.get("file", "")), path):
                items += entry.get("findings") or []
        return [{"file": path, **i} if isinstance(i, dict) else i for i in items]
    found = data.get("findings")
    if not isinstance(found, list):
        return []
    return [{"file": path, **i} if isinstance(i, dict) else i for i in found]


# --- one case --------------------------------------------------------------------------------


@dataclass
class ModelTrace:
    """What the review's model stages made of a case's files (the `on_file` hook): the raw
    reviewer answers and the anchored findings of each file's last answer."""

    contents: dict[str, list[str | None]] = field(default_factory=dict)
    anchored: dict[str, list[Finding]] = field(default_factory=dict)

    def add(self, path: str, contents: list[str | None], findings: list[Finding], ok: bool) -> None:
        # A re-review that failed keeps the file's earlier answer (as the pipeline does).
        if ok or path not in self.anchored:
            self.contents[path] = contents
            self.anchored[path] = list(findings)


def _is_model(f: Finding) -> bool:
    return any(s.startswith("model:") for s in f.sources)


def _dropped_key(f: Finding) -> tuple[str, str, str]:
    return (f.file, f.title, normalize_code(f.existing_code))


def stage_counts(truth: Truth, trace: ModelTrace, review: Review) -> StageCounts:
    """Whether the bug was still matched after each stage (0 or 1 each)."""
    path = truth.bug.file
    said = any(
        matches(truth, mf.file, mf.line, mf.end_line, mf.existing_code)
        for mf in said_findings(trace.contents.get(path, []), path)
    )
    anchored = [f for fs in trace.anchored.values() for f in fs if finding_matches(truth, f)]
    dropped = {_dropped_key(f) for f in review.dropped}
    verified = [f for f in anchored if _dropped_key(f) not in dropped]
    shown = [f for f in review.findings if _is_model(f) and finding_matches(truth, f)]
    return StageCounts(
        said=int(said),
        anchored=int(bool(anchored)),
        verified=int(bool(verified)),
        shown=int(bool(shown)),
    )


def score_case(
    case_id: str,
    mutant: Mutant,
    model: str,
    review: Review,
    trace: ModelTrace | None,
    seconds: float,
) -> CaseResult:
    truth = Truth.of(mutant)
    on_change = [f for f in review.findings if f.file == truth.bug.file]
    matching = sum(1 for f in on_change if finding_matches(truth, f))
    result = CaseResult(
        case_id=case_id,
        bug=mutant.bug,
        model=model,
        found=matching > 0,
        findings=len(on_change),
        matching=matching,
        calls=review.coverage.model_calls,
        tokens=review.coverage.tokens,
        # Unpriced (None) when tokens went to a model without a price: never a false $0.
        cost=review.coverage.cost_usd if review.coverage.tokens else 0.0,
        seconds=round(seconds, 3),
        error=review.model_error or review.failure,
    )
    if trace is not None:
        result.stages = stage_counts(truth, trace, review)
        states = Counter(f.anchor.value for fs in trace.anchored.values() for f in fs)
        result.anchoring = dict(sorted(states.items()))
    return result


# --- a model's totals --------------------------------------------------------------------------


@dataclass
class Totals:
    model: str
    cases: int = 0  # cases run (errors excluded)
    errors: int = 0
    found: int = 0
    findings: int = 0
    matching: int = 0
    stages: StageCounts = field(default_factory=StageCounts)
    anchoring: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    tokens: int = 0
    cost: float | None = 0.0  # None once any case's cost is not known (unpriced)
    seconds: float = 0.0

    @property
    def recall(self) -> float | None:
        return self.found / self.cases if self.cases else None

    @property
    def precision(self) -> float | None:
        return self.matching / self.findings if self.findings else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None if p is None or r is None else 0.0
        return 2 * p * r / (p + r)

    @property
    def seconds_per_case(self) -> float | None:
        run = self.cases + self.errors
        return self.seconds / run if run else None

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.update(
            recall=self.recall,
            precision=self.precision,
            f1=self.f1,
            seconds_per_case=self.seconds_per_case,
        )
        return data


def totals(results: Iterable[CaseResult], model: str) -> Totals:
    t = Totals(model=model)
    anchoring: Counter[str] = Counter()
    for r in results:
        if r.model != model:
            continue
        t.seconds += r.seconds
        t.calls += r.calls
        t.tokens += r.tokens
        t.cost = None if t.cost is None or r.cost is None else t.cost + r.cost
        if r.error is not None:
            t.errors += 1
            continue
        t.cases += 1
        t.found += int(r.found)
        t.findings += r.findings
        t.matching += r.matching
        for stage in ("said", "anchored", "verified", "shown"):
            setattr(t.stages, stage, getattr(t.stages, stage) + getattr(r.stages, stage))
        anchoring.update(r.anchoring)
    t.anchoring = dict(sorted(anchoring.items()))
    return t


def recall_by_operator(results: Iterable[CaseResult], model: str) -> dict[str, tuple[int, int]]:
    """operator → (found, cases run) for one model, operators in name order."""
    return recall_by(results, model, lambda r: r.bug.operator)


def recall_by_language(results: Iterable[CaseResult], model: str) -> dict[str, tuple[int, int]]:
    """language → (found, cases run) for one model, languages in name order."""
    return recall_by(results, model, lambda r: r.bug.language)


def recall_by(
    results: Iterable[CaseResult], model: str, key: Callable[[CaseResult], str]
) -> dict[str, tuple[int, int]]:
    """key → (found, cases run) for one model's cases that ran, keys in name order."""
    out: dict[str, list[int]] = {}
    for r in results:
        if r.model != model or r.error is not None:
            continue
        entry = out.setdefault(key(r), [0, 0])
        entry[0] += int(r.found)
        entry[1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}
