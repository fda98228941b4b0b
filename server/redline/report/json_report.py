"""JSON reports: the whole Review, and the "simple" list existing review consumers read."""

from __future__ import annotations

import json
from typing import Any

from redline.model import Finding, Review


def render_json(review: Review) -> str:
    """The whole Review (findings, coverage, stats) as indented JSON."""
    return json.dumps(review.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def simple_finding(finding: Finding) -> dict[str, Any]:
    """One finding in the simple export's shape (PR-Agent's `/improve` field names).

    - `label`: the category in lowercase ("security", "functionality", "performance",
      "quality"), matching the lowercase labels those consumers already show.
    - `severity`: spelled exactly as in the detailed JSON ("Critical" … "Info"), so one parser
      reads both exports.
    - `suggestionContent`: the title, a blank line, then the comment.
    - `suggestionLine`: the 1-based new-side line, or null when the finding is unanchored.
    - `improvedCode`: null when there is no suggested code; "" means "delete these lines".
    """
    return {
        "relevantFile": finding.file,
        "existingCode": finding.existing_code,
        "suggestionContent": f"{finding.title}\n\n{finding.comment}".strip(),
        "improvedCode": finding.improved_code,
        "label": finding.category.value.lower(),
        "suggestionLine": finding.line,
        "severity": finding.severity.value,
    }


def render_json_simple(review: Review) -> str:
    data = [simple_finding(f) for f in review.findings]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
