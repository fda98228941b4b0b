"""Reading the code a model quotes: line splitting, whitespace normal form, and the gutters a
model may have copied from its prompt.

Pure text functions shared by the matchers (`review/matchers.py`) and the anchoring of a
finding (`review/anchoring.py`).

A quote is first read as written, so code that merely looks like a gutter (a YAML list, `-x`)
still matches itself; then without a copied gutter:

- **Redline's own** (`context/format.py`): `  219 +| code` (added), `  220  | code`
  (unchanged), `     -| code` (removed: dropped, it is not in the new file) and the `  | …`
  separators of an `__old hunk__`. Exactly one space after `|` belongs to the gutter, so the
  code keeps its indentation and a short line (`  12 +| x = 1`) matches verbatim.
- other line numbers: `12| x`, `12: x`, `L12: x`, PR-Agent's `12 +x` / `12  x`;
- diff markers: `+x`, ` x` (removed `-` lines and `@@` headers are dropped).
"""

from __future__ import annotations

import re

# Same line breaks as ruff, Python's tokenizer and LSP: str.splitlines() also breaks on \x0c,
# U+2028, ... and would shift line numbers.
NEWLINE = re.compile(r"\r\n|\r|\n")
_WS = re.compile(r"\s+")
# context/format.py's number_lines/format_patch: f"{n:>{width}} {mark}| {code}", mark "+"/" ",
# removed lines f"{'':>{width}} -| {code}", separators f"{'':>{width}}  | …".
_REDLINE_GUTTER = re.compile(r"^[ \t]*(?:(\d+) [+ ]|-)\|(?: |$)")
_REDLINE_SEPARATOR = re.compile(r"^[ \t]*\| …$")
# "12| x", "12 | x", "12: x", "L12: x", and PR-Agent's "__new hunk__" style "12 +x" / "12  x".
_NUMBER_GUTTER = re.compile(r"^[ \t]*L?\d+(?:[ \t]*[|:][ \t]?|[ \t](?=[+\- ]))")
_HUNK_HEADER = re.compile(r"^@@ .* @@")
_SECTION = ("__new hunk__", "__old hunk__")


def split_lines(text: str) -> list[str]:
    """Lines of `text` without their line breaks; a trailing break does not open a line."""
    lines = NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def norm(line: str) -> str:
    """A line with runs of whitespace collapsed and the ends stripped."""
    return _WS.sub(" ", line).strip()


def indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _redline_gutter_stripped(lines: list[str]) -> list[str] | None:
    """The quote without Redline's own prompt gutter, or None when not every line has it."""
    kept: list[str] = []
    numbered = False
    for line in lines:
        if not line.strip() or line.strip() in _SECTION or _REDLINE_SEPARATOR.match(line):
            continue
        m = _REDLINE_GUTTER.match(line)
        if m is None:
            return None
        if m.group(1) is None:
            continue  # a removed line: not in the new file
        numbered = True
        kept.append(line[m.end() :])
    return kept if numbered else None


def _gutter_stripped(lines: list[str]) -> list[str] | None:
    """The quote without a copied line-number gutter or diff markers, or None if it has none."""
    body = [line for line in lines if line.strip()]
    if not body:
        return None
    changed = False
    if all(_NUMBER_GUTTER.match(line) for line in body):
        lines = [_NUMBER_GUTTER.sub("", line, count=1) if line.strip() else line for line in lines]
        changed = True
    lines = [line for line in lines if not _HUNK_HEADER.match(line)]
    body = [line for line in lines if line.strip()]
    if (
        body
        and all(line[:1] in "+- " for line in body)
        and any(line[:1] in "+-" for line in body)
        and not any(line.startswith(("+++", "---")) for line in body)
    ):
        lines = [line[1:] for line in lines if not line.startswith("-")]
        changed = True
    return lines if changed else None


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def quote_lines(existing_code: str) -> list[list[str]]:
    """The ways to read a quote: as written, then without a copied gutter (if it has one)."""
    raw = split_lines(existing_code)
    variants = [_trim_blank(raw)]
    # Redline's gutter is recognised first and alone: read as a generic gutter, `  12 +| x`
    # would lose its number but keep `+|`.
    redline = _redline_gutter_stripped(raw)
    stripped = redline if redline is not None else _gutter_stripped(raw)
    if stripped is not None:
        variants.append(_trim_blank(stripped))
    return [v for v in variants if v]


def model_quote(existing_code: str) -> str:
    """The model's quote as shown to a user when it is not the file's text: without a copied
    gutter (the most stripped reading), else as written."""
    variants = quote_lines(existing_code)
    return "\n".join(variants[-1]) if variants else existing_code
