"""What a review will look at: the scope's diff and its review units, decided before any
analyzer or model runs (`pipeline.plan_review` makes one; the estimate, the pipeline and the
model stages read it)."""

from __future__ import annotations

from dataclasses import dataclass

from redline.git.scopes import ScopeDiff
from redline.model import ReviewUnit


@dataclass
class Plan:
    """What the review will look at, decided without calling any analyzer or model."""

    scope: ScopeDiff
    units: list[ReviewUnit]

    @property
    def reviewable(self) -> list[ReviewUnit]:
        return [u for u in self.units if u.skip_reason is None]

    @property
    def skipped(self) -> list[ReviewUnit]:
        return [u for u in self.units if u.skip_reason is not None]

    @property
    def empty(self) -> bool:
        return not self.scope.diff_text.strip()
