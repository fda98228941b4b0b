"""What a reviewer model is given for one review unit: sections of context (the diff first)
and what did not fit, as `ContextBundle`; `context/provider.py` builds them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from redline.context.format import LEGEND, fence_for
from redline.model import ContextLevel


@dataclass
class ContextSection:
    kind: str  # diff, function, hunk, header, window, file, previous_version, callers, search
    title: str
    text: str
    tokens: int
    language: str = ""  # fence info string

    def render(self) -> str:
        fence = fence_for(self.text)
        return f"### {self.title}\n\n{fence}{self.language}\n{self.text}\n{fence}\n"


@dataclass
class ContextBundle:
    unit_id: str
    level: ContextLevel
    sections: list[ContextSection]
    tokens: int
    omitted: list[str]  # what did not fit the budget or could not be read, and why
    file_path: str = ""

    def render(self, *, legend: bool = True) -> str:
        """Markdown for the reviewer prompt: every section with a heading and fenced code.
        `legend=False` leaves out how code lines are numbered, for a prompt whose instructions
        (prompts/reviewer.md) say it once."""
        parts = [
            f"## Context for {self.file_path or self.unit_id} "
            f"(unit {self.unit_id}, level {self.level.value})\n",
        ]
        if legend:
            parts.append(LEGEND + "\n")
        parts += [s.render() for s in self.sections]
        if self.omitted:
            parts.append("### Not included\n\n" + "\n".join(f"- {o}" for o in self.omitted) + "\n")
        return "\n".join(parts)

    def digest(self) -> str:
        """sha256 of the rendered text: part of the review-cache key."""
        return hashlib.sha256(self.render().encode("utf-8", "surrogatepass")).hexdigest()
