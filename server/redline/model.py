"""Shared domain types: the one currency between stages, renderers and the editor.

Everything here is a pydantic model because it crosses a boundary (JSON reports, the task
record, LSP notifications). Logic lives elsewhere; only small, pure helpers stay here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

# The enums live in a pydantic-free module so the language server can use them without
# importing pydantic at start-up; re-exported here (`X as X`) so `redline.model` stays the
# one place to import domain types from.
from redline.enums import AnchorState as AnchorState
from redline.enums import Category as Category
from redline.enums import ContextLevel as ContextLevel
from redline.enums import FixState as FixState
from redline.enums import PatchType as PatchType
from redline.enums import Severity as Severity
from redline.enums import Tag as Tag

_WS = re.compile(r"\s+")


def normalize_code(code: str) -> str:
    """Whitespace-insensitive form of a code snippet, used for fingerprints and matching."""
    return _WS.sub(" ", code).strip()


def finding_id(file: str, code: str, category: str, title: str = "") -> str:
    """Stable fingerprint of a finding: file + normalized code + category (+ rule/title).

    It ignores line numbers on purpose, so a finding keeps its id when code above it moves and
    across re-reviews of the same code. `title` disambiguates two different problems reported
    on the same snippet (for analyzers it is the rule id).
    """
    material = "\x1f".join([file, normalize_code(code), str(category), title.strip().lower()])
    return "RL-" + hashlib.sha256(material.encode("utf-8")).hexdigest()[:12]


def occurrence_id(base_id: str, occurrence: int) -> str:
    """The id of the `occurrence`-th (1-based, in line order) finding sharing `base_id`.

    The first occurrence keeps the base id itself, so dismissals and baselines written before
    ids were made unique keep matching it; the n-th is a hash of the base id and n, in the same
    `RL-` + 12 hex format (publish/markers.py and the inline markers validate it)."""
    if occurrence <= 1:
        return base_id
    material = f"{base_id}\x1foccurrence\x1f{occurrence}"
    return "RL-" + hashlib.sha256(material.encode("utf-8")).hexdigest()[:12]


def number_occurrences(findings: Iterable[Finding]) -> list[Finding]:
    """The findings, in the same order, with ids unique within them.

    `finding_id` ignores line numbers, so two identical lines in one file (the same
    `subprocess.call(cmd, shell=True)` twice) get the same base id. Findings sharing a base id
    are numbered in line order (unanchored ones last), and the n-th gets `occurrence_id(base,
    n)` and remembers its `base_id`: a re-review of unchanged code numbers them the same way,
    and the first keeps the plain base id. Called once per review, after every finding is known
    (`review/assemble.py` build_review); calling it again renumbers from the base ids."""
    items = list(findings)
    groups: dict[str, list[int]] = {}
    for index, finding in enumerate(items):
        groups.setdefault(finding.family_id, []).append(index)
    out = list(items)
    for base, indexes in groups.items():
        if len(indexes) == 1 and items[indexes[0]].id == base:
            continue
        indexes.sort(key=lambda i: _occurrence_order(items[i], i))
        for n, index in enumerate(indexes, 1):
            new_id = occurrence_id(base, n)
            out[index] = items[index].model_copy(
                update={"id": new_id, "base_id": base if new_id != base else None}
            )
    return out


def _occurrence_order(finding: Finding, index: int) -> tuple[bool, int, int, int]:
    line = finding.line if finding.line is not None else 0
    end = finding.end_line if finding.end_line is not None else line
    return (finding.line is None, line, end, index)


class Verification(BaseModel):
    verdict: str  # CORRECT | INCORRECT | PARTIALLY_CORRECT
    evidence: str = ""
    model: str | None = None


class Finding(BaseModel):
    model_config = ConfigDict(use_enum_values=False)

    id: str
    file: str  # repo-relative, forward slashes
    line: int | None = None  # 1-based, new side; None when unanchored
    end_line: int | None = None
    severity: Severity
    category: Category
    title: str
    comment: str  # cause, impact, fix
    existing_code: str = ""
    improved_code: str | None = None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    sources: list[str] = Field(default_factory=list)  # e.g. ["ruff:B006"], ["model:gpt-4o-mini"]
    rule_id: str | None = None  # analyzer rule (B006, B602, ...) when an analyzer found it
    verification: Verification | None = None
    anchor: AnchorState = AnchorState.EXACT
    fix: FixState = FixState.UNCHECKED  # may improved_code be applied (review/fix_check.py)
    # The lines the problem itself is on, when its fix covers more (`line`..`end_line` are the
    # lines the fix replaces: ruff's mutable-default fix also spans the docstring below the
    # `def`). What an editor underlines; None when the two are the same.
    focus_line: int | None = None
    focus_end_line: int | None = None
    # The id shared by identical findings in one file (`finding_id`) when this one is not the
    # first of them, so its own id is an occurrence id (`number_occurrences`); None otherwise.
    base_id: str | None = None

    @property
    def family_id(self) -> str:
        """The id every occurrence of this finding shares: what "dismiss all like this" names."""
        return self.base_id or self.id

    @property
    def fix_applicable(self) -> bool:
        """There is improved code and it may be offered as an applicable fix."""
        return self.improved_code is not None and self.line is not None and self.fix.applicable


class UnitMetrics(BaseModel):
    added: int = 0
    removed: int = 0
    hunks: int = 0
    functions: list[str] = Field(default_factory=list)  # enclosing functions touched (new side)
    single_function: bool = False


class SymbolUse(BaseModel):
    """Where the new tree still uses a definition of a deleted file (review/deleted.py)."""

    symbol: str
    path: str
    line: int
    text: str = ""


class ReviewUnit(BaseModel):
    unit_id: str
    file_path: str  # new path (old path for deletions)
    old_path: str | None = None  # set for renames
    patch_type: PatchType
    language: str | None = None
    tags: list[Tag] = Field(default_factory=list)
    metrics: UnitMetrics = Field(default_factory=UnitMetrics)
    added_lines: list[int] = Field(default_factory=list)  # new-side line numbers added/changed
    hunk_ranges: list[tuple[int, int]] = Field(default_factory=list)  # new-side (start, end)
    patch: str = ""  # the unit's hunks as unified-diff text (never sent to the planner)
    rule_context_level: ContextLevel = ContextLevel.DIFF_ONLY
    rule_confidence: float = 0.5
    skip_reason: str | None = None
    # Deleted files only: the definitions the file had, and where the new tree still uses them.
    symbols: list[str] = Field(default_factory=list)
    symbol_uses: list[SymbolUse] = Field(default_factory=list)


class AnalyzerRun(BaseModel):
    name: str
    # ok | partial (some files unreadable, or left out by analyzers.bandit_scope; see message)
    # | missing | failed | skipped
    status: str
    files: int = 0
    findings: int = 0
    message: str = ""
    version: str | None = None
    # Wall time of the run (its batches, process start included); None when it did not run.
    seconds: float | None = None


class SkippedFile(BaseModel):
    path: str
    reason: str


class Coverage(BaseModel):
    reviewed_files: list[str] = Field(default_factory=list)
    skipped: list[SkippedFile] = Field(default_factory=list)
    analyzers: list[AnalyzerRun] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)  # the models called in this run
    # The models whose earlier answers this run reused from the answer cache (unchanged code):
    # a review with these and no `models` is no offline review, though no model was called.
    cached_models: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    tokens: int = 0
    cost_usd: float | None = None
    model_calls: int = 0
    instructions_read: list[str] = Field(default_factory=list)
    instructions_truncated: list[str] = Field(default_factory=list)
    # Project memory's state as the review found it ("1,234 symbols, built 3 min ago", "not
    # built"); None where memory was not looked at (ask, debate, an empty change).
    memory: str | None = None


class DiffStats(BaseModel):
    files: int = 0
    added: int = 0
    removed: int = 0


class DebateParticipant(BaseModel):
    """One debater as the report shows it: who, with which model, and what it cost."""

    name: str  # the configured name ("security")
    label: str  # how the transcript names it ("Security")
    model: str
    calls: int = 0
    tokens: int = 0
    cost_usd: float | None = None
    out: str | None = None  # why it left the debate (its model failed), None while it took part


class DebateTurn(BaseModel):
    """One entry of the transcript, in the order it happened."""

    round: int
    speaker: str  # a debater's name, or "user" for an interjection
    label: str
    kind: str  # turn | pass | interjection | skipped | stopped (cut short by the user)
    text: str = ""
    note: str | None = None  # e.g. why a turn was skipped
    tokens: int = 0
    latency_s: float = 0.0
    tool_calls: int = 0


class DebatePosition(BaseModel):
    """A debater's final position, anonymous: the label is a letter given after shuffling."""

    label: str  # "Debater A"
    text: str


class DebateRecord(BaseModel):
    """What a debate said: the transcript, the final positions, the neutral summary."""

    rounds_planned: int
    rounds_held: int = 0
    stop_reason: str = ""  # rounds | passed | budget | user | debaters | cancelled
    participants: list[DebateParticipant] = Field(default_factory=list)
    turns: list[DebateTurn] = Field(default_factory=list)
    positions: list[DebatePosition] = Field(default_factory=list)
    summary_markdown: str = ""  # the neutral summary, or the plain listing when it failed
    summarizer_model: str | None = None
    summarizer_error: str | None = None  # why the plain listing stands in for the summary
    notes: list[str] = Field(default_factory=list)  # compaction, skipped debaters, budget


class Review(BaseModel):
    task_id: str
    scope: str  # uncommitted | staged | branch | commit | since | range | pr
    scope_label: str
    repo: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    stats: DiffStats = Field(default_factory=DiffStats)
    findings: list[Finding] = Field(default_factory=list)
    coverage: Coverage = Field(default_factory=Coverage)
    summary: str | None = None
    quality_score: int | None = None  # the verifier's score of the kept attempt
    attempts: int = 0  # model review attempts (0: no model ran)
    dropped: list[Finding] = Field(default_factory=list)  # rejected by the verifier (INCORRECT)
    # Why the review could not be done (an ask agent that never submitted); None when it was.
    # An empty findings list then means "nothing was reviewed", not "nothing was found".
    failure: str | None = None
    # Why a configured model could not be used, in one line ("model gpt-4o-mini: no
    # OPENAI_API_KEY set — set it or REDLINE_API_KEY"); the findings are then what was found
    # without it (the analyzers'). Distinct from `failure`: the run itself completed.
    model_error: str | None = None
    debate: DebateRecord | None = None  # set for a debate (`redline debate`)

    def counts_by_severity(self) -> dict[Severity, int]:
        counts = {s: 0 for s in Severity}
        for f in self.findings:
            counts[f.severity] += 1
        return counts
