"""Renderers: one Review in, the text a user or a tool reads out.

`render(review, fmt)` with fmt in FORMATS; the per-format functions are public too, and
`sanitize_markdown` is what any surface showing model text (reports, LSP hovers) must apply.
Every format leaves `render` through `escape_controls` (report/controls.py): no control
character reaches a terminal or file, and in JSON and SARIF the escape is JSON's own, so a
parser reads back the same data.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from redline.model import Review
from redline.report.baseline import Comparison
from redline.report.controls import escape_controls
from redline.report.json_report import render_json, render_json_simple
from redline.report.markdown import render_markdown
from redline.report.sanitize import sanitize_markdown
from redline.report.sarif import render_sarif as _sarif_log


def render_sarif(review: Review, baseline: Comparison | None = None) -> str:
    return json.dumps(_sarif_log(review, baseline), indent=2, ensure_ascii=False) + "\n"


def _json_simple(review: Review, baseline: Comparison | None = None) -> str:
    # Its consumers read a bare list of findings: there is no place for a comparison.
    return render_json_simple(review)


_RENDERERS: dict[str, Callable[[Review, Comparison | None], str]] = {
    "markdown": render_markdown,
    "json": render_json,
    "json-simple": _json_simple,
    "sarif": render_sarif,
}
FORMATS = tuple(_RENDERERS)


def render(review: Review, fmt: str, baseline: Comparison | None = None) -> str:
    """The report in `fmt`; with `baseline`, comparing the findings with an earlier report."""
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {FORMATS}") from None
    return escape_controls(renderer(review, baseline))


__all__ = [
    "FORMATS",
    "escape_controls",
    "render",
    "render_json",
    "render_json_simple",
    "render_markdown",
    "render_sarif",
    "sanitize_markdown",
]
