"""Each reviewed file's changed lines (new-side numbers), for the static analyzers.

A Mapping computed per file when asked, from the units' own added lines, instead of a set per
file held for the whole review: a set of n ints costs about 64·n bytes (its table, sized for
growth, beside the ints), several times the diff's own bytes for those lines — on a change
of thousands of files, the largest thing a review kept (issue 23, "keep memory within a few
times the diff"). The last file asked is kept: the analyzers' results come file by file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from redline.model import ReviewUnit


class ChangedLines(Mapping[str, set[int]]):
    """path → the set of lines its units added, computed on access (the last one kept)."""

    def __init__(self) -> None:
        self._units: dict[str, list[ReviewUnit]] = {}
        self._last: tuple[str, set[int]] | None = None

    def add(self, unit: ReviewUnit) -> None:
        self._units.setdefault(unit.file_path, []).append(unit)
        self._last = None

    def discard(self, path: str) -> None:
        self._units.pop(path, None)
        self._last = None

    def __getitem__(self, path: str) -> set[int]:
        if self._last is not None and self._last[0] == path:
            return self._last[1]
        lines = {n for unit in self._units[path] for n in unit.added_lines}
        self._last = (path, lines)
        return lines

    def __iter__(self) -> Iterator[str]:
        return iter(self._units)

    def __len__(self) -> int:
        return len(self._units)


__all__ = ["ChangedLines"]
