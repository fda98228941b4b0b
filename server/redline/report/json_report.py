"""JSON reports: the whole Review, and the "simple" list existing review consumers read."""

from __future__ import annotations

import json
from typing import Any

from redline.model import AnchorState, Finding, Review
from redline.report.baseline import Comparison
from redline.report.markdown import fenced, not_applicable_label


def render_json(review: Review, baseline: Comparison | None = None) -> str:
    """The whole Review (findings, coverage, stats) as indented JSON; with a baseline, a
    `baseline` object {file, new: [ids], unchanged: [ids], absent: [{id, title, file, line}]}."""
    data = review.model_dump(mode="json")
    if baseline is not None:
        data["baseline"] = baseline.as_json()
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def simple_finding(finding: Finding) -> dict[str, Any]:
    """One finding in the simple export's shape (PR-Agent's `/improve` field names).

    - `label`: the category in lowercase ("security", "functionality", "performance",
      "quality"), matching the lowercase labels those consumers already show.
    - `severity`: spelled exactly as in the detailed JSON ("Critical" … "Info"), so one parser
      reads both exports.
    - `suggestionContent`: the title, a blank line, then the comment.
    - `suggestionLine`: the 1-based new-side line, or null when the finding is unanchored.
    - `improvedCode`: null when there is no applicable fix; "" means "delete these lines".
      Consumers apply it as it is, so suggested code that is not an applicable fix (it does
      not parse, or the quoted code is not in the file) is never here: it ends
      `suggestionContent`, labelled as in the Markdown report. The shape has no other field
      for it, and consumers rely on the shape.
    - an approximate location (the quoted code is not in the file) is said in
      `suggestionContent`; `existingCode` is then the model's quote.
    """
    return {
        "relevantFile": finding.file,
        "existingCode": finding.existing_code,
        "suggestionContent": _content(finding),
        "improvedCode": finding.improved_code if finding.fix_applicable else None,
        "label": finding.category.value.lower(),
        "suggestionLine": finding.line,
        "severity": finding.severity.value,
    }


def _content(finding: Finding) -> str:
    text = f"{finding.title}\n\n{finding.comment}".strip()
    if finding.anchor is AnchorState.APPROXIMATE:
        text += "\n\n(Approximate location: the quoted code is not in the file.)"
    if finding.improved_code is not None and not finding.fix_applicable:
        label = not_applicable_label(finding.fix)
        text += f"\n\n{label}\n\n{fenced(finding.improved_code)}"
    return text


def render_json_simple(review: Review) -> str:
    data = [simple_finding(f) for f in review.findings]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
