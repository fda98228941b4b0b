"""What a review will look at: the scope's diff and its review units, decided before any
analyzer or model runs (`pipeline.plan_review` makes one; the estimate, the pipeline and the
model stages read it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from redline.config import LoadedSettings
from redline.config_models import Settings
from redline.git.scopes import ScopeDiff
from redline.model import Finding, ReviewUnit
from redline.review.ground import Ground
from redline.review.learnings_use import ReviewLearnings


@dataclass
class Plan:
    """What the review will look at, decided without calling any analyzer or model.

    `settings` are the ones the review runs with: the caller's, with the repository layer of
    the review's `ground` merged in (review/ground.py: the base revision for a review of
    commits); `settings_findings` report the change's own edits to that layer and to the
    committed learnings; `learnings` are those the review applies (review/learnings_use.py)."""

    scope: ScopeDiff
    units: list[ReviewUnit]
    loaded: LoadedSettings
    ground: Ground
    settings_findings: list[Finding] = field(default_factory=list)
    learnings: ReviewLearnings = field(default_factory=ReviewLearnings)

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    @property
    def reviewable(self) -> list[ReviewUnit]:
        return [u for u in self.units if u.skip_reason is None]

    @property
    def skipped(self) -> list[ReviewUnit]:
        return [u for u in self.units if u.skip_reason is not None]

    @property
    def empty(self) -> bool:
        return not self.scope.diff_text.strip()
