"""`redline debate --estimate`: the calls, prompt tokens and cost a debate would take, decided
before anything is sent.

Each debater takes one turn per round — at least one model call, at most `debate.turn_steps`
(tool steps) — then states one final position; the summarizer makes one call (two when its
answer must be asked again). Once the transcript passes `debate.transcript_tokens`, a
debater's own model may be asked to compact older turns: those calls are possible, not
planned. Prompt tokens are those of the first call of every turn: the debater's prompts, the
change as `change.change_text` shows it (within `debate.change_tokens`) and the transcript so
far (turns assumed to use their full `debate.turn_tokens`, bounded by
`debate.transcript_tokens`). Prices come from litellm's local price map, per model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from redline.agent.session import estimate_tokens
from redline.config_models import Settings
from redline.debate.conclude import FINAL_PROMPT, SUMMARIZER_PROMPT
from redline.debate.roster import Roster
from redline.debate.run import planned_calls
from redline.debate.turns import system_prompt, turn_request
from redline.money import UNPRICED, usd
from redline.plural import plural
from redline.review.estimate import input_price, request_cap
from redline.review.prompts import load_prompt

SUMMARIZER_REASKS = 1  # a malformed summary is asked for once more (ask_structured)


@dataclass
class ModelCost:
    """One model's share: the debater (or the summarizer) calling it."""

    label: str
    model: str
    calls_min: int
    calls_max: int
    prompt_tokens: int
    input_cost_per_token: float | None

    @property
    def cost_usd(self) -> float | None:
        if self.input_cost_per_token is None:
            return None
        return self.prompt_tokens * self.input_cost_per_token


@dataclass
class DebateEstimate:
    scope_label: str
    rounds: int
    turn_steps: int
    change_tokens: int  # of the change as every debater is shown it
    transcript_tokens: int  # the bound on the transcript a debater is shown
    shares: list[ModelCost] = field(default_factory=list)  # the debaters, then the summarizer
    compaction_max: int = 0  # compaction calls possible on top (not in calls_max)
    max_requests: int = 0  # the run's cap on model requests (llm.max_requests or derived)

    @property
    def calls_min(self) -> int:
        return sum(s.calls_min for s in self.shares)

    @property
    def calls_max(self) -> int:
        return sum(s.calls_max for s in self.shares) + self.compaction_max

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.shares)

    @property
    def cost_usd(self) -> float | None:
        """None when any model is missing from the price map (a partial sum would mislead)."""
        costs = [s.cost_usd for s in self.shares]
        if any(c is None for c in costs):
            return None
        return sum(c for c in costs if c is not None)

    def as_json(self) -> str:
        data = {
            "scope_label": self.scope_label,
            "rounds": self.rounds,
            "turn_steps": self.turn_steps,
            "change_tokens": self.change_tokens,
            "transcript_tokens": self.transcript_tokens,
            "calls_min": self.calls_min,
            "calls_max": self.calls_max,
            "compaction_calls_max": self.compaction_max,
            "prompt_tokens": self.prompt_tokens,
            "cost_usd": self.cost_usd,
            "max_requests": self.max_requests,
            "models": [
                {
                    "label": s.label,
                    "model": s.model,
                    "calls_min": s.calls_min,
                    "calls_max": s.calls_max,
                    "prompt_tokens": s.prompt_tokens,
                    "cost_usd": s.cost_usd,
                }
                for s in self.shares
            ],
        }
        return json.dumps(data, indent=2) + "\n"

    def as_markdown(self) -> str:
        debaters = len(self.shares) - 1
        lines = [
            f"# Redline debate estimate — {self.scope_label}",
            "",
            f"{plural(debaters, 'debater')} × {plural(self.rounds, 'round')} = "
            f"{plural(debaters * self.rounds, 'turn')} "
            f"(each 1 to {self.turn_steps} model calls), one final position per debater, "
            "one neutral summary.",
            f"Model calls: at least {self.calls_min}, at most {self.calls_max}"
            + (
                f" (including up to {self.compaction_max} to compact the transcript)."
                if self.compaction_max
                else "."
            ),
            f"Model request cap: {self.max_requests} (llm.max_requests).",
            f"The change as the debaters see it: about {self.change_tokens} tokens; the "
            f"transcript they see is kept within {self.transcript_tokens} tokens.",
            "",
            "| who | model | calls | prompt tokens (estimated) | cost of the prompts |",
            "|---|---|---|---|---|",
        ]
        for s in self.shares:
            calls = (
                str(s.calls_min) if s.calls_min == s.calls_max else (f"{s.calls_min}–{s.calls_max}")
            )
            lines.append(
                f"| {s.label} | `{s.model}` | {calls} | {s.prompt_tokens} | {_cost(s.cost_usd)} |"
            )
        total = self.cost_usd
        lines += [
            "",
            f"Prompt tokens (first call of every turn, estimated): {self.prompt_tokens}",
            "Cost: "
            + (
                f"about ${total:.4f} for the prompts (answers and tool steps extra)"
                if total is not None
                else f"{UNPRICED} (a model is not in litellm's local price map)"
            ),
            "Nothing was sent to any model.",
        ]
        return "\n".join(lines) + "\n"


def _cost(value: float | None) -> str:
    return usd(value)


def estimate_debate(
    roster: Roster,
    settings: Settings,
    *,
    rounds: int,
    change_tokens: int,
    scope_label: str,
) -> DebateEstimate:
    """`change_tokens`: the change as the engine shows it (`change.change_text`)."""
    debate = settings.debate
    change = change_tokens
    debaters = roster.debaters
    total_turns = len(debaters) * rounds
    asking = estimate_tokens(turn_request("", "", rounds, rounds))  # the turn's own words
    final = estimate_tokens(load_prompt(FINAL_PROMPT))
    shares: list[ModelCost] = []
    compaction = 0
    for i, debater in enumerate(debaters):
        own = estimate_tokens(system_prompt(debater)) + asking + change
        tokens = 0
        for r in range(rounds):
            before = r * len(debaters) + i  # turns spoken before this one
            shown = before * debate.turn_tokens
            tokens += own + min(shown, debate.transcript_tokens)
            if shown > debate.transcript_tokens:
                compaction += 1
        # The final position: the role, the change and the whole debate, within the bound.
        tokens += estimate_tokens(debater.prompt) + final + change
        tokens += min(total_turns * debate.turn_tokens, debate.transcript_tokens)
        shares.append(
            ModelCost(
                label=debater.label,
                model=debater.model,
                calls_min=rounds + 1,
                calls_max=rounds * debate.turn_steps + 1,
                prompt_tokens=tokens,
                input_cost_per_token=input_price(debater.model),
            )
        )
    # The summarizer reads the change and the anonymous positions (each at most a turn long).
    summary_tokens = (
        estimate_tokens(load_prompt(SUMMARIZER_PROMPT))
        + change
        + len(debaters) * debate.turn_tokens
    )
    shares.append(
        ModelCost(
            label="Summarizer",
            model=roster.summarizer_model,
            calls_min=1,
            calls_max=1 + SUMMARIZER_REASKS,
            prompt_tokens=summary_tokens,
            input_cost_per_token=input_price(roster.summarizer_model),
        )
    )
    # As run_debate sets the cap when llm.max_requests is not set.
    planned = planned_calls(len(debaters), rounds) * debate.turn_steps
    return DebateEstimate(
        scope_label=scope_label,
        rounds=rounds,
        turn_steps=debate.turn_steps,
        change_tokens=change,
        transcript_tokens=debate.transcript_tokens,
        shares=shares,
        compaction_max=compaction,
        max_requests=request_cap(planned, settings.llm.max_requests),
    )
