"""Fitting context into a bundle's budget: the candidates a provider proposes, in priority
order (line ranges of a file version, a text, or why something is missing), and the
`Assembly` that adds each while it fits, tracking the lines already shown per (side, path) so
none appears twice and every section lists why its lines are there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from redline.agent.session import estimate_tokens
from redline.context.budget import Range, merge_ranges, subtract_ranges
from redline.context.bundle import ContextSection
from redline.context.format import line_width, number_lines
from redline.diff.functions import language_for
from redline.model import ReviewUnit

SECTION_OVERHEAD_TOKENS = 20  # heading and fences of one section

Side = str  # "new" or "old"
SourceKey = tuple[Side, str]


@dataclass(frozen=True)
class Lines:
    """Line ranges of one file version; `fallback` is tried when these do not fit."""

    side: Side
    path: str
    ranges: tuple[Range, ...]
    label: str
    kind: str
    fallback: Lines | None = None


@dataclass(frozen=True)
class Text:
    key: tuple[str, str]
    kind: str
    title: str
    text: str


@dataclass(frozen=True)
class Missing:
    reason: str


Candidate = Lines | Text | Missing


@dataclass
class Source:
    """One decoded file version, with the token cost of each numbered line precomputed."""

    side: Side
    path: str
    lines: list[str]
    note: str | None
    data: bytes
    width: int = 0
    _cumulative: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.width = line_width(len(self.lines))
        total = 0
        self._cumulative = [0]
        for line in self.lines:
            total += estimate_tokens(line) + (self.width + 4) // 4
            self._cumulative.append(total)

    def cost(self, ranges: Sequence[Range]) -> int:
        return sum(self._cumulative[e] - self._cumulative[s - 1] for s, e in ranges)

    @property
    def whole(self) -> tuple[Range, ...]:
        return ((1, len(self.lines)),) if self.lines else ()


class SectionMaker(Protocol):
    """What an Assembly needs of its provider: file versions, and sections made its way."""

    def source(self, side: Side, path: str) -> Source | str: ...

    def make_section(self, kind: str, title: str, text: str, language: str) -> ContextSection: ...

    def shown_title(self, text: str) -> str: ...


class Assembly:
    """Fits candidates into the budget in the order given, tracking which lines are shown."""

    def __init__(self, provider: SectionMaker, budget: int, used: int) -> None:
        self.provider = provider
        self.budget = budget
        self.used = used
        self.omitted: list[str] = []
        self._covered: dict[SourceKey, list[Range]] = {}
        self._labels: dict[SourceKey, list[tuple[tuple[Range, ...], str, str]]] = {}
        self._slots: list[SourceKey | ContextSection] = []
        self._texts: set[tuple[str, str]] = set()
        self.in_diff: tuple[str, list[Range]] = ("", [])

    @property
    def left(self) -> int:
        return max(0, self.budget - self.used)

    def omit(self, reason: str) -> None:
        reason = self.provider.shown_title(reason)
        if reason not in self.omitted:
            self.omitted.append(reason)

    def add(self, candidate: Candidate) -> None:
        if isinstance(candidate, Missing):
            self.omit(candidate.reason)
        elif isinstance(candidate, Text):
            self._add_text(candidate)
        else:
            self._add_lines(candidate)

    def _add_text(self, candidate: Text) -> None:
        if candidate.key in self._texts:
            return
        self._texts.add(candidate.key)
        section = self.provider.make_section(
            candidate.kind, candidate.title, candidate.text, "text"
        )
        if section.tokens <= self.left:
            self._slots.append(section)
            self.used += section.tokens
        else:
            self.omit(f"{section.title}: ~{section.tokens} tokens, {self.left} left in the budget")

    def _add_lines(self, candidate: Lines) -> None:
        option: Lines | None = candidate
        first_cost: int | None = None
        while option is not None:
            src = self.provider.source(option.side, option.path)
            if isinstance(src, str):
                self.omit(f"{option.label} of {option.path}: {src}")
                return
            key = (option.side, option.path)
            if (
                option.kind in ("function", "hunk")
                and key == ("new", self.in_diff[0])
                and not subtract_ranges(option.ranges, self.in_diff[1])
            ):
                return  # every line is in the diff already, numbered
            new = subtract_ranges(option.ranges, self._covered.get(key, []))
            if not new:
                return  # every line is already shown
            cost = src.cost(new) + SECTION_OVERHEAD_TOKENS * len(new)
            if cost <= self.left:
                self._covered[key] = merge_ranges([*self._covered.get(key, []), *new])
                self._labels.setdefault(key, []).append((option.ranges, option.label, option.kind))
                if key not in self._slots:
                    self._slots.append(key)
                self.used += cost
                return
            first_cost = first_cost or cost
            option = option.fallback
        side = " (before the change)" if candidate.side == "old" else ""
        self.omit(
            f"{candidate.label} of {candidate.path}{side}: ~{first_cost} tokens, "
            f"{self.left} left in the budget"
        )

    def sections(self, unit: ReviewUnit) -> list[ContextSection]:
        out: list[ContextSection] = []
        for slot in self._slots:
            if isinstance(slot, ContextSection):
                out.append(slot)
                continue
            src = self.provider.source(*slot)
            assert isinstance(src, Source)  # only readable sources are ever covered
            added = set(unit.added_lines) if slot == ("new", unit.file_path) else set()
            for start, end in self._covered[slot]:
                out.append(self._lines_section(src, start, end, added, self._labels[slot]))
        return out

    def _lines_section(
        self,
        src: Source,
        start: int,
        end: int,
        added: set[int],
        labels: list[tuple[tuple[Range, ...], str, str]],
    ) -> ContextSection:
        inside = [
            (label, kind)
            for ranges, label, kind in labels
            if any(s <= end and e >= start for s, e in ranges)
        ]
        names = list(dict.fromkeys(label for label, _ in inside if label != "whole file"))
        kind = inside[0][1] if inside else "file"
        if (start, end) == (1, len(src.lines)):
            title = f"{src.path} (whole file, {count(len(src.lines), 'line')})"
            kind = "previous_version" if src.side == "old" else "file"
        else:
            title = f"{src.path} lines {start}-{end}"
        if src.side == "old":
            title = f"{title}, before the change (old-side line numbers: do not cite them)"
        if names:
            title += ": " + ", ".join(names)
        if src.note:
            title += f" ({src.note})"
        text = number_lines(src.lines[start - 1 : end], start, width=src.width, added=added)
        return self.provider.make_section(kind, title, text, language_for(src.path) or "")


def count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"
