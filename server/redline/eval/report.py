"""`redline eval`'s output: one table with a row per model, then recall per language and per
operator (Markdown), or the saved run's JSON; and the `--estimate` plan."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from redline.eval.run import CaseEstimate, EvalRun
from redline.eval.score import OFFLINE, Totals, recall_by_language, recall_by_operator, totals
from redline.eval.truth import CaseResult
from redline.money import usd

ANCHOR_STATES = ("exact", "relocated", "approximate", "unanchored")


def label(model: str) -> str:
    return "analyzers" if model == OFFLINE else model


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _funnel(t: Totals) -> str:
    if t.model == OFFLINE:
        return "—"
    s = t.stages
    return f"{s.said} → {s.anchored} → {s.verified} → {s.shown}"


def _anchoring(t: Totals) -> str:
    if t.model == OFFLINE:
        return "—"
    return " / ".join(str(t.anchoring.get(state, 0)) for state in ANCHOR_STATES)


def _cost(t: Totals) -> str:
    return "—" if t.model == OFFLINE else usd(t.cost)


def render_markdown(run: EvalRun) -> str:
    cases = len(run.cases)
    lines = [
        f"# Redline eval — {cases} planted bugs ({run.source}, seed {run.seed})",
        "",
        "| model | cases | errors | recall | precision | F1 | said → anchored → verified → "
        "shown | anchoring (exact / relocated / approximate / unanchored) | calls | tokens | "
        "cost | s/case |",
        "|---|--:|--:|--:|--:|--:|---|---|--:|--:|--:|--:|",
    ]
    for model in run.models:
        t = totals(run.results, model)
        per_case = t.seconds_per_case
        lines.append(
            f"| {_cell(label(model))} | {t.cases} | {t.errors} | {_ratio(t.recall)} | "
            f"{_ratio(t.precision)} | {_ratio(t.f1)} | {_funnel(t)} | {_anchoring(t)} | "
            f"{t.calls} | {t.tokens} | {_cost(t)} | "
            f"{'—' if per_case is None else f'{per_case:.2f}'} |"
        )
    lines += _recall_table(run, "language", recall_by_language)
    lines += _recall_table(run, "operator", recall_by_operator)
    notes = _notes(run)
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def _recall_table(
    run: EvalRun,
    name: str,
    recall: Callable[[Sequence[CaseResult], str], dict[str, tuple[int, int]]],
) -> list[str]:
    """Found / cases per language or operator, a column per model."""
    by_model = {m: recall(run.results, m) for m in run.models}
    keys = sorted({k for found in by_model.values() for k in found})
    lines = [
        "",
        f"Recall by {name} (found / cases):",
        "",
        f"| {name} | " + " | ".join(_cell(label(m)) for m in run.models) + " |",
        "|---|" + "--:|" * len(run.models),
    ]
    for key in keys:
        cells = []
        for model in run.models:
            found, n = by_model[model].get(key, (0, 0))
            cells.append(f"{found}/{n}" if n else "—")
        lines.append(f"| {_cell(key)} | " + " | ".join(cells) + " |")
    return lines


def _notes(run: EvalRun) -> list[str]:
    out = []
    for model, error in run.model_errors.items():
        out.append(f"- {_cell(label(model))} could not be used: {_cell(error)}")
    errors = [r for r in run.results if r.error is not None and not r.error.startswith("not run")]
    for r in errors[:10]:
        out.append(f"- {r.case_id} ({_cell(label(r.model))}): {_cell(r.error or '')}")
    if run.path is not None:
        out.append(f"- results saved to {run.path}")
    return out


def render_json(run: EvalRun) -> str:
    data = run.as_dict()
    data["path"] = str(run.path) if run.path is not None else None
    return json.dumps(data, indent=2, default=str) + "\n"


def render_estimate(
    estimates: Sequence[CaseEstimate], cases: int, source: str, *, as_json: bool = False
) -> str:
    if as_json:
        data = {
            "cases": cases,
            "source": source,
            "models": [
                {
                    "model": label(e.model),
                    "calls_min": e.calls_min,
                    "calls_max": e.calls_max,
                    "prompt_tokens": e.prompt_tokens,
                    "cost_usd": e.cost_usd,
                    "units": e.units,
                }
                for e in estimates
            ],
        }
        return json.dumps(data, indent=2) + "\n"
    lines = [
        f"# Redline eval estimate — {cases} planted bugs ({source})",
        "",
        "| model | units | planned calls | prompt tokens | cost (prompts) |",
        "|---|--:|--:|--:|--:|",
    ]
    for e in estimates:
        if e.model == OFFLINE:
            lines.append(f"| analyzers | {e.units} | 0 | 0 | — |")
            continue
        cost = usd(e.cost_usd)
        lines.append(
            f"| {_cell(e.model)} | {e.units} | {e.calls_min} (up to {e.calls_max}) | "
            f"{e.prompt_tokens} | {cost} |"
        )
    lines += ["", "Nothing was sent to any model."]
    return "\n".join(lines) + "\n"
