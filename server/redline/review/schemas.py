"""What models must answer, as pydantic models. Invalid answers are re-asked with the
validation error, never silently dropped (see review/structured.py).

Every answer's top level is strict (`_Answer`): an unknown key means the model misread the
format — `{"issues": [...]}` for `{"findings": [...]}` would otherwise validate as "no findings"
and lose every one of them — and each answer's main key is required, so an empty or foreign
object is invalid too (a reviewer round that only asks for context may leave out `findings`).
Items inside an answer (a finding, a verdict, a planned unit) are lenient: models annotate
them with keys we did not ask for (an id, a rule name), their required fields already catch a
misread item, and rejecting the whole answer for a stray annotation would cost a re-ask, and
at worst the file's review.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from redline.context.request import ContextRequest
from redline.model import Category, ContextLevel, Severity


class _Lenient(BaseModel):
    # An item's extra keys are annotations (see the module docstring): ignored.
    model_config = ConfigDict(extra="ignore")


class _Answer(BaseModel):
    # A whole answer: an unknown top-level key is a misread format, never "nothing to say".
    model_config = ConfigDict(extra="forbid")


class ModelFinding(_Lenient):
    """One finding as a model reports it. Line numbers are only a hint: the finding is placed
    by locating `existing_code` in the new version of the file (review/anchoring.py)."""

    file: str
    line: int | None = None
    end_line: int | None = None
    severity: Severity
    category: Category
    title: str = Field(min_length=1, max_length=200)
    comment: str = Field(min_length=1)
    existing_code: str = Field(min_length=1)
    improved_code: str | None = None
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)

    @field_validator("severity", mode="before")
    @classmethod
    def _severity(cls, v: object) -> object:
        return Severity.parse(v) if isinstance(v, str) else v

    @field_validator("category", mode="before")
    @classmethod
    def _category(cls, v: object) -> object:
        if isinstance(v, str):
            for c in Category:
                if c.value.lower() == v.strip().lower():
                    return c
        return v


class ReviewerAnswer(_Answer):
    findings: list[ModelFinding] = Field(default_factory=list)
    need_context: list[ContextRequest] = Field(default_factory=list)
    summary: str = ""
    # The ids of the team's learnings (shown with the file) that decided a finding or leaving
    # one out; optional (review/learnings_use.py keeps only ids the file was given).
    applied_learnings: list[str] = Field(default_factory=list, max_length=50)

    @model_serializer(mode="wrap")
    def _without_empty_learnings(self, handler: SerializerFunctionWrapHandler) -> Any:
        # An answer that applied none is written as before the field existed: cached answers
        # of earlier versions read and write back unchanged.
        data = handler(self)
        if isinstance(data, dict) and not self.applied_learnings:
            data.pop("applied_learnings", None)
        return data

    @model_validator(mode="after")
    def _says_something(self) -> ReviewerAnswer:
        # A round that only asks for context may leave out `findings`; an answer with neither
        # ({} or only a summary) is not "no findings".
        if not {"findings", "need_context"} & self.model_fields_set:
            raise ValueError("`findings` is required (an empty list when nothing is wrong)")
        return self


class FileAnswer(ReviewerAnswer):
    """One file's answer in a batched reviewer call: a reviewer answer that names its file."""

    file: str = Field(min_length=1)


class BatchReviewerAnswer(_Answer):
    """A batched reviewer call's answer: one entry per file of the batch
    (review/batching.py)."""

    files: list[FileAnswer]


class PlannedUnit(_Lenient):
    unit_id: str
    context_level: ContextLevel
    requests: list[ContextRequest] = Field(default_factory=list)
    skip: bool = False
    reason: str = ""


class PlannerAnswer(_Answer):
    units: list[PlannedUnit]


Verdict = Literal["CORRECT", "INCORRECT", "PARTIALLY_CORRECT"]


class FindingVerdict(_Lenient):
    id: str
    verdict: Verdict
    evidence: str = ""
    corrected_severity: Severity | None = None

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict(cls, v: object) -> object:
        return v.strip().upper().replace(" ", "_") if isinstance(v, str) else v

    @field_validator("corrected_severity", mode="before")
    @classmethod
    def _sev(cls, v: object) -> object:
        return Severity.parse(v) if isinstance(v, str) and v else (v or None)


class VerifierAnswer(_Answer):
    verdicts: list[FindingVerdict]
    quality_score: int = Field(ge=0, le=100)
    feedback: str = ""  # what a re-review should do differently (used as retry_context)


class SummaryAnswer(_Answer):
    assessment: str
    priorities: list[str] = Field(default_factory=list)
    focus: list[str] = Field(default_factory=list)


class SubmittedReview(_Answer):
    """The `submit_review` tool's arguments in `redline ask` (SUBMIT_SCHEMA requires both)."""

    summary: str
    findings: list[ModelFinding]
