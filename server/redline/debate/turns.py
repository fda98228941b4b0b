"""One debater's turn: its role, the change, the transcript so far, and its read-only tools.

The turn is an agent run (agent/loop.py) limited to `debate.turn_steps` model calls, streamed
as it is written. Redline relays what the debater says and decides nothing about its content;
the only thing read from the text is whether the debater passed ("PASS": nothing to add).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from redline.agent.llm import LLMClient
from redline.agent.loop import Agent
from redline.agent.toolkit import ToolRegistry
from redline.debate.roster import Debater
from redline.review.prompts import load_prompt

# "PASS", "Pass.", "**PASS** — nothing to add", "Nothing to add." — and nothing more of
# substance after it.
_PASS = re.compile(r"^\W*(pass|nothing (?:more |further )?to add)\b\W*(nothing to add\W*)?$", re.I)


def is_pass(text: str) -> bool:
    return bool(_PASS.match(text.strip())) if len(text.strip()) <= 60 else False


@dataclass
class TurnOutcome:
    kind: str  # turn | pass | skipped
    text: str
    note: str | None
    stop_reason: str  # the agent's: final_answer, max_steps, error, budget, request_cap, ...
    error: str | None
    steps: int
    tool_calls: int
    latency_s: float


def system_prompt(debater: Debater) -> str:
    return f"{load_prompt('debate/debater')}\n\n## Your role: {debater.label}\n\n{debater.prompt}"


def turn_request(change: str, transcript: str, round_no: int, rounds: int) -> str:
    return (
        f"# The change\n\n{change}\n\n"
        f"# The debate so far\n\n{transcript}\n\n"
        f"# Your turn\n\nRound {round_no} of {rounds}. Challenge, confirm or add to what was "
        "said, citing file and line. Answer PASS if you have nothing to add."
    )


async def take_turn(
    debater: Debater,
    client: LLMClient,
    registry: ToolRegistry,
    *,
    change: str,
    transcript: str,
    round_no: int,
    rounds: int,
    max_steps: int,
    max_tokens: int,
    on_text: Callable[[str], None],
) -> TurnOutcome:
    """Run the turn; never raises for what the model does (a failure is a skipped turn)."""
    agent = Agent(
        client,
        debater.role,
        registry,
        system_prompt(debater),
        max_steps=max_steps,
        max_tokens=max_tokens,
    )
    started = time.monotonic()
    result = await agent.run(
        turn_request(change, transcript, round_no, rounds),
        on_delta=lambda piece, _answer: on_text(piece),
    )
    latency = time.monotonic() - started
    text = (result.content or "").strip()
    note = None
    if result.stop_reason == "final_answer":
        kind = "pass" if is_pass(text) else "turn"
    elif result.stop_reason == "max_steps" and text:
        kind, note = "turn", f"stopped after {result.steps} tool steps"
    elif result.stop_reason == "max_steps":
        kind, note = "skipped", f"no answer within {result.steps} tool steps"
    else:
        kind, note = "skipped", f"its model failed: {result.error or result.stop_reason}"
    return TurnOutcome(
        kind=kind,
        text=text if kind == "turn" else "",
        note=note,
        stop_reason=result.stop_reason,
        error=result.error,
        steps=result.steps,
        tool_calls=result.tool_calls,
        latency_s=latency,
    )
