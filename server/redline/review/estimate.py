"""`redline review --estimate`: what a review would look at, decided without running anything.

No analyzer runs and no model is called: the units, the skip decisions and the rule plan are
all computed from the diff alone, so the estimate is instant and free.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from redline.diff import review_index

if TYPE_CHECKING:
    from redline.review.pipeline import Plan


def render_estimate(plan: Plan, *, as_json: bool = False) -> str:
    scope = plan.scope
    if as_json:
        return json.dumps(
            {
                "scope": scope.label,
                "stats": scope.stats.model_dump(),
                "units": review_index(plan.units),
            },
            indent=2,
        )
    lines = [
        f"# Redline estimate — {scope.label}",
        "",
        f"{len(plan.units)} review units in {scope.stats.files} files "
        f"(+{scope.stats.added} −{scope.stats.removed}); "
        f"{len(plan.reviewable)} to review, {len(plan.skipped)} skipped.",
        "",
        "| unit | file | change | +/− | tags | context level | confidence | decision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for u in plan.units:
        tags = ", ".join(t.value for t in u.tags) or "—"
        decision = f"skip: {u.skip_reason}" if u.skip_reason else "review"
        path = u.file_path.replace("|", "\\|").replace("\n", "\\n")
        lines.append(
            f"| {u.unit_id} | `{path}` | {u.patch_type.value} | "
            f"+{u.metrics.added} −{u.metrics.removed} | {tags} | "
            f"{u.rule_context_level.value} | {u.rule_confidence:.2f} | {decision} |"
        )
    reviewable_files = sorted({u.file_path for u in plan.reviewable})
    py_files = [p for p in reviewable_files if p.endswith((".py", ".pyi"))]
    lines += [
        "",
        f"Static analyzers would run on {len(py_files)} Python files "
        f"of {len(reviewable_files)} reviewable files.",
        "No model is called by --estimate; model token and cost estimates arrive with the LLM "
        "pipeline.",
    ]
    return "\n".join(lines) + "\n"
