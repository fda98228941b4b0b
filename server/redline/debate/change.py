"""The change every debater is shown: each reviewable file's hunks in the reviewer format
(numbered new-side lines, `context/format.py`), within `debate.change_tokens`.

Files beyond the budget are named, not dropped silently: the debaters can read them with
their tools, and the report says which were not shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from redline.agent.session import estimate_tokens
from redline.context.format import fence_for, format_patch
from redline.review.plan import Plan


@dataclass
class ChangeText:
    text: str
    shown: list[str] = field(default_factory=list)  # files whose hunks are in `text`
    omitted: list[str] = field(default_factory=list)  # reviewable files left out (budget)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why) by the rules

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def change_text(plan: Plan, budget_tokens: int) -> ChangeText:
    """The scope's change for the debaters, most of it within `budget_tokens`."""
    out = ChangeText(text="")
    parts = [f"Change under debate: {plan.scope.label}"]
    used = estimate_tokens(parts[0])
    seen: set[str] = set()
    for unit in plan.reviewable:
        body, _ = format_patch(unit.patch)
        fence = fence_for(body)
        block = f"## {unit.file_path}\n{fence}\n{body}\n{fence}"
        cost = estimate_tokens(block)
        if used + cost > budget_tokens and out.shown:
            if unit.file_path not in seen and unit.file_path not in out.omitted:
                out.omitted.append(unit.file_path)
            continue
        parts.append(block)
        used += cost
        if unit.file_path not in seen:
            seen.add(unit.file_path)
            out.shown.append(unit.file_path)
    out.omitted = [p for p in out.omitted if p not in seen]
    if out.omitted:
        parts.append(
            "Not shown here for length (read them with your tools if they matter): "
            + ", ".join(out.omitted)
        )
    out.skipped = [(u.file_path, u.skip_reason or "") for u in plan.skipped]
    if out.skipped:
        parts.append(
            "Not for review (generated, lockfiles, binary, ...): "
            + ", ".join(p for p, _ in out.skipped)
        )
    out.text = "\n\n".join(parts)
    return out
