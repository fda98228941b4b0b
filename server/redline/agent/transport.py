"""One request through litellm and its answer read back, for `agent/attempts.py` (which adds
the retries, truncation re-ask, budget and ledger around it; `agent/llm.py` the fallbacks)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from redline.agent.outcomes import CallFailed, LLMResponse, ToolCall
from redline.agent.usage import Usage


async def send(litellm: Any, kwargs: dict[str, Any], on_text: Callable[[str], Any] | None) -> Any:
    """`litellm.acompletion(**kwargs)`; with `on_text`, streamed: each content piece goes to
    it as it arrives (awaited when it returns a coroutine) and the chunks are built back into
    one response."""
    # Backstops in case a provider path ignores `timeout`: the whole call when not
    # streaming; for a stream, each wait for the next chunk — a long answer that keeps
    # arriving is fine, a stalled one is not.
    timeout = float(kwargs["timeout"]) * 2 + 1
    if on_text is None:
        return await asyncio.wait_for(litellm.acompletion(**kwargs), timeout)
    stream = await asyncio.wait_for(litellm.acompletion(**kwargs), timeout)
    chunks = []
    iterator = stream.__aiter__()
    while True:
        try:
            chunk = await asyncio.wait_for(iterator.__anext__(), timeout)
        except StopAsyncIteration:
            break
        chunks.append(chunk)
        for choice in getattr(chunk, "choices", None) or []:
            text = getattr(choice.delta, "content", None)
            if text:
                result = on_text(text)
                if asyncio.iscoroutine(result):
                    await result
    built = litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])
    if built is None:
        raise CallFailed("garbage", "the stream ended without any chunk", retryable=True)
    return built


def parse_response(raw: Any, model: str, cost: Callable[[], float | None]) -> LLMResponse:
    """The LLMResponse of a litellm response; `cost` prices it (None: unknown)."""
    choices = getattr(raw, "choices", None)
    if not choices:
        raise CallFailed("garbage", "the response has no choices", retryable=True)
    choice = choices[0]
    message = choice.message
    calls = []
    for c in getattr(message, "tool_calls", None) or []:
        fn = c.function
        calls.append(
            ToolCall(
                # Some local servers omit ids; they must be unique across the conversation.
                id=c.id or f"call_{uuid.uuid4().hex[:12]}",
                name=fn.name or "",
                arguments=fn.arguments or "{}",
            )
        )
    usage = getattr(raw, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    # Prompt caching, as litellm passes it on: OpenAI-style details, or Anthropic's count.
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(
        usage, "cache_read_input_tokens", None
    )
    return LLMResponse(
        content=message.content,
        tool_calls=calls,
        finish_reason=choice.finish_reason,
        model=model,
        usage=Usage(prompt, completion, cost(), calls=1, cached_tokens=int(cached or 0)),
    )
