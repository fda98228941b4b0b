"""The agent loop: ask the model, run the tools it calls, repeat until it is done.

    step: fit the conversation → model call → no tool calls? done (final answer)
                                            → run each call, append its result
                                            → a terminal tool succeeded? done (submitted)

It stops with a reason, never with an exception: the caller decides how to report a run that
ran out of steps, budget, model requests (the client's hard cap, which counts every HTTP
request including retries — `max_steps` counts answers) or patience. Everything about *what*
the agent does lives in its system prompt and its tools; this file is generic.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from redline.agent.llm import BudgetExceeded, LLMClient, LLMError, RequestCapReached, ToolCall
from redline.agent.outcomes import DeltaCallback
from redline.agent.session import Session
from redline.agent.toolkit import ToolExecutor, ToolRegistry
from redline.agent.usage import Usage
from redline.json_bounds import loads as bounded_loads

log = logging.getLogger(__name__)

StopReason = Literal[
    "final_answer", "submitted", "max_steps", "loop", "error", "budget", "request_cap"
]

# The same call with the same arguments this many times in a row is a loop: the model is told
# (instead of running the call again), and if it calls it once more the run stops.
LOOP_WARN_AT = 3
LOOP_STOP_AT = 4


@dataclass
class AgentResult:
    stop_reason: StopReason
    content: str | None  # the last assistant text
    submitted: Any = None  # a terminal tool's payload (its return value, or its arguments)
    steps: int = 0  # model calls made
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None  # why it stopped, for every reason but final_answer/submitted
    messages: list[dict[str, Any]] = field(default_factory=list)  # the transcript

    @property
    def ok(self) -> bool:
        return self.stop_reason in ("final_answer", "submitted")


class Agent:
    """A model with tools, ready to run tasks; built whole, never adjusted afterwards.

    `executor` runs the model's calls (default: a plain ToolExecutor of `registry`); a caller
    that watches every call passes its own, which must serve the same registry — the loop
    offers the model `registry`'s tools and asks it which of them are terminal.
    """

    def __init__(
        self,
        client: LLMClient,
        role: str,
        registry: ToolRegistry,
        system_prompt: str,
        *,
        max_steps: int = 50,
        max_tokens: int | None = None,
        executor: ToolExecutor | None = None,
    ) -> None:
        if executor is not None and executor.registry is not registry:
            raise ValueError("the agent's executor must run the agent's own tool registry")
        self.client = client
        self.role = role
        self.registry = registry
        self.system_prompt = system_prompt
        self.max_steps = max_steps
        self.max_tokens = max_tokens
        self.executor = executor if executor is not None else ToolExecutor(registry)

    async def run(
        self,
        task: str | list[dict[str, Any]],
        *,
        max_steps: int | None = None,
        on_delta: DeltaCallback | None = None,
    ) -> AgentResult:
        """Run one task; `max_steps` lowers this run's limit (e.g. a follow-up that must stay
        within what an earlier run left of a shared budget). With `on_delta`, every answer is
        streamed to it as it arrives (a debater's turn shown live)."""
        limit = self.max_steps if max_steps is None else max_steps
        session = Session.start(self.system_prompt, task)
        tools = self.registry.specs() or None
        usage = Usage()
        steps = n_calls = 0
        last_call: tuple[str, str] | None = None
        repeats = 0
        content: str | None = None

        def stop(
            reason: StopReason, error: str | None = None, submitted: Any = None
        ) -> AgentResult:
            if error:
                log.info("agent (%s) stopped: %s: %s", self.role, reason, error)
            return AgentResult(
                reason, content, submitted, steps, n_calls, usage, error, session.messages
            )

        while steps < limit:
            session.fit(self.client.context_limit(self.role))
            try:
                response = await self.client.complete(
                    self.role,
                    session.messages,
                    tools=tools,
                    max_tokens=self.max_tokens,
                    on_delta=on_delta,
                )
            except BudgetExceeded as e:
                return stop("budget", str(e))
            except RequestCapReached as e:
                return stop("request_cap", e.message)
            except LLMError as e:
                return stop("error", str(e))
            steps += 1
            usage += response.usage
            content = response.content
            session.add_assistant(response)
            if not response.tool_calls:
                return stop("final_answer")

            for call in response.tool_calls:
                n_calls += 1
                signature = (call.name, _canonical(call.arguments))
                repeats = repeats + 1 if signature == last_call else 1
                last_call = signature
                if repeats >= LOOP_STOP_AT:
                    session.add_tool_result(call.id, call.name, "error: stopped (repeated call)")
                    return stop("loop", f"{call.name} called {repeats} times with same arguments")
                if repeats >= LOOP_WARN_AT:
                    session.add_tool_result(call.id, call.name, _loop_warning(call, repeats))
                    continue
                result = await self.executor.run(call.name, call.arguments)
                session.add_tool_result(call.id, call.name, result.content)
                tool = self.registry.get(call.name)
                if tool is not None and tool.terminal and result.ok:
                    payload = result.value if result.value is not None else result.arguments
                    return stop("submitted", submitted=payload)

        return stop("max_steps", f"no final answer after {limit} steps")


def _canonical(arguments: str) -> str:
    """Arguments in a form where key order and spacing do not hide a repeat."""
    try:
        return json.dumps(bounded_loads(arguments), sort_keys=True)
    except (ValueError, TypeError):
        return arguments.strip()


def _loop_warning(call: ToolCall, repeats: int) -> str:
    return (
        f"error: not run — you called {call.name} with identical arguments {repeats} times in a "
        "row and the result will not change. Use what you already have, try something "
        "different, or finish. Repeating it again ends the run."
    )
