"""What the debate's neutral summarizer must answer (prompts/debate/summarizer.md).

Strict at the top level like review/schemas.py — an unknown key is a misread format, re-asked
once by `ask_structured` — and lenient inside an item (an annotation the model adds costs
nothing). `supported_by` / `held_by` name anonymous debaters ("Debater A"); conclude.py maps
them back and ignores labels it never gave out.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from redline.model import Category, Severity


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _severity(v: object) -> object:
    return Severity.parse(v) if isinstance(v, str) and v.strip() else (v or None)


def _category(v: object) -> object:
    if isinstance(v, str):
        for c in Category:
            if c.value.lower() == v.strip().lower():
                return c
        # "code quality", "maintainability": the closest of the four is Quality; a made-up
        # category is not worth a re-ask of the whole summary.
        return Category.QUALITY if v.strip() else None
    return v


def _labels(v: object) -> object:
    # A single label where a list was asked for ("Debater A") is still that label.
    return [v] if isinstance(v, str) else v


def _text(v: object) -> object:
    # Reasons given as a list of sentences read the same joined.
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "; ".join(x.strip() for x in v if x.strip())
    return v


class CodeRef(_Item):
    """Where a point is in the code, when it is about code: anchored like a review finding.
    Severity and category are optional here; conclude.py fills in defaults."""

    file: str | None = None
    existing_code: str | None = None
    improved_code: str | None = None
    severity: Severity | None = None
    category: Category | None = None
    supported_by: list[str] = Field(default_factory=list)

    @field_validator("severity", mode="before")
    @classmethod
    def _sev(cls, v: object) -> object:
        return _severity(v)

    @field_validator("category", mode="before")
    @classmethod
    def _cat(cls, v: object) -> object:
        return _category(v)

    @field_validator("supported_by", mode="before")
    @classmethod
    def _sup(cls, v: object) -> object:
        return _labels(v)


class ConsensusPoint(CodeRef):
    point: str = Field(min_length=1)


class ActionItem(CodeRef):
    title: str = Field(min_length=1)
    detail: str = ""


class Side(_Item):
    position: str = Field(min_length=1)
    reasons: str = ""
    held_by: list[str] = Field(default_factory=list)

    @field_validator("reasons", mode="before")
    @classmethod
    def _rea(cls, v: object) -> object:
        return _text(v)

    @field_validator("held_by", mode="before")
    @classmethod
    def _held(cls, v: object) -> object:
        return _labels(v)


class Disagreement(_Item):
    topic: str = Field(min_length=1)
    sides: list[Side] = Field(default_factory=list)


class DebateSummaryAnswer(_Answer):
    overview: str = Field(min_length=1)
    consensus: list[ConsensusPoint] = Field(default_factory=list)
    disagreements: list[Disagreement] = Field(default_factory=list)
    action_items: list[ActionItem] = Field(default_factory=list)
