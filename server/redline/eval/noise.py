"""The mistakes real models make, applied to the oracle's answers (oracle.py), each drawn with
the probability `Noise` gives it from a random generator seeded per case:

- **line numbers**: off by ±1..±`max_offset`, or *diff-relative* (the line's position within
  the hunk or the diff block the model was shown, not in the file);
- **quotes**: whitespace changed (re-indented, spaces collapsed), a token renamed the way
  models misquote (`item` → `items`, `userId` → `userID`, `==` → `===`), or Redline's own
  gutter (`  42 +| code`) copied along;
- **format**: the JSON in a ```json fence, or with prose before and after it;
- **malformed** first answers (cut-off JSON, a finding without its title, prose only): the
  pipeline re-asks (`review/structured.py`) and the second answer is valid.

`say` gives a planted bug's line and quote with the line and quote noise, recorded as `Said`;
`format_answer` and `malformed_answer` give the answer's text.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from redline.eval.truth import Mutant, PlantedBug

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Models misquote names, not keywords.
_KEYWORDS = frozenset(
    [
        "and",
        "as",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "const",
        "continue",
        "def",
        "defer",
        "elif",
        "else",
        "err",
        "except",
        "false",
        "finally",
        "for",
        "func",
        "function",
        "go",
        "if",
        "import",
        "in",
        "is",
        "let",
        "nil",
        "none",
        "not",
        "null",
        "or",
        "pass",
        "raise",
        "return",
        "self",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "var",
        "while",
        "with",
        "yield",
    ]
)


@dataclass(frozen=True)
class Noise:
    """Probabilities per finding (each drawn independently) of the mistakes real models make."""

    line_offset: float = 0.3  # the line number off by ±1..±max_offset
    max_offset: int = 20
    diff_relative: float = 0.15  # the line counted within the hunk / diff block shown
    misquote: float = 0.1  # one token of the quote renamed
    whitespace: float = 0.15  # the quote re-indented or its spaces collapsed
    gutter: float = 0.05  # the prompt's `  42 +| ` gutter copied into the quote
    fenced: float = 0.3  # the answer in a ```json fence
    prose: float = 0.15  # prose before and after the JSON
    malformed: float = 0.1  # a first answer the pipeline must re-ask

    @classmethod
    def none(cls) -> Noise:
        return cls(0, 20, 0, 0, 0, 0, 0, 0, 0)


@dataclass
class Said:
    """What the oracle told the pipeline about one planted bug."""

    case: str
    bug: PlantedBug
    line: int  # the line number it gave
    quote: str  # the existing_code it gave
    noise: list[str] = field(default_factory=list)  # e.g. ["offset:+7", "misquote", "fenced"]
    correct: bool = True  # recoverable: line within max offset, diff-relative, or a close quote


def bug_span(bug: PlantedBug) -> tuple[int, int]:
    return (min(bug.lines), max(bug.lines)) if bug.lines else (1, 1)


def _rename(line: str, rng: random.Random) -> str | None:
    """`line` with one identifier misquoted the way models do, or None if it has none."""
    words = [
        m
        for m in _IDENT.finditer(line)
        if len(m.group()) >= 2 and m.group().lower() not in _KEYWORDS
    ]
    if not words:
        return line.replace("==", "===", 1) if "==" in line else None
    m = rng.choice(words)
    w = m.group()
    if "_" in w.strip("_"):
        new = re.sub(r"_([a-z])", lambda x: x.group(1).upper(), w)  # snake → camel
    elif w.endswith("s") and len(w) > 3:
        new = w[:-1]
    elif w[-2:].lower() == "id":
        new = w[:-2] + ("ID" if w[-2:] == "Id" else "Id")
    else:
        new = w + "s"
    return line[: m.start()] + new + line[m.end() :]


def _diff_position(text: str, line: int) -> int | None:
    """Where `line` (new side) sits in the numbered diff the model was shown, counted the way
    a model counting diff lines would: within its `__new hunk__` or from the block's `@@`."""
    rows = text.splitlines()
    pattern = re.compile(rf"^ *{line} [+ ]\|")
    for i, row in enumerate(rows):
        if not pattern.match(row):
            continue
        start = i
        while start > 0 and not rows[start - 1].startswith(("__new hunk__", "@@", "```")):
            start -= 1
        return i - start + 1
    return None


def say(case: str, mutant: Mutant, text: str, noise: Noise, rng: random.Random) -> Said:
    """The finding's line and quote for a case (`mutant`, shown `text`), with this case's noise
    drawn from `rng`."""
    bug = mutant.bug
    lines = mutant.source.splitlines()
    lo, hi = bug_span(bug)
    truth = lines[lo - 1 : hi]
    said = Said(case, bug, lo, "\n".join(truth))
    roll = rng.random()
    position = _diff_position(text, lo)
    if roll < noise.diff_relative and position is not None:
        said.line = position
        said.noise.append(f"diff-relative:{position}")
    elif roll < noise.diff_relative + noise.line_offset:
        delta = rng.randint(1, noise.max_offset) * rng.choice((-1, 1))
        said.line = max(1, lo + delta)
        said.noise.append(f"offset:{delta:+d}")
    quote = list(truth)
    if rng.random() < noise.misquote:
        i = rng.randrange(len(quote))
        renamed = _rename(quote[i], rng)
        if renamed is not None and renamed != quote[i]:
            quote[i] = renamed
            said.noise.append("misquote")
    if rng.random() < noise.whitespace:
        if rng.random() < 0.5:
            quote = [q.strip() for q in quote]
            said.noise.append("ws:dedent")
        else:
            quote = [re.sub(r"(?<=\S) (?=\S)", "  ", q, count=1) for q in quote]
            said.noise.append("ws:spaces")
    if rng.random() < noise.gutter:
        quote = [f"{lo + k:>4} +| {q}" for k, q in enumerate(quote)]
        said.noise.append("gutter")
    said.quote = "\n".join(quote)
    close = difflib.SequenceMatcher(
        None, " ".join(" ".join(truth).split()), " ".join(" ".join(quote).split())
    ).ratio()
    said.correct = (
        abs(said.line - lo) <= 20 or position == said.line or close >= 0.8 or "gutter" in said.noise
    )
    return said


def format_answer(
    answer: dict[str, Any],
    noise: Noise,
    rng: random.Random,
    reask: bool,
    applied: list[str] | None = None,
) -> str:
    """The answer as JSON, in a fence and/or with prose around it per the noise (named in
    `applied`); a re-asked answer is bare JSON."""
    data = json.dumps(answer, indent=2)
    if reask:
        return data
    if rng.random() < noise.fenced:
        data = f"```json\n{data}\n```"
        if applied is not None:
            applied.append("fenced")
    if rng.random() < noise.prose:
        data = f"Here is my review.\n\n{data}\n\nLet me know if you want more detail."
        if applied is not None:
            applied.append("prose")
    return data


def malformed_answer(answer: dict[str, Any], rng: random.Random) -> str:
    """A first answer the pipeline must re-ask: cut-off JSON, a finding without its title, or
    prose only."""
    kind = rng.choice(("cut", "schema", "prose"))
    if kind == "cut":
        data = json.dumps(answer)
        return data[: max(1, len(data) * 2 // 3)]
    if kind == "schema" and answer.get("findings"):
        broken = json.loads(json.dumps(answer))
        del broken["findings"][0]["title"]
        return json.dumps(broken)
    return "I looked at the change and found a problem near the loop bound; see above."
