"""Running the cases through the real review pipeline, for one or several models.

Each case is reviewed exactly as `redline review --range base..head` would review it
(`plan_review` + `run_review` with the user's settings and the given model), with the model's
answer cache off (an eval measures fresh answers). The `on_file` hook collects each file's raw
reviewer answers and anchored findings, from which `score.py` counts what each stage lost.
Without a model the cases are reviewed offline: the analyzers are what is scored.

Several models run side by side: every case is reviewed by each in turn. A model that cannot
be used (no key, nothing listening) is not tried again on the cases after: they are recorded
as errors with its reason, never as misses.

The results are kept like task records: one JSON file per eval run under Redline's cache
directory (`<cache>/evals/<id>.json`, directory 0700, file 0600, secrets redacted).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from redline.config_models import Settings
from redline.errors import RedlineError
from redline.eval.cases import Case
from redline.eval.score import (
    OFFLINE,
    ModelTrace,
    recall_by_language,
    recall_by_operator,
    score_case,
    totals,
)
from redline.eval.truth import CaseResult
from redline.files import atomic_write, cache_root, private_dir
from redline.progress import CancelToken, NullProgress, Progress

EVALS_DIR = "evals"


@dataclass(frozen=True)
class Target:
    """One column of the comparison: a model (or the analyzers alone) and its settings."""

    model: str  # the model string, or OFFLINE
    settings: Settings

    @classmethod
    def of(cls, settings: Settings) -> Target:
        return cls(model=settings.models.model or OFFLINE, settings=settings)


def eval_settings(settings: Settings) -> Settings:
    """The settings a case is reviewed with: the user's, without the answer cache."""
    review = settings.review.model_copy(update={"cache": False})
    return settings.model_copy(update={"review": review})


def run_case(
    case: Case,
    target: Target,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    model_hooks: dict[str, Any] | None = None,
) -> CaseResult:
    """One case reviewed with one target, scored. A review that fails is an error result."""
    return _run_case(case, target, progress, cancel, model_hooks)[0]


def _run_case(
    case: Case,
    target: Target,
    progress: Progress | None,
    cancel: CancelToken | None,
    model_hooks: dict[str, Any] | None,
) -> tuple[CaseResult, str | None]:
    """The case's result, and why the model could not be used when it could not."""
    from redline.review.pipeline import plan_review, run_review
    from redline.review.reviewer import FileReview

    settings = eval_settings(target.settings)
    trace = ModelTrace() if settings.models.model else None

    hooks = dict(model_hooks or {})
    theirs = hooks.get("on_file")

    def on_file(review: FileReview) -> None:
        assert trace is not None
        contents = [r.content for r in review.responses]
        trace.add(review.path, contents, review.findings, review.ok)
        if theirs is not None:
            theirs(review)

    if trace is not None:
        hooks["on_file"] = on_file
    started = time.monotonic()
    try:
        plan = plan_review(case.repo, case.scope, settings, progress, cancel=cancel)
        review = run_review(plan, settings, progress, cancel=cancel, model_hooks=hooks)
    except RedlineError as exc:
        failed = CaseResult(
            case_id=case.case_id,
            bug=case.mutant.bug,
            model=target.model,
            found=False,
            findings=0,
            matching=0,
            seconds=round(time.monotonic() - started, 3),
            error=exc.message,
        )
        return failed, None
    seconds = time.monotonic() - started
    result = score_case(case.case_id, case.mutant, target.model, review, trace, seconds)
    return result, review.model_error


@dataclass
class EvalRun:
    """One `redline eval`: what was run and every case's result."""

    eval_id: str
    source: str  # "bundled corpus" or the repository's path
    seed: int
    models: list[str]
    cases: list[Case] = field(default_factory=list)
    results: list[CaseResult] = field(default_factory=list)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    path: Path | None = None  # where it was saved
    model_errors: dict[str, str] = field(default_factory=dict)  # model → why it was unusable

    def by_operator(self, model: str) -> dict[str, dict[str, int]]:
        found = recall_by_operator(self.results, model)
        return {op: {"found": f, "cases": n} for op, (f, n) in found.items()}

    def by_language(self, model: str) -> dict[str, dict[str, int]]:
        found = recall_by_language(self.results, model)
        return {lang: {"found": f, "cases": n} for lang, (f, n) in found.items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "eval_id": self.eval_id,
            "created_at": self.created_at,
            "source": self.source,
            "seed": self.seed,
            "models": self.models,
            "cases": len(self.cases),
            "model_errors": self.model_errors,
            "totals": [totals(self.results, m).as_dict() for m in self.models],
            "by_language": {m: self.by_language(m) for m in self.models},
            "by_operator": {m: self.by_operator(m) for m in self.models},
            "results": [asdict(r) for r in self.results],
        }


def new_eval_id() -> str:
    return uuid.uuid4().hex[:12]


def run_eval(
    cases: Sequence[Case],
    targets: Sequence[Target],
    *,
    source: str,
    seed: int,
    on_case: Callable[[int, int, CaseResult], None] | None = None,
    progress: Progress | None = None,
    model_hooks: Callable[[Target, Case], dict[str, Any]] | None = None,
) -> EvalRun:
    """Every case with every target; `on_case(done, total, result)` after each review.
    `model_hooks(target, case)` passes extra keyword arguments to the model stages for that
    review (`run_model_review`'s: a `client` — the oracle's, a test's — or `on_attempt`)."""
    run = EvalRun(
        eval_id=new_eval_id(), source=source, seed=seed, models=[t.model for t in targets]
    )
    run.cases = list(cases)
    total = len(cases) * len(targets)
    done = 0
    for case in cases:
        for target in targets:
            unusable = run.model_errors.get(target.model)
            if unusable is not None:
                result = CaseResult(
                    case_id=case.case_id,
                    bug=case.mutant.bug,
                    model=target.model,
                    found=False,
                    findings=0,
                    matching=0,
                    error=f"not run: {unusable}",
                )
            else:
                hooks = model_hooks(target, case) if model_hooks is not None else None
                result, model_error = _run_case(
                    case, target, progress or NullProgress(), None, hooks
                )
                if model_error is not None:
                    run.model_errors[target.model] = model_error
            run.results.append(result)
            done += 1
            if on_case is not None:
                on_case(done, total, result)
    return run


def evals_dir() -> Path:
    return cache_root() / EVALS_DIR


def save_run(run: EvalRun) -> Path:
    """Write the run to `<cache>/evals/<id>.json` (0600 in a 0700 directory, redacted)."""
    from redline.redaction import redact_data

    directory = private_dir(evals_dir())
    path = directory / f"{run.eval_id}.json"
    data = redact_data(run.as_dict())
    atomic_write(path, (json.dumps(data, indent=2, default=str) + "\n").encode("utf-8"))
    run.path = path
    return path


@dataclass
class CaseEstimate:
    model: str
    calls_min: int = 0
    calls_max: int = 0
    prompt_tokens: int = 0
    cost_usd: float | None = 0.0
    units: int = 0


def estimate_eval(cases: Sequence[Case], targets: Sequence[Target]) -> list[CaseEstimate]:
    """The planned model calls, prompt tokens and cost of reviewing every case with every
    target (review/estimate.py on each case's plan); nothing is sent."""
    from redline.review.estimate import estimate_model
    from redline.review.pipeline import plan_review

    out = []
    for target in targets:
        settings = eval_settings(target.settings)
        total = CaseEstimate(model=target.model)
        for case in cases:
            plan = plan_review(case.repo, case.scope, settings, function_metrics=True)
            total.units += len(plan.reviewable)
            estimate = estimate_model(plan, settings)
            if estimate is None:
                continue
            total.calls_min += estimate.calls_min
            total.calls_max += estimate.calls_max
            total.prompt_tokens += estimate.prompt_tokens
            if estimate.cost_usd is None or total.cost_usd is None:
                total.cost_usd = None
            else:
                total.cost_usd += estimate.cost_usd
        if target.model == OFFLINE:
            total.cost_usd = None
        out.append(total)
    return out
