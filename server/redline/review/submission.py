"""The `submit_review` tool: how an agent hands in its findings, and the end of its run.

An agent (`redline ask` today, the debaters next) ends by calling `submit_review` with a
summary and findings in the pipeline's schema. The schema the model sees is plain JSON
Schema; pydantic (`SubmittedReview`) has the last word, and an invalid submission goes back
to the model as a tool error that says what to fix, so nothing is dropped silently.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import ValidationError

from redline.agent.toolkit import Tool, ToolError
from redline.model import Category, Severity
from redline.review.schemas import SubmittedReview

SUBMIT_TOOL: Final = "submit_review"
MAX_FINDINGS: Final = 100
MAX_SUMMARY_CHARS: Final = 4_000

_NULLABLE_INT: Final = {"type": ["integer", "null"], "minimum": 1}

# Hand-written rather than SubmittedReview.model_json_schema(): pydantic emits $defs/$ref and
# anyOf, which some providers behind litellm reject in tool parameters, and the executor's
# validator (agent/toolkit.py) only speaks a plain subset. pydantic still has the last word.
FINDING_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "file": {"type": "string", "minLength": 1, "maxLength": 1024},
        "line": _NULLABLE_INT,
        "end_line": _NULLABLE_INT,
        "severity": {"type": "string", "enum": [s.value for s in Severity]},
        "category": {"type": "string", "enum": [c.value for c in Category]},
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "comment": {"type": "string", "minLength": 1},
        "existing_code": {"type": "string", "minLength": 1},
        "improved_code": {"type": ["string", "null"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["file", "severity", "category", "title", "comment", "existing_code"],
}
SUBMIT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS},
        "findings": {"type": "array", "items": FINDING_SCHEMA},
    },
    "required": ["summary", "findings"],
    "additionalProperties": False,
}
SUBMIT_DESCRIPTION: Final = (
    "Submit your review and end the run. Call it exactly once, last. `summary`: two or three "
    "sentences on the change. `findings`: one object per real problem; `existing_code` is the "
    "exact code of the new version of the file, verbatim, without line numbers or diff markers."
)


def _problems(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:10]:
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def parse_submission(arguments: dict[str, Any]) -> SubmittedReview:
    """The submitted review, validated; ToolError says what to fix so the model can retry."""
    try:
        review = SubmittedReview.model_validate(arguments)
    except ValidationError as exc:
        raise ToolError(
            f"{SUBMIT_TOOL} rejected: {_problems(exc)}. Fix these fields and call "
            f"{SUBMIT_TOOL} again."
        ) from None
    if len(review.findings) > MAX_FINDINGS:
        raise ToolError(
            f"{SUBMIT_TOOL} rejected: {len(review.findings)} findings, at most {MAX_FINDINGS} "
            "are accepted. Keep the most important ones and call it again."
        )
    return review


def submit_review_tool(accepted: list[SubmittedReview]) -> Tool:
    """The terminal tool; each valid submission is appended to `accepted`."""

    async def submit_review(**arguments: Any) -> str:
        review = parse_submission(arguments)
        accepted.append(review)
        return f"review received: {len(review.findings)} findings"

    return Tool(SUBMIT_TOOL, SUBMIT_DESCRIPTION, SUBMIT_SCHEMA, submit_review, terminal=True)
