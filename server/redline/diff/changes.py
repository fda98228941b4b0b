"""A unit's changed lines, picked out of its hunks once in the forms its tags and id need."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from redline.diff.file_diff import Hunk
from redline.diff.parse import line_tags

# bytes.translate tables over a hunk's line tags: a 1 selects the line, a 0 skips it.
_CHANGED_SELECTOR = bytes(1 if chr(byte) in "+-" else 0 for byte in range(256))
_REMOVED_SELECTOR = bytes(1 if chr(byte) == "-" else 0 for byte in range(256))
_ADDED_SELECTOR = bytes(1 if chr(byte) == "+" else 0 for byte in range(256))


@dataclass(slots=True)
class Changes:
    """A unit's changed lines in the forms its tags and id need, each built once.

    `text` is the '+'/'-' lines, prefix included, in diff order, joined by "\\n"; `removed_text`
    and `added_text` are the '-' and '+' lines without their prefix, joined the same way.
    """

    count: int
    removed: int
    added: int
    text: str
    removed_text: str
    added_text: str

    @classmethod
    def of(cls, hunks: Sequence[Hunk]) -> Changes:
        lines: list[str] = []
        tag_parts: list[str] = []
        for hunk in hunks:
            lines += hunk.lines
            tag_parts.append(
                hunk.tags if len(hunk.tags) == len(hunk.lines) else line_tags(hunk.lines)
            )
        tags = "".join(tag_parts)
        # The lines are picked by their tags at C level: changes often come as many short runs
        # (a line replaced here and there), where a Python step per line or per run costs more.
        # Tags are ASCII in any diff git writes; anything else takes a per-tag table lookup.
        if tags.isascii():
            raw = tags.encode("ascii")
            changed = list(itertools.compress(lines, raw.translate(_CHANGED_SELECTOR)))
            removed = list(itertools.compress(lines, raw.translate(_REMOVED_SELECTOR)))
            added = list(itertools.compress(lines, raw.translate(_ADDED_SELECTOR)))
        else:
            changed = [line for line, tag in zip(lines, tags, strict=True) if tag in "+-"]
            removed = [line for line in changed if line[0] == "-"]
            added = [line for line in changed if line[0] == "+"]
        return cls(
            count=len(changed),
            removed=len(removed),
            added=len(added),
            text="\n".join(changed),
            removed_text=_unprefixed(removed, "\n-"),
            added_text=_unprefixed(added, "\n+"),
        )

    def material(self, head: str) -> str:
        """`head` and the changed lines, joined by "\\n": what the unit id hashes."""
        return f"{head}\n{self.text}" if self.count else head


def _unprefixed(lines: list[str], prefix: str) -> str:
    """ "\\n".join(line[1:] for line in lines), every line starting with prefix[1]: one C-level
    replace drops the prefix after each newline (no line contains one), and [1:] the first."""
    return "\n".join(lines).replace(prefix, "\n")[1:]


def change_lines(changes: Changes) -> Iterator[str]:
    """The removed then the added lines, without prefix, split only as far as they are read
    (only_comments stops at the first line that is not a comment)."""
    if changes.removed:
        yield from changes.removed_text.split("\n")
    if changes.added:
        yield from changes.added_text.split("\n")
