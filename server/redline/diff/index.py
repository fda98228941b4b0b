"""The review index: what the planner sees of a diff. Metadata only, never code.

The planner is an LLM that chooses how much context each unit gets; it must not see the code
itself (cost, and untrusted text deciding what to read), so this module copies an explicit
allowlist of fields and nothing else. Function names in `metrics` are identifiers, not code.
"""

from __future__ import annotations

from redline.model import ReviewUnit


def review_index(units: list[ReviewUnit]) -> list[dict[str, object]]:
    """One JSON-able dict per unit; never the patch, added lines' text or file content."""
    return [index_entry(unit) for unit in units]


def index_entry(unit: ReviewUnit) -> dict[str, object]:
    m = unit.metrics
    return {
        "unit_id": unit.unit_id,
        "file_path": unit.file_path,
        "old_path": unit.old_path,
        "patch_type": unit.patch_type.value,
        "language": unit.language,
        "tags": [tag.value for tag in unit.tags],
        "metrics": {
            "added": m.added,
            "removed": m.removed,
            "hunks": m.hunks,
            "functions": list(m.functions),
            "single_function": m.single_function,
        },
        "rule_context_level": unit.rule_context_level.value,
        "rule_confidence": unit.rule_confidence,
        "skip_reason": unit.skip_reason,
    }
