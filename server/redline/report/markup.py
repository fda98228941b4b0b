"""Code in Markdown that model text cannot break out of: fences and code spans sized past any
backtick run inside, and table cells that a `|` cannot split. The one fence helper: the review
report, the debate's parts (report/debate_markdown.py, debate/summary_markdown.py), the posted
comments (publish/bodies.py) and the editor's hovers (lsp/hover.py) all fence code with it.

A fence is backticks, one more than the longest run in the code (at least three), and nothing
in the code can close it: a closing fence is a line of backticks at least as long. Its info
string is a plain word, never `suggestion`: a forge turns a suggestion block into a one-click
commit, and only `suggestion_fence`, for Redline's own applicable fixes, makes one."""

from __future__ import annotations

import re

from redline.report.references import neutralise_references

_BACKTICKS = re.compile(r"`+")
# An info string: a language name. Anything else (a space, a backtick, an attribute) is dropped.
_INFO = re.compile(r"[A-Za-z0-9_+.#-]*")


def fenced(code: str, language: str = "") -> str:
    """A fenced block that no backtick run inside `code` can close early; read back by a
    CommonMark parser, its content is exactly `code` and a newline."""
    info = language if _INFO.fullmatch(language) and not _is_suggestion(language) else ""
    return _fence(code, info)


def suggestion_fence(code: str, info: str) -> str:
    """Redline's own suggestion block (`info`: `suggestion`, or GitLab's `suggestion:-N+M`),
    for an applicable fix only; empty code deletes the lines it is on."""
    if not _is_suggestion(info):
        raise ValueError(f"not a suggestion info string: {info!r}")
    if code == "":
        return f"```{info}\n```"
    return _fence(code, info)


def _fence(code: str, info: str) -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{code}\n{fence}"


def _is_suggestion(info: str) -> bool:
    return info.strip().lower().startswith("suggestion")


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


def dollars(amount: float, places: int = 0) -> str:
    """`$0.0123`, with a joiner after the `$`: GitLab reads `$12` as a link to snippet 12."""
    return neutralise_references(f"${amount:.{places}f}")
