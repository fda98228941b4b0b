"""Files whose lines end in a bare CR ("\\r", classic Mac OS), read with the line breaks every
editor, LSP client, ruff and Python's tokenizer see in them.

git splits lines on "\\n" only, so to git such a file is one line: its diff section is one hunk
that removes the whole old file and adds the whole new one as a single line. Left so, every
change in it would be "line 1" and an analyzer's finding on line 4 would touch no changed line.
Two places make it an ordinary file:

- `lf_sections` (git/stream.py, where every diff Redline reads passes): a section with a bare
  CR in a hunk whose two sides are each the whole file (one hunk, a side of at most one git
  line: then git's hunk holds both versions entire) gets its hunks again from the two versions
  split on "\\r\\n", "\\r" and "\\n", as a line diff of them. Units, totals, the model's diff and
  the changed lines then count lines as an LF file's would.
- `lf_content` (ScopeDiff.read_new/read_old): the version itself with its CR line breaks as
  "\\n", so its line numbers agree with that diff for every reader that splits on "\\n" (the
  context sent to a model, tree-sitter's functions, the minified heuristic); only files with no
  "\\n" but a final one are touched, so git's numbering of any other file is kept.

A file that mixes "\\n" with bare CRs is left as git numbers it.
"""

from __future__ import annotations

import difflib
import re
from typing import Final

_NEWLINE: Final = re.compile(r"\r\n|\r|\n")
# A CR that is a line break to everyone but git: not before an LF, or the last character of a
# file without a final LF (git's "\ No newline at end of file" follows its line).
_BARE_CR: Final = re.compile(r"\r(?!\n)|\r\n\\")
_HUNK: Final = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@[^\n]*\n")
_NEXT: Final = "\ndiff "
CONTEXT: Final = 3  # lines around a change, as git's -U3 (DIFF_OPTIONS)
# Above this many line pairs, the line diff is not computed: the whole old version removed and
# the whole new one added, still split into lines (difflib's matching is quadratic at worst).
_MAX_PAIRS: Final = 4_000_000


def is_cr_only(data: bytes) -> bool:
    """Whether `data`'s line breaks are bare CRs: a CR in it and no LF but a final one."""
    return b"\r" in data and b"\n" not in data[:-1]


def lf_content(data: bytes | None) -> bytes | None:
    """`data` with CR line breaks as LF when they are its line breaks (`is_cr_only`), else as
    it is."""
    if data is None or not is_cr_only(data):
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def lf_sections(text: str) -> str:
    """`text` (whole file sections of a git diff) with each section of a CR-broken file
    re-diffed by lines (see the module docstring); every other section as it is."""
    # One regex pass (~600 MB/s) when there is a CR at all: a CRLF file's diff has one on
    # every line, and none of them is a bare one.
    if "\r" not in text or _BARE_CR.search(text) is None:
        return text
    out: list[str] = []
    start = 0
    while start < len(text):
        end = text.find(_NEXT, start)
        end = len(text) if end == -1 else end + 1
        out.append(_section(text[start:end]))
        start = end
    return "".join(out)


def _section(section: str) -> str:
    at = section.find("\n@@ ")
    # Hunk body lines start with ' ', '+', '-' or '\\': a second "@@" line is a second hunk.
    if at == -1 or section.find("\n@@ ", at + 1) != -1:
        return section
    match = _HUNK.match(section, at + 1)
    if match is None:
        return section
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    body = section[match.end() :]
    if min(old_count, new_count) > 1 or _BARE_CR.search(body) is None:
        return section
    old, new = _sides(body)
    return section[: at + 1] + unified_hunks(split_lines(old), split_lines(new))


def _sides(body: str) -> tuple[str, str]:
    """The old and the new version a one-hunk body holds entire."""
    old: list[str] = []
    new: list[str] = []
    old_end = new_end = True  # ends with a line break
    last = ""
    lines = body.split("\n")
    if lines[-1] == "":
        lines.pop()
    for line in lines:
        tag, rest = (line[:1], line[1:]) if line else (" ", "")  # an empty context line
        if tag == "\\":  # "\ No newline at end of file", about the line before
            old_end = old_end and last == "+"
            new_end = new_end and last == "-"
            continue
        if tag in (" ", "-"):
            old.append(rest)
        if tag in (" ", "+"):
            new.append(rest)
        if tag in (" ", "+", "-"):
            last = tag
    return _joined(old, old_end), _joined(new, new_end)


def _joined(lines: list[str], ends_with_break: bool) -> str:
    text = "\n".join(lines)
    return text + "\n" if lines and ends_with_break else text


def split_lines(text: str) -> list[str]:
    """`text`'s lines split on "\\r\\n", "\\r" and "\\n" (as LSP, ruff and Python's tokenizer
    do; str.splitlines also splits on form feeds and U+2028), without their breaks; a final
    break opens no line."""
    if not text:
        return []
    lines = _NEWLINE.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def unified_hunks(old: list[str], new: list[str]) -> str:
    """The hunks of a line diff of `old` and `new` ("" when they are the same lines), in git's
    unified format with CONTEXT lines around each change."""
    if len(old) * len(new) > _MAX_PAIRS:
        groups = [[("replace", 0, len(old), 0, len(new))]]
    else:
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        groups = list(matcher.get_grouped_opcodes(CONTEXT))
    out: list[str] = []
    for group in groups:
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_span(i1, i2 - i1)} +{_span(j1, j2 - j1)} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [f" {line}\n" for line in old[a1:a2]]
                continue
            out += [f"-{line}\n" for line in old[a1:a2]]
            out += [f"+{line}\n" for line in new[b1:b2]]
    return "".join(out)


def _span(start: int, count: int) -> str:
    """A hunk side as git writes it: 1-based start, count omitted when 1; an empty side
    starts at the line before it."""
    if count == 0:
        return f"{start},0"
    return f"{start + 1}" if count == 1 else f"{start + 1},{count}"
