"""Code in Markdown that model text cannot break out of: fences and code spans sized past any
backtick run inside, and table cells that a `|` cannot split. Shared by the review report and
the debate's parts (report/debate_markdown.py, debate/summary_markdown.py)."""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")


def fenced(code: str, language: str = "") -> str:
    """A fenced block that no backtick run inside `code` can close early."""
    longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code}\n{fence}"


def inline_code(text: str) -> str:
    """A code span that survives backticks inside the text."""
    text = " ".join(text.split())
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def table_cell(text: str) -> str:
    """One line of (already sanitized) text for a table cell: a `|` would end the cell, even
    inside a code span, so it is escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def quoted(text: str) -> str:
    """Text as a blockquote: a model's headings and rules then stay inside its entry instead
    of restructuring the report around it."""
    return "\n".join(f"> {line}".rstrip() for line in text.strip().splitlines()) or ">"
