"""Renderers: one Review in, the text a user or a tool reads out.

`render(review, fmt)` with fmt in FORMATS; the per-format functions are public too, and
`sanitize_markdown` is what any surface showing model text (reports, LSP hovers) must apply.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from redline.model import Review
from redline.report.json_report import render_json, render_json_simple
from redline.report.markdown import render_markdown
from redline.report.sanitize import sanitize_markdown
from redline.report.sarif import render_sarif as _sarif_log


def render_sarif(review: Review) -> str:
    return json.dumps(_sarif_log(review), indent=2, ensure_ascii=False) + "\n"


_RENDERERS: dict[str, Callable[[Review], str]] = {
    "markdown": render_markdown,
    "json": render_json,
    "json-simple": render_json_simple,
    "sarif": render_sarif,
}
FORMATS = tuple(_RENDERERS)


def render(review: Review, fmt: str) -> str:
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {FORMATS}") from None
    return renderer(review)


__all__ = [
    "FORMATS",
    "render",
    "render_json",
    "render_json_simple",
    "render_markdown",
    "render_sarif",
    "sanitize_markdown",
]
