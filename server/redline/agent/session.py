"""A conversation with a model: messages plus the bookkeeping to keep it inside the context.

Token counts here are estimates (characters / 4): exact counting needs the model's tokenizer,
costs time on every step, and the only decision made with it — "are we near the limit?" — has
a safety margin anyway. The provider's own usage numbers are what gets billed and reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from redline.agent.llm import LLMResponse

CHARS_PER_TOKEN = 4
# Per-message framing the providers add (role, separators); small but adds up over 100 steps.
MESSAGE_OVERHEAD_TOKENS = 4
TRIMMED = "[tool output trimmed to save context: {n} chars]"


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def message_tokens(message: dict[str, Any]) -> int:
    content = message.get("content")
    if isinstance(content, list):
        content = json.dumps(content)
    n = estimate_tokens(content or "")
    for call in message.get("tool_calls") or []:
        n += estimate_tokens(json.dumps(call))
    return n + MESSAGE_OVERHEAD_TOKENS


@dataclass
class Session:
    messages: list[dict[str, Any]] = field(default_factory=list)
    trimmed_chars: int = 0  # how much tool output `fit` has dropped so far

    @classmethod
    def start(cls, system_prompt: str | None, task: str | list[dict[str, Any]]) -> Session:
        """A session from a system prompt and either a user task or prior messages."""
        session = cls()
        given = [{"role": "user", "content": task}] if isinstance(task, str) else list(task)
        if system_prompt and not (given and given[0].get("role") == "system"):
            session.add("system", system_prompt)
        session.messages.extend(dict(m) for m in given)
        return session

    def add(self, role: str, content: str) -> None:
        self.messages.append({"role": role, "content": content})

    def add_assistant(self, response: LLMResponse) -> None:
        self.messages.append(response.to_message())

    def add_tool_result(self, call_id: str, name: str, content: str) -> None:
        self.messages.append(
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}
        )

    def estimate_tokens(self) -> int:
        return sum(message_tokens(m) for m in self.messages)

    def _latest_turn_start(self) -> int:
        """Index of the last assistant message: it and what follows are the current turn."""
        for i in range(len(self.messages) - 1, -1, -1):
            if self.messages[i].get("role") == "assistant":
                return i
        return len(self.messages)

    def fit(self, context_limit: int, *, reserve: float = 0.25) -> bool:
        """Trim the oldest tool outputs until the estimate is under the limit minus a reserve.

        The reserve leaves room for the answer and for the estimate being off. The system
        prompt, user messages, assistant messages and the latest turn are never touched.
        Returns whether the conversation now fits.
        """
        target = int(context_limit * (1 - reserve))
        total = self.estimate_tokens()
        if total <= target:
            return True
        protected_from = self._latest_turn_start()
        for i, m in enumerate(self.messages[:protected_from]):
            if total <= target:
                break
            content = m.get("content")
            if m.get("role") != "tool" or not isinstance(content, str):
                continue
            note = TRIMMED.format(n=len(content))
            if content.startswith("[tool output trimmed") or len(content) <= len(note):
                continue
            before = message_tokens(m)
            self.messages[i] = {**m, "content": note}
            total -= before - message_tokens(self.messages[i])
            self.trimmed_chars += len(content)
        return total <= target
