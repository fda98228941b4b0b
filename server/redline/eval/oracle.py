"""A scripted model that knows the ground truth: what Redline itself loses.

`Oracle` answers every role of the review pipeline the way a competent model would, from the
planted bugs: the planner reviews every unit; the reviewer reports one finding per planted bug
in the file under review, quoting the planted lines and proposing the original code as the fix;
the verifier confirms findings placed on a planted bug (±1 line) and rejects the others; the
summary is a short text. On top of that it makes the mistakes real models make (noise.py:
line numbers, quotes, format, malformed first answers; `Noise`, seeded per case, so a run is
reproducible and two cases do not share their luck).

What the oracle said is recorded per case (`Said`), with the noise applied, so the measurement
(`eval/loss.py`) can tell what was said correctly from what the pipeline then lost. The oracle
recognises the role from the system prompt (prompts/*.md) and the case from what it is shown:
the file under review, and the planted line's text at its number in the numbered code — so
many cases of the same file can share one server.

A bug whose operator changed a contract that another file relies on (truth.CONTEXT_OPERATORS:
`bug.callers`) is found only when the prompt shows one of those calls — a numbered line of a
section of the caller's file, at its line, with its code: what a model would need to see it.
The oracle reads the context bundle the real pipeline built, so whether the bug is found is
what the context gave, not what the oracle knows.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections.abc import Iterable
from typing import Any

from redline.eval.noise import Noise, Said, bug_span, format_answer, malformed_answer, say
from redline.eval.scripted_server import Answer
from redline.eval.truth import CallSite, Mutant

_FILE = re.compile(r"^# File under review: `(.+?)`", re.MULTILINE)
_UNIT_ID = re.compile(r'"unit_id": ?"([^"]+)"')
_FINDING = re.compile(r"^## Finding (RL-[0-9a-f-]+)\n- where: (.+?)(?::(\d+))?\n", re.MULTILINE)
_WINDOW_LINE = re.compile(r"^ *(\d+)  (.*)$")
_REASK = "Your answer could not be used"
_BATCH_MARK = "# Several files under review"


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
            return format_answer(
                {"units": plan}, self.noise, self._rng("planner", text[:200]), reask
            )
        if "reviewing one file of a change" in system:
            return self._reviewer(text, reask)
        if "You verify the findings" in system:
            return self._verifier(text, reask)
        if "Summarize a code review" in system:
            summary = {"assessment": "The change has bugs to fix.", "priorities": [], "focus": []}
            return json.dumps(summary)
        return json.dumps({"error": "the oracle does not know this role"})

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
            first = bug_span(mutant.bug)[0]
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
            return format_answer(
                {"files": files}, self.noise, self._rng("batch", text[:200]), reask
            )
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
            reply = malformed_answer(answer, rng)
            applied.append("malformed")
        else:
            reply = format_answer(answer, self.noise, rng, reask, applied)
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
        callers = self.cases[case].bug.callers
        if callers and not any(shows_call(text, site) for site in callers):
            return []  # the change alone does not show the bug: the caller is not in view
        with self._lock:
            said = self.said.get(case)
        if said is None:
            said = self._say(case, text)
            with self._lock:
                said = self.said.setdefault(case, said)
        bug = said.bug
        category = "Security" if bug.operator == "injection" else "Functionality"
        lo, hi = bug_span(bug)
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
        """The finding's line and quote for a case, with this case's noise (its own seed)."""
        return say(case, self.cases[case], text, self.noise, self._rng("say", case))

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
            return malformed_answer(answer, rng)
        return format_answer(answer, self.noise, rng, reask)

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
            lo, hi = bug_span(mutant.bug)
            if not lo - 1 <= line <= hi + 1:
                continue
            lines = mutant.source.splitlines()
            if all(window.get(n, lines[n - 1]) == lines[n - 1] for n in range(lo, hi + 1)):
                return True
        return False


def shows_call(text: str, site: CallSite) -> bool:
    """Whether a prompt shows the call: a section titled with its file (`### path ...`) whose
    numbered lines hold its line number with its code (the context bundle's format)."""
    code = re.escape(site.code.strip())
    line = re.compile(rf"^ *{site.line} [ +]\| \s*{code}\s*$", re.MULTILINE)
    for section in re.split(r"^### ", text, flags=re.MULTILINE)[1:]:
        title = section.split("\n", 1)[0]
        if (title == site.path or title.startswith(site.path + " ")) and line.search(section):
            return True
    return False
