"""`redline review --estimate`: what a review would look at, decided without running anything.

No analyzer runs and no model is called: the units, the skip decisions and the rule plan come
from the diff alone; with a model configured, the planned calls and prompt tokens come from the
real prompts and context bundles (sized, not sent: built without the redaction pass, see
`_SizingContext`), and the cost from litellm's local price map (read without importing litellm
when the model is in it).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.agent.session import estimate_tokens
from redline.config_models import Settings
from redline.context.provider import ContextProvider
from redline.diff import review_index
from redline.model import ReviewUnit
from redline.money import UNPRICED
from redline.review.batching import group_sizes
from redline.review.prompts import load_prompt
from redline.review.reviewer import MAX_EXTRA_ROUNDS
from redline.tools.sandbox import ToolContext, make_visible

if TYPE_CHECKING:
    from redline.review.plan import Plan

# The default cap on model requests per run: room for every planned call twice (retries,
# re-asks, context rounds, one re-review) plus a fixed margin. `llm.max_requests` replaces it.
REQUEST_CAP_FACTOR = 2
REQUEST_CAP_MARGIN = 20


def planned_calls(files: int) -> int:
    """A review's model calls with one reviewer call per file (the most the first attempt
    makes: small files of a wide change share calls, see batching.py): the planner, the
    reviewers, the verifier and the summary (none without files)."""
    return 1 + files + 2 if files else 0


def request_cap(planned: int, configured: int | None) -> int:
    """The run's cap on model requests: the user's `llm.max_requests`, else derived from the
    planned calls."""
    if configured is not None:
        return configured
    return REQUEST_CAP_FACTOR * planned + REQUEST_CAP_MARGIN


def render_estimate(
    plan: Plan, *, as_json: bool = False, model_estimate: ModelEstimate | None = None
) -> str:
    scope = plan.scope
    if as_json:
        data: dict[str, object] = {  # "scope" and "scope_label" as in a review's JSON
            "scope": str(scope.request.kind),
            "scope_label": scope.label,
            "stats": scope.stats.model_dump(),
            "units": review_index(plan.units),
        }
        if model_estimate is not None:
            data["model"] = {
                "model": model_estimate.model,
                "calls_min": model_estimate.calls_min,
                "calls_max": model_estimate.calls_max,
                "prompt_tokens": model_estimate.prompt_tokens,
                "cost_usd": model_estimate.cost_usd,
                "max_requests": model_estimate.max_requests,
            }
        return json.dumps(data, indent=2)
    lines = [
        f"# Redline estimate — {scope.label}",
        "",
        f"{len(plan.units)} review units in {scope.stats.files} files "
        f"(+{scope.stats.added} −{scope.stats.removed}); "
        f"{len(plan.reviewable)} to review, {len(plan.skipped)} skipped.",
        "",
        "| unit | file | change | +/− | tags | context level | confidence | decision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for u in plan.units:
        tags = ", ".join(t.value for t in u.tags) or "—"
        decision = f"skip: {u.skip_reason}" if u.skip_reason else "review"
        path = u.file_path.replace("|", "\\|").replace("\n", "\\n")
        lines.append(
            f"| {u.unit_id} | `{path}` | {u.patch_type.value} | "
            f"+{u.metrics.added} −{u.metrics.removed} | {tags} | "
            f"{u.rule_context_level.value} | {u.rule_confidence:.2f} | {decision} |"
        )
    reviewable_files = sorted({u.file_path for u in plan.reviewable})
    py_files = [p for p in reviewable_files if p.endswith((".py", ".pyi"))]
    lines += [
        "",
        f"Static analyzers would run on {len(py_files)} Python files "
        f"of {len(reviewable_files)} reviewable files.",
    ]
    if model_estimate is None:
        lines.append("No model is configured: the review would use the static analyzers only.")
    else:
        lines += ["", *model_estimate.lines()]
    return "\n".join(lines) + "\n"


@dataclass
class ModelEstimate:
    """Planned model calls and prompt tokens, from the real prompts and context bundles (built
    at the rule level, as the review would before the planner deepens any of them)."""

    model: str
    calls_min: int
    calls_max: int
    prompt_tokens: int
    input_cost_per_token: float | None
    max_requests: int = 0  # the run's cap on model requests (request_cap)

    @property
    def cost_usd(self) -> float | None:
        if self.input_cost_per_token is None:
            return None
        return self.prompt_tokens * self.input_cost_per_token

    def lines(self) -> list[str]:
        cost = (
            f"about ${self.cost_usd:.4f} for the prompts (answers extra)"
            if self.cost_usd is not None
            else f"{UNPRICED} ({self.model} is not in litellm's local price map)"
        )
        return [
            f"Model: {self.model}",
            f"Planned model calls: {self.calls_min} (up to {self.calls_max} with context rounds "
            "and re-reviews)",
            f"Model request cap: {self.max_requests} (llm.max_requests)",
            f"Prompt tokens (first attempt, estimated): {self.prompt_tokens}",
            f"Cost: {cost}",
            "Nothing was sent to the model.",
        ]


def estimate_model(plan: Plan, settings: Settings) -> ModelEstimate | None:
    model = settings.models.model
    if not model:
        return None
    scope = plan.scope
    sizing = _SizingContext(scope.repo_root, runner=scope.runner, old_rev=scope.old_rev)
    # Without project memory: an estimate does not load the embedding model (memory adds
    # context within the same token budget).
    provider = ContextProvider(
        scope, tool_ctx=sizing, token_budget=settings.review.context_tokens, use_memory=False
    )
    by_file: dict[str, list[ReviewUnit]] = {}
    for unit in plan.reviewable:
        by_file.setdefault(unit.file_path, []).append(unit)
    reviewer_system = estimate_tokens(load_prompt("reviewer"))
    tokens = estimate_tokens(load_prompt("planner")) + estimate_tokens(
        json.dumps(review_index(plan.reviewable), indent=1)
    )
    file_tokens = [
        sum(provider.bundle(unit, unit.rule_context_level).tokens for unit in units)
        for units in by_file.values()
    ]
    # The reviewer calls the review will make: small files of a wide change share one.
    groups = group_sizes(file_tokens)
    batch_prompt = estimate_tokens(load_prompt("reviewer_batch"))
    for group in groups:
        tokens += reviewer_system + (batch_prompt if len(group) > 1 else 0)
        tokens += sum(file_tokens[i] for i in group)
    # Verifier and summary prompts depend on the findings; count their fixed part.
    tokens += estimate_tokens(load_prompt("verifier")) + estimate_tokens(load_prompt("summarizer"))
    files = len(by_file)
    calls_min = 1 + len(groups) + 2 if files else 0
    calls_max = 1 + 3 * (files * (1 + MAX_EXTRA_ROUNDS) + 2) if files else 0
    return ModelEstimate(
        model=model,
        calls_min=calls_min,
        calls_max=calls_max,
        prompt_tokens=tokens,
        input_cost_per_token=input_price(model),
        # As the review sets it: from one call per file, since a batch whose answer is
        # unusable is reviewed again file by file.
        max_requests=request_cap(planned_calls(files), settings.llm.max_requests),
    )


class _SizingContext(ToolContext):
    """The estimate's tool context: bundles are built only to be measured, and nothing built
    here leaves the process, so their text is not redacted (the redaction regexes were most of
    an estimate's time: 5.6 s of 19 s on a 1,112-file change). A masked secret's placeholder is
    about as long as the secret, so the token count barely moves. Invisible characters are still
    made visible, as they are in a review: that changes the length."""

    def clean(self, text: str) -> str:
        return make_visible(text)


# litellm's bundled price map: what `litellm.model_cost` is loaded from (the loader sets
# LITELLM_LOCAL_MODEL_COST_MAP), read here without importing litellm (seconds).
_PRICE_FILE = "model_prices_and_context_window_backup.json"


def input_price(model: str) -> float | None:
    names = (model, model.split("/", 1)[-1])
    try:
        info = _bundled_price(names)
        if info is None:  # not in the file (or no file): ask litellm, which expands aliases
            from redline.agent.llm import load_litellm

            cost = load_litellm().model_cost
            info = cost.get(names[0]) or cost.get(names[1])
    except Exception:  # pricing is informative; never let it fail an estimate
        return None
    if not info or info.get("input_cost_per_token") is None:
        return None
    return float(info["input_cost_per_token"])


def _bundled_price(names: tuple[str, str]) -> dict[str, Any] | None:
    """The first of `names` with an entry in litellm's bundled price map, found without
    importing litellm; None when there is no such entry or the file is not where it was."""
    spec = importlib.util.find_spec("litellm")  # finds the package; does not import it
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / _PRICE_FILE
        if path.is_file():
            prices = json.loads(path.read_bytes())
            for name in names:
                info = prices.get(name)
                if isinstance(info, dict) and info.get("input_cost_per_token") is not None:
                    return info
            return None
    return None
