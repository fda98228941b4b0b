"""Ask a model for JSON that must validate against a pydantic model.

Malformed output is re-asked once with the validation error; a second failure raises
`InvalidModelOutput`, which callers report ("not reviewed: invalid model output") rather than
dropping silently. Truncated answers never reach the parser: the client raises LLMTruncated.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from redline.agent.llm import LLMClient, LLMResponse
from redline.errors import RedlineError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)


class InvalidModelOutput(RedlineError):
    pass


def extract_json(text: str | None) -> Any:
    """The JSON object in a model answer: bare, or in a ```json fence, or the outermost
    {...} span. Raises ValueError when there is none."""
    if not text or not text.strip():
        raise ValueError("the answer was empty")
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    error: Exception | None = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            error = exc
    raise ValueError(f"the answer is not valid JSON ({error})")


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors()[:10]:
            loc = ".".join(str(p) for p in err["loc"]) or "(root)"
            parts.append(f"{loc}: {err['msg']}")
        return "; ".join(parts)
    return str(exc)


def parse_answer(text: str | None, schema: type[T]) -> T:
    data = extract_json(text)
    return schema.model_validate(data)


async def ask_structured(
    client: LLMClient,
    role: str,
    messages: list[dict[str, Any]],
    schema: type[T],
    *,
    max_tokens: int | None = None,
) -> tuple[T, list[LLMResponse]]:
    """Returns the validated answer and every response it took (for usage accounting)."""
    first = await client.complete(role, messages, max_tokens=max_tokens)
    try:
        return parse_answer(first.content, schema), [first]
    except (ValueError, ValidationError) as exc:
        problem = _describe(exc)
    retry = [
        *messages,
        {"role": "assistant", "content": first.content or ""},
        {
            "role": "user",
            "content": (
                f"Your answer could not be used: {problem}. Answer again with only the JSON "
                "object, exactly in the format described above."
            ),
        },
    ]
    second = await client.complete(role, retry, max_tokens=max_tokens)
    try:
        return parse_answer(second.content, schema), [first, second]
    except (ValueError, ValidationError) as exc:
        raise InvalidModelOutput(
            f"invalid model output from {second.model or role}: {_describe(exc)}"
        ) from None
