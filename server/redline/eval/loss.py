"""Recall lost by Redline itself: each mutant reviewed by the real pipeline against the oracle.

`measure_pipeline_loss` builds each case's repository (the original file committed on `main`,
the mutant on a branch; the scope is the range `main..mutant`), runs `plan_review` and
`run_review` in-process with a model pointing at one `ScriptedServer` serving the `Oracle`,
and follows the planted bug through the stages:

- **said**: the oracle's answer named the bug recoverably (`Said.correct`: its line within the
  noise's reach, a diff-relative line, or a close quote);
- **anchored**: after anchoring, a finding of the reviewer is on the bug (±1 line of a planted
  line, same file);
- **verified**: such a finding was not dropped by the verifier;
- **shown**: such a finding is in the review the user sees (after fusion, dismissals and the
  severity floor).

Loss = 1 − shown/said: what the model said correctly and the user did not see. Each lost case
is listed with the stage that lost it and the noise the oracle applied. The case builder here
is deliberately small; `eval/cases.py` builds the real ones.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from redline.agent.llm import LLMClient
from redline.config_models import (
    AnalyzerSettings,
    LLMSettings,
    ModelSettings,
    ReviewSettings,
    Settings,
)
from redline.eval.noise import Noise, Said
from redline.eval.oracle import Oracle
from redline.eval.scripted_server import ScriptedServer
from redline.eval.truth import Mutant, PlantedBug, StageCounts
from redline.model import Finding, Review
from redline.requests import ScopeKind, ScopeRequest
from redline.review.pipeline import plan_review, run_review
from redline.review.reviewer import FileReview

_GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "Redline Eval",
    "GIT_AUTHOR_EMAIL": "eval@example.invalid",
    "GIT_COMMITTER_NAME": "Redline Eval",
    "GIT_COMMITTER_EMAIL": "eval@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}
STAGES = ("anchoring", "verification", "fusion+filtering")


@dataclass
class CaseLoss:
    case: str
    file: str
    operator: str
    language: str
    line: int  # the first planted line
    noise: list[str]
    stage: str  # one of STAGES, or "error"
    detail: str = ""

    def __str__(self) -> str:
        noise = ",".join(self.noise) or "no noise"
        return (
            f"{self.case} {self.language} {self.operator} {self.file}:{self.line} "
            f"[{noise}] lost at {self.stage}{': ' + self.detail if self.detail else ''}"
        )


@dataclass
class LossReport:
    cases: int = 0
    said: int = 0
    anchored: int = 0
    verified: int = 0
    shown: int = 0
    errors: int = 0
    seconds: float = 0.0
    lost: list[CaseLoss] = field(default_factory=list)
    noise_seen: Counter[str] = field(default_factory=Counter)

    @property
    def loss(self) -> float:
        return 1.0 - self.shown / self.said if self.said else 0.0

    def lost_at(self, stage: str) -> int:
        return sum(1 for c in self.lost if c.stage == stage)

    def render(self) -> str:
        per_case = self.seconds / self.cases if self.cases else 0.0
        lines = [
            f"pipeline loss {self.loss:.2%}: {self.cases} cases, said {self.said}, "
            f"anchored {self.anchored}, verified {self.verified}, shown {self.shown}, "
            f"errors {self.errors}",
            "lost at: " + ", ".join(f"{s} {self.lost_at(s)}" for s in (*STAGES, "error")),
            f"wall time {self.seconds:.1f}s ({per_case * 1000:.0f} ms per case)",
            "noise applied: " + ", ".join(f"{k} {v}" for k, v in sorted(self.noise_seen.items())),
        ]
        lines += [f"  {c}" for c in self.lost]
        return "\n".join(lines)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, check=True, capture_output=True)


def original_source(mutant: Mutant) -> str:
    """The file before the mutation: `mutated` put back to `original` where it was planted
    (searched from the start of the first planted line)."""
    bug, source = mutant.bug, mutant.source
    lines = source.splitlines(keepends=True)
    first = min(bug.lines) if bug.lines else 1
    offset = sum(len(line) for line in lines[: first - 1])
    at = source.find(bug.mutated, offset) if bug.mutated else offset
    if at < 0:
        at = source.find(bug.mutated)
    if at < 0:
        raise ValueError(f"{bug.file}: the mutated text is not in the mutant's source")
    return source[:at] + bug.original + source[at + len(bug.mutated) :]


def build_case_repo(mutant: Mutant, root: Path) -> str:
    """A repository at `root` with the original file (and the mutant's context files) on
    `main` and the mutant on the branch `mutant`; returns the range to review."""
    path = root / mutant.bug.file
    path.parent.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    for other, text in mutant.context:  # the callers' files of a contract change, unchanged
        if other.startswith("/") or ".." in other.split("/"):
            raise ValueError(f"bad context path {other!r}")
        (root / other).parent.mkdir(parents=True, exist_ok=True)
        (root / other).write_text(text, encoding="utf-8")
    path.write_text(original_source(mutant), encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "original")
    _git(root, "checkout", "-q", "-b", "mutant")
    path.write_text(mutant.source, encoding="utf-8")
    _git(root, "commit", "-q", "-am", f"mutant: {mutant.bug.operator}")
    return "main..mutant"


def oracle_settings(base_url: str) -> Settings:
    return Settings(
        models=ModelSettings(
            model="openai/oracle", api_base=base_url, api_key="sk-oracle-scripted-0000"
        ),
        llm=LLMSettings(max_retries=0, timeout=60),
        analyzers=AnalyzerSettings(ruff=False, bandit=False),
        review=ReviewSettings(cache=False),
    )


def on_bug(f: Finding, bug: PlantedBug) -> bool:
    """A finding placed on the planted bug: same file, its lines within ±1 of a planted line."""
    if f.file != bug.file or f.line is None:
        return False
    start, end = f.line, max(f.end_line or f.line, f.line)
    return any(start - 1 <= n <= end + 1 for n in bug.lines)


def _run_case(
    case: str, mutant: Mutant, settings: Settings, prepare: Callable[[Path], None] | None = None
) -> tuple[Review, list[Finding]]:
    root = Path(tempfile.mkdtemp(prefix="redline-oracle-"))
    try:
        scope = build_case_repo(mutant, root)
        if prepare is not None:
            prepare(root)
        anchored: list[Finding] = []

        def on_file(review: FileReview) -> None:
            anchored.extend(review.findings)

        plan = plan_review(root, ScopeRequest(ScopeKind.RANGE, scope), settings)
        hooks = {"client": LLMClient(settings), "on_file": on_file}
        return run_review(plan, settings, model_hooks=hooks), anchored
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _stages(said: Said | None, review: Review, anchored: list[Finding]) -> tuple[StageCounts, str]:
    """The case's counts per stage and the stage that lost it ("" when shown or not said)."""
    counts = StageCounts()
    if said is None or not said.correct:
        return counts, ""
    bug = said.bug
    counts.said = 1
    if not any(on_bug(f, bug) for f in anchored):
        return counts, "anchoring"
    counts.anchored = 1
    dropped = [f for f in review.dropped if on_bug(f, bug)]
    shown = any(on_bug(f, bug) for f in review.findings)
    if dropped and not shown:
        return counts, "verification"
    counts.verified = 1
    if not shown:
        return counts, "fusion+filtering"
    counts.shown = 1
    return counts, ""


def _loss(case: str, bug: PlantedBug, noise: list[str], stage: str, detail: str) -> CaseLoss:
    """A lost case, with where its planted bug is."""
    return CaseLoss(
        case, bug.file, bug.operator, bug.language, min(bug.lines or (0,)), noise, stage, detail
    )


def _detail(stage: str, review: Review, anchored: list[Finding]) -> str:
    if stage == "anchoring":
        return "; ".join(f"{f.anchor.value} at {f.line}" for f in anchored) or "no finding"
    if stage == "verification":
        return "; ".join(
            f"{f.verification.verdict} at {f.line}" for f in review.dropped if f.verification
        )
    return "; ".join(review.coverage.notes[-3:])


def measure_pipeline_loss(
    mutants: Sequence[Mutant],
    *,
    seed: int = 0,
    noise: Noise | None = None,
    workers: int = 1,
    prepare: Callable[[Path], None] | None = None,
) -> LossReport:
    """Each mutant through the real pipeline against the oracle (see the module docstring).
    `prepare(root)` runs on each case's repository before its review (a benchmark builds
    project memory there).

    One case at a time by default: cases in threads each run their own event loop, which
    litellm's process-wide logging worker does not survive cleanly, and CPython 3.11's `ast`
    fails now and then when parsed from several threads ("AST constructor recursion depth
    mismatch"); the cases are short (about 0.1 s each) and the server is shared."""
    oracle = Oracle(mutants, seed=seed, noise=noise)
    report = LossReport(cases=len(mutants))
    started = time.perf_counter()
    # The settings turn the answer cache off: the user's cache is neither read nor written.
    with ScriptedServer(oracle) as server:
        settings = oracle_settings(server.base_url)
        cases = list(oracle.cases.items())
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            futures = [pool.submit(_run_case, c, m, settings, prepare) for c, m in cases]
            outcomes: list[tuple[str, Mutant, tuple[Review, list[Finding]] | None, str]] = []
            for (case, mutant), future in zip(cases, futures, strict=True):
                try:
                    outcomes.append((case, mutant, future.result(), ""))
                except Exception as exc:  # a case that could not run is reported, not lost
                    outcomes.append((case, mutant, None, f"{type(exc).__name__}: {exc}"))
    report.seconds = time.perf_counter() - started
    for case, mutant, result, error in outcomes:
        said = oracle.said.get(case)
        bug = mutant.bug
        noise_applied = list(said.noise) if said else []
        report.noise_seen.update(n.split(":")[0] for n in noise_applied)
        if result is None:
            report.errors += 1
            report.lost.append(_loss(case, bug, noise_applied, "error", error))
            continue
        review, anchored = result
        counts, stage = _stages(said, review, anchored)
        report.said += counts.said
        report.anchored += counts.anchored
        report.verified += counts.verified
        report.shown += counts.shown
        if stage:
            report.lost.append(
                _loss(case, bug, noise_applied, stage, _detail(stage, review, anchored))
            )
    return report
