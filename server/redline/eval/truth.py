"""The contracts the eval's parts share: what was planted, and what the review made of it.

A `PlantedBug` is the ground truth of one case: the file, the new-side lines the mutation
changed (1-based, in the mutated file), the operator and a one-line description a reviewer
would write. Everything is plain data so results can be saved and compared across runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

# Every operator the generator knows, by name (mutate/ registers one function per name).
OPERATORS: Final = (
    "off_by_one",  # a bound or slice end moved by one (< → <=, n → n - 1, [:n] → [:n + 1])
    "flipped_comparison",  # < ↔ >, <= ↔ >=, == ↔ !=
    "and_or_swap",  # and ↔ or, && ↔ ||
    "negated_condition",  # if c → if not c
    "wrong_variable",  # a variable replaced by another of the same kind in scope
    "swapped_arguments",  # f(a, b) → f(b, a)
    "removed_null_check",  # an `if x is None` / `if (x == null)` / `if err != nil` guard removed
    "removed_await",  # await f() → f()
    "missing_return",  # return expr → expr (or the return dropped)
    "wrong_constant",  # a numeric or string constant changed
    "early_break",  # a break/continue inserted early in a loop body
    "swallowed_exception",  # an except/catch body replaced by pass / {} / ignored err
    "resource_not_closed",  # with open(...) → f = open(...) without close; defer Close() removed
    "injection",  # a query/shell command built by concatenating a parameter
)
# Operators whose bug shows only with another file's code: the mutation changes a function's
# contract (what it returns, raises or defaults to) where a caller in another file relies on
# the old one, so a reviewer sees it only when that caller is in its context. Kept apart from
# OPERATORS (which every language and the bundled single-file corpus have): they need a
# repository where one file calls another.
CONTEXT_OPERATORS: Final = ("caller_contract",)
ALL_OPERATORS: Final = OPERATORS + CONTEXT_OPERATORS
LANGUAGES: Final = ("python", "javascript", "typescript", "go")


@dataclass(frozen=True)
class CallSite:
    """A call in another file that relies on the callee's old contract."""

    path: str  # repo-relative
    line: int  # 1-based
    code: str  # the line's text, stripped
    function: str  # the calling function's qualified name ("" at module level)


@dataclass(frozen=True)
class PlantedBug:
    operator: str  # one of ALL_OPERATORS
    language: str  # one of LANGUAGES
    file: str  # repo-relative, forward slashes
    lines: tuple[int, ...]  # new-side lines the mutation changed (1-based, mutated file)
    function: str  # the enclosing function's name
    description: str  # one line, e.g. "loop bound includes len(items): reads past the end"
    original: str  # the replaced source text
    mutated: str  # the text put in its place
    # CONTEXT_OPERATORS: the calls in other files that rely on the old contract; the bug can
    # be seen only where one of them is shown.
    callers: tuple[CallSite, ...] = ()


@dataclass(frozen=True)
class Mutant:
    bug: PlantedBug
    source: str  # the whole mutated file
    # Other files the case needs as they are (the callers' files of a CONTEXT_OPERATORS bug):
    # (repo-relative path, text).
    context: tuple[tuple[str, str], ...] = ()


@dataclass
class StageCounts:
    """How many planted bugs were still matched after each stage of the pipeline."""

    said: int = 0  # the model's raw answer named the bug (line ±1, or quoted the line)
    anchored: int = 0  # a finding after anchoring matched it
    verified: int = 0  # still there after the verifier (not dropped)
    shown: int = 0  # in the final review the user sees


@dataclass
class CaseResult:
    case_id: str
    bug: PlantedBug
    model: str  # "offline" when only the analyzers ran
    found: bool  # a shown finding matched the planted bug
    findings: int  # shown findings on the planted change
    matching: int  # of those, how many match
    stages: StageCounts = field(default_factory=StageCounts)
    anchoring: dict[str, int] = field(default_factory=dict)  # AnchorState value → count
    calls: int = 0
    tokens: int = 0
    cost: float | None = 0.0  # None: tokens were spent on a model without a price
    seconds: float = 0.0
    error: str | None = None  # the case could not be run (the review failed): not a miss
