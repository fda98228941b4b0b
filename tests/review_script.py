"""A scripted *reviewer*: a ScriptedLLM handler that answers each pipeline role the way a
competent model would, from a table of findings per file, with hooks for fault injection.

It recognises the role from the system prompt (the prompts in prompts/) and the file under
review from the reviewer's user message, so tests can say "the reviewer finds X in app.py"
and "the verifier rejects finding Y" without caring about call order.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redline.agent.llm import LLMClient
from redline.config_models import AnalyzerSettings, LLMSettings, ModelSettings, Settings
from redline.model import Review
from redline.requests import ScopeKind, ScopeRequest
from redline.review.pipeline import plan_review, run_review

from scripted_llm import Reply, ScriptedLLM

_FILE = re.compile(r"^# File under review: `(.+?)`", re.MULTILINE)
_FINDING_ID = re.compile(r"^## Finding (RL-[0-9a-f]+)", re.MULTILINE)
_TITLE = re.compile(r"^- title: (.*)$", re.MULTILINE)
_UNIT_ID = re.compile(r'"unit_id": ?"([^"]+)"')
BATCH_MARK = "# Several files under review"  # prompts/reviewer_batch.md


def role_of(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"] if body.get("messages") else ""
    if "You plan a code review" in system:
        return "planner"
    if "reviewing one file of a change" in system:
        return "reviewer"
    if "You verify the findings" in system:
        return "verifier"
    if "Summarize a code review" in system:
        return "summarizer"
    return "other"


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "user"
    )


@dataclass
class ReviewScript:
    findings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # title substring → verdict ("INCORRECT", "PARTIALLY_CORRECT"); default CORRECT
    verdicts: dict[str, str] = field(default_factory=dict)
    quality: list[int] = field(default_factory=lambda: [85])  # per verifier call, last repeats
    planner_level: str = "function"
    delay: float = 0.0
    # (role, file or "") → list of replies to serve first (fault injection), consumed in order
    faults: dict[tuple[str, str], list[Reply]] = field(default_factory=dict)
    on_request: Callable[[str, str, dict[str, Any]], None] | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _verifier_calls: int = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        role = role_of(body)
        text = user_text(body)
        match = _FILE.search(text)
        path = match.group(1) if match else ""
        with self._lock:
            self.calls.append((role, path))
            queue = self.faults.get((role, path)) or self.faults.get((role, ""))
            if queue:
                return queue.pop(0)
        if self.on_request is not None:
            self.on_request(role, path, body)
        answer = getattr(self, f"_{role}", self._other)(text, path)
        return Reply.text(json.dumps(answer), delay=self.delay)

    def _planner(self, text: str, path: str) -> dict[str, Any]:
        units = [
            {"unit_id": uid, "context_level": self.planner_level, "requests": [], "skip": False}
            for uid in dict.fromkeys(_UNIT_ID.findall(text))
        ]
        return {"units": units}

    def _reviewer(self, text: str, path: str) -> dict[str, Any]:
        if BATCH_MARK in text:  # several small files in one call: an entry per file
            paths = list(dict.fromkeys(_FILE.findall(text)))
            return {"files": [dict(self._one_file(p), file=p) for p in paths]}
        return self._one_file(path)

    def _one_file(self, path: str) -> dict[str, Any]:
        found = [dict(f, file=f.get("file", path)) for f in self.findings.get(path, [])]
        return {"findings": found, "need_context": [], "summary": f"reviewed {path}"}

    def _verifier(self, text: str, path: str) -> dict[str, Any]:
        ids = _FINDING_ID.findall(text)
        titles = _TITLE.findall(text)
        verdicts = []
        for fid, title in zip(ids, titles, strict=False):
            verdict = "CORRECT"
            for needle, v in self.verdicts.items():
                if needle in title:
                    verdict = v
            verdicts.append({"id": fid, "verdict": verdict, "evidence": f"checked: {title}"})
        with self._lock:
            score = self.quality[min(self._verifier_calls, len(self.quality) - 1)]
            self._verifier_calls += 1
        feedback = "" if score >= 50 else "Drop speculative findings; quote the exact code."
        return {"verdicts": verdicts, "quality_score": score, "feedback": feedback}

    def _summarizer(self, text: str, path: str) -> dict[str, Any]:
        return {
            "assessment": "The change needs fixes before merging.",
            "priorities": ["Fix the shell injection in app/reports.py"],
            "focus": ["app/reports.py"],
        }

    def _other(self, text: str, path: str) -> dict[str, Any]:
        return {"error": "unexpected request"}

    def count(self, role: str) -> int:
        return sum(1 for r, _ in self.calls if r == role)


def review_branch(root: Path, llm: ScriptedLLM, base: str = "main") -> tuple[Review, Counter[str]]:
    """A model review of the branch against `base` through `llm` (analyzers off, no retries),
    and the model calls it made, by role."""
    settings = Settings(
        models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="k"),
        llm=LLMSettings(max_retries=0, timeout=20),
        analyzers=AnalyzerSettings(ruff=False, bandit=False),
    )
    before = len(llm.requests)
    plan = plan_review(root, ScopeRequest(ScopeKind.BRANCH, base), settings)
    result = run_review(plan, settings, model_hooks={"client": LLMClient(settings)})
    return result, Counter(role_of(b) for b in llm.requests[before:])
