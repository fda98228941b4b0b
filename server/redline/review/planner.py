"""The planner: a model that sees only the review index (no code) proposes a context level per
unit; its answer is fused with the rule layer's proposal.

Fusion (thresholds T_HIGH = 0.8, T_LOW = 0.5 on the rule confidence):
- rule confidence ≥ T_HIGH: the rule level, unless the model asks deeper; a model `skip` is
  ignored (the rules are confident the unit deserves a review).
- rule confidence < T_LOW: the model's level, even when shallower; its `skip` is honoured.
- in between: the deeper of the two; `skip` honoured.
Security-sensitive units are never skipped by the model. Extra requests are merged, deduplicated.

Plans are cached per unit (`PlanCache`): the planner sees only the review index, so its
proposal for a unit whose index entry is unchanged (everything but the unit id — a one-line
edit in place keeps paths, tags, sizes, functions and the rule proposal) is reused instead of
asked again. That also keeps unchanged units' context levels stable between reviews, which
is what lets their reviewer answers come from the answer cache.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from redline.agent.llm import LLMClient, LLMResponse
from redline.context.request import ContextRequest
from redline.diff import review_index
from redline.diff.index import index_entry
from redline.model import ContextLevel, ReviewUnit, Tag
from redline.review.prompts import load_prompt, prompt_version
from redline.review.schemas import PlannedUnit, PlannerAnswer
from redline.review.structured import ask_structured
from redline.store.cache import AnswerCache

T_HIGH = 0.8
T_LOW = 0.5


@dataclass
class UnitPlan:
    unit: ReviewUnit
    level: ContextLevel
    requests: list[ContextRequest] = field(default_factory=list)
    skip_reason: str | None = None
    decided_by: str = "rules"  # rules | rules+planner


def _merge_requests(*groups: list[ContextRequest]) -> list[ContextRequest]:
    seen: set[tuple[str, str]] = set()
    merged: list[ContextRequest] = []
    for group in groups:
        for r in group:
            key = (r.kind, r.target)
            if key not in seen:
                seen.add(key)
                merged.append(r)
    return merged


def fuse_plan(unit: ReviewUnit, planned: PlannedUnit | None) -> UnitPlan:
    rule = unit.rule_context_level
    if planned is None:
        return UnitPlan(unit=unit, level=rule)
    conf = unit.rule_confidence
    model = planned.context_level
    if conf >= T_HIGH:
        level = ContextLevel.deeper(rule, model)
        may_skip = False
    elif conf < T_LOW:
        level = model
        may_skip = True
    else:
        level = ContextLevel.deeper(rule, model)
        may_skip = True
    skip_reason = None
    if planned.skip and may_skip and Tag.SECURITY_SENSITIVE not in unit.tags:
        skip_reason = f"planner: {planned.reason or 'nothing to review'}"
    return UnitPlan(
        unit=unit,
        level=level,
        requests=_merge_requests(planned.requests),
        skip_reason=skip_reason,
        decided_by="rules+planner",
    )


def _compact(index: list[dict[str, Any]]) -> str:
    """The index as a JSON array, one unit per line, without padding or empty fields: the
    same data in about half the tokens of an indented dump."""
    rows = [
        json.dumps(
            {k: v for k, v in entry.items() if v not in (None, [], {})},
            separators=(",", ":"),
            ensure_ascii=False,
        )
        for entry in index
    ]
    return "[\n" + ",\n".join(rows) + "\n]"


async def run_planner(
    client: LLMClient, units: list[ReviewUnit]
) -> tuple[dict[str, PlannedUnit], list[LLMResponse]]:
    """The planner's proposals by unit id. Unknown unit ids in the answer are ignored."""
    index = review_index(units)
    messages = [
        {"role": "system", "content": load_prompt("planner")},
        {
            "role": "user",
            "content": "Review index:\n\n```json\n" + _compact(index) + "\n```",
        },
    ]
    answer, responses = await ask_structured(client, "planner", messages, PlannerAnswer)
    known = {u.unit_id for u in units}
    return {p.unit_id: p for p in answer.units if p.unit_id in known}, responses


class _StoredProposal(PlannedUnit):
    # Stored without the unit id: the entry is keyed by everything else about the unit, and
    # the id changes with any edit above it.
    unit_id: str = Field(default="", exclude=True)


class CachedPlan(BaseModel):
    """A unit's planner proposal in the answer cache; None: the planner proposed nothing."""

    planned: _StoredProposal | None


class PlanCache:
    """Planner proposals by unit index entry (without the unit id), in the answer cache.

    A unit the planner gave no proposal for is remembered as such (it gets the rule plan
    again); invalid answers are never stored."""

    def __init__(self, cache: AnswerCache, client: LLMClient) -> None:
        self.cache = cache
        self.models = ",".join(m for m, _ in client.models_for("planner"))
        self.version = prompt_version("planner")

    def _key(self, unit: ReviewUnit) -> str:
        entry = {k: v for k, v in index_entry(unit).items() if k != "unit_id"}
        return self.cache.key(
            "planner-unit", self.models, self.version, json.dumps(entry, sort_keys=True)
        )

    def get(self, unit: ReviewUnit) -> tuple[bool, PlannedUnit | None]:
        """(found, proposal); a found None means "the planner proposed nothing for it"."""
        cached = self.cache.lookup(self._key(unit), CachedPlan)
        if cached is None:
            return False, None
        if cached.planned is None:
            return True, None
        return True, PlannedUnit(**cached.planned.model_dump(), unit_id=unit.unit_id)

    def put(self, unit: ReviewUnit, planned: PlannedUnit | None) -> None:
        stored = None if planned is None else _StoredProposal(**planned.model_dump())
        self.cache.put(self._key(unit), CachedPlan(planned=stored))
