"""A scripted model that knows the ground truth: what Redline itself loses.

`Oracle` answers every role of the review pipeline the way a competent model would, from the
planted bugs: the planner reviews every unit; the reviewer reports one finding per planted bug
in the file under review, quoting the planted lines and proposing the original code as the fix;
the verifier confirms findings placed on a planted bug (±1 line) and rejects the others; the
summary is a short text. On top of that it makes the mistakes real models make (`Noise`,
seeded per case, so a run is reproducible and two cases do not share their luck):

- **line numbers**: off by ±1..±`max_offset`, or *diff-relative* (the line's position within
  the hunk or the diff block the model was shown, not in the file);
- **quotes**: whitespace changed (re-indented, spaces collapsed), a token renamed the way
  models misquote (`item` → `items`, `userId` → `userID`, `==` → `===`), or Redline's own
  gutter (`  42 +| code`) copied along;
- **format**: the JSON in a ```json fence, or with prose before and after it;
- **malformed** first answers (cut-off JSON, a finding without its title, prose only): the
  pipeline re-asks (`review/structured.py`) and the second answer is valid.

What the oracle said is recorded per case (`Said`), with the noise applied, so the measurement
(`eval/loss.py`) can tell what was said correctly from what the pipeline then lost. The oracle
recognises the role from the system prompt (prompts/*.md) and the case from what it is shown:
the file under review, and the planted line's text at its number in the numbered code — so
many cases of the same file can share one server.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from redline.eval.scripted_server import Answer
from redline.eval.truth import Mutant, PlantedBug

_FILE = re.compile(r"^# File under review: `(.+?)`", re.MULTILINE)
_UNIT_ID = re.compile(r'"unit_id": ?"([^"]+)"')
_FINDING = re.compile(r"^## Finding (RL-[0-9a-f-]+)\n- where: (.+?)(?::(\d+))?\n", re.MULTILINE)
_WINDOW_LINE = re.compile(r"^ *(\d+)  (.*)$")
_REASK = "Your answer could not be used"
_BATCH_MARK = "# Several files under review"
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


def _span(bug: PlantedBug) -> tuple[int, int]:
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


class Oracle:
    """A chat handler for `ScriptedServer`: the model that knows where the bugs are."""

    def __init__(self, mutants: Iterable[Mutant], *, seed: int = 0, noise: Noise | None = None):
        self.seed = seed
        self.noise = noise if noise is not None else Noise()
        self.cases: dict[str, Mutant] = {}
        self.by_file: dict[str, list[str]] = {}
        self.said: dict[str, Said] = {}
        self.unmatched = 0  # reviewer calls about a file the oracle could not place
        self._lock = threading.Lock()
        for i, mutant in enumerate(mutants):
            self.add(f"case-{i:04d}", mutant)

    def add(self, case: str, mutant: Mutant) -> None:
        self.cases[case] = mutant
        self.by_file.setdefault(mutant.bug.file, []).append(case)

    def _rng(self, *parts: object) -> random.Random:
        key = ":".join(str(p) for p in (self.seed, *parts))
        return random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))

    # -- the roles --------------------------------------------------------------------------

    def __call__(self, body: dict[str, Any]) -> Answer:
        messages = body.get("messages") or []
        system = str(messages[0].get("content") or "") if messages else ""
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        text = users[0] if users else ""
        reask = len(users) > 1 and users[-1].startswith(_REASK)
        if "You plan a code review" in system:
            units = dict.fromkeys(_UNIT_ID.findall(text))
            plan = [{"unit_id": u, "context_level": "function", "skip": False} for u in units]
            return self._format({"units": plan}, self._rng("planner", text[:200]), reask)
        if "reviewing one file of a change" in system:
            return self._reviewer(text, reask)
        if "You verify the findings" in system:
            return self._verifier(text, reask)
        if "Summarize a code review" in system:
            summary = {"assessment": "The change has bugs to fix.", "priorities": [], "focus": []}
            return json.dumps(summary)
        return json.dumps({"error": "the oracle does not know this role"})

    def _format(
        self,
        answer: dict[str, Any],
        rng: random.Random,
        reask: bool,
        applied: list[str] | None = None,
    ) -> str:
        """The answer as JSON, in a fence and/or with prose around it per the noise (named in
        `applied`); a re-asked answer is bare JSON."""
        data = json.dumps(answer, indent=2)
        if reask:
            return data
        if rng.random() < self.noise.fenced:
            data = f"```json\n{data}\n```"
            if applied is not None:
                applied.append("fenced")
        if rng.random() < self.noise.prose:
            data = f"Here is my review.\n\n{data}\n\nLet me know if you want more detail."
            if applied is not None:
                applied.append("prose")
        return data

    def _malformed(self, answer: dict[str, Any], rng: random.Random) -> str:
        kind = rng.choice(("cut", "schema", "prose"))
        if kind == "cut":
            data = json.dumps(answer)
            return data[: max(1, len(data) * 2 // 3)]
        if kind == "schema" and answer.get("findings"):
            broken = json.loads(json.dumps(answer))
            del broken["findings"][0]["title"]
            return json.dumps(broken)
        return "I looked at the change and found a problem near the loop bound; see above."

    def case_of(self, path: str, text: str) -> str | None:
        """The case whose planted line is shown in `text` at its number (or the only case of
        the file). A case whose line is shown *added* (`+|`) comes first: a deletion's planted
        lines are the unchanged ones around the gap, which every other case of the file shows
        too, so those count only when no added line names a case (and then the removed line
        decides)."""
        candidates = self.by_file.get(path, [])
        added: list[str] = []
        context: list[str] = []
        for case in candidates:
            mutant = self.cases[case]
            lines = mutant.source.splitlines()
            first = _span(mutant.bug)[0]
            if first > len(lines):
                continue
            code = re.escape(lines[first - 1].rstrip())
            found = re.search(rf"^ *{first} ([+ ])\| ?{code} *$", text, re.MULTILINE)
            if found:
                (added if found.group(1) == "+" else context).append(case)
        removed_shown = re.sub(r"-\|\s+", "-| ", text)
        for shown in (added, context):
            # Two mutants giving the line the same text: the removed (original) line decides.
            for case in shown:
                removed = self.cases[case].bug.original.strip().splitlines()
                if not removed or f"-| {removed[0].strip()}" in removed_shown:
                    return case
            if shown:
                return shown[0]
        return candidates[0] if len(candidates) == 1 else None

    def _reviewer(self, text: str, reask: bool) -> str:
        if _BATCH_MARK in text:
            parts = re.split(r"(?=^# File under review: )", text, flags=re.MULTILINE)
            files = []
            for part in parts:
                m = _FILE.search(part)
                if m:
                    found = self._findings(m.group(1), part)
                    files.append({"file": m.group(1), "findings": found, "summary": "reviewed"})
            return self._format({"files": files}, self._rng("batch", text[:200]), reask)
        m = _FILE.search(text)
        path = m.group(1) if m else ""
        findings = self._findings(path, text)
        answer = {"findings": findings, "need_context": [], "summary": f"reviewed {path}"}
        case = self.case_of(path, text) or path
        rng = self._rng("reviewer", case)
        with self._lock:
            said = self.said.get(case)
        applied: list[str] = []
        if not reask and rng.random() < self.noise.malformed:
            reply = self._malformed(answer, rng)
            applied.append("malformed")
        else:
            reply = self._format(answer, rng, reask, applied)
        if said is not None and applied:
            with self._lock:
                said.noise += [a for a in applied if a not in said.noise]
        return reply

    def _findings(self, path: str, text: str) -> list[dict[str, Any]]:
        case = self.case_of(path, text)
        if case is None:
            with self._lock:
                self.unmatched += 1
            return []
        with self._lock:
            said = self.said.get(case)
        if said is None:
            said = self._say(case, text)
            with self._lock:
                said = self.said.setdefault(case, said)
        bug = said.bug
        category = "Security" if bug.operator == "injection" else "Functionality"
        lo, hi = _span(bug)
        return [
            {
                "file": path,
                "line": said.line,
                "end_line": said.line + (hi - lo),
                "severity": "High",
                "category": category,
                "title": f"{bug.operator.replace('_', ' ')} in {bug.function}",
                "comment": f"{bug.description}. Restore the intended code.",
                "existing_code": said.quote,
                "improved_code": bug.original if "\n" not in bug.original else None,
                "confidence": 0.85,
            }
        ]

    def _say(self, case: str, text: str) -> Said:
        """The finding's line and quote for a case, with this case's noise."""
        mutant = self.cases[case]
        bug, noise = mutant.bug, self.noise
        rng = self._rng("say", case)
        lines = mutant.source.splitlines()
        lo, hi = _span(bug)
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
            abs(said.line - lo) <= 20
            or position == said.line
            or close >= 0.8
            or "gutter" in said.noise
        )
        return said

    def _verifier(self, text: str, reask: bool) -> str:
        verdicts = []
        sections = list(_FINDING.finditer(text))
        for k, m in enumerate(sections):
            end = sections[k + 1].start() if k + 1 < len(sections) else len(text)
            fid, path, line = m.group(1), m.group(2).split(" (")[0], m.group(3)
            ok = line is not None and self._on_bug(path, int(line), text[m.end() : end])
            verdict = "CORRECT" if ok else "INCORRECT"
            evidence = "the planted change is at this line" if ok else "no such problem here"
            verdicts.append({"id": fid, "verdict": verdict, "evidence": evidence})
        answer = {"verdicts": verdicts, "quality_score": 85, "feedback": ""}
        rng = self._rng("verifier", *[m.group(1) for m in sections])
        if not reask and rng.random() < self.noise.malformed:
            return self._malformed(answer, rng)
        return self._format(answer, rng, reask)

    def _on_bug(self, path: str, line: int, section: str) -> bool:
        """A finding at `path:line` is on a planted bug: within ±1 of its lines, and the code
        window shows that bug's planted lines (which case it is)."""
        window = {}
        for row in section.splitlines():
            m = _WINDOW_LINE.match(row)
            if m:
                window[int(m.group(1))] = m.group(2)
        for case in self.by_file.get(path, []):
            mutant = self.cases[case]
            lo, hi = _span(mutant.bug)
            if not lo - 1 <= line <= hi + 1:
                continue
            lines = mutant.source.splitlines()
            if all(window.get(n, lines[n - 1]) == lines[n - 1] for n in range(lo, hi + 1)):
                return True
        return False
