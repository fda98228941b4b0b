"""Ask a model for JSON that must validate against a pydantic model.

The answer is the first complete JSON value in the text (bare or fenced; prose after it is
ignored, braces and all). Malformed output — not JSON, or not the schema, unknown top-level
keys included — is re-asked once with the validation error; a second failure raises
`InvalidModelOutput`, which callers report ("not reviewed: invalid model output") rather than
dropping silently. Truncated answers never reach the parser: the client raises LLMTruncated.
A value nested deeper than json_bounds.MAX_DEPTH is malformed output too (the decoder would
recurse past the interpreter's limit): it is measured before it is decoded.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from redline.agent.llm import LLMClient, LLMResponse
from redline.errors import RedlineError
from redline.json_bounds import JSONTooDeep, raw_decode

T = TypeVar("T", bound=BaseModel)

# A fenced block's body, closed or not (a fence is where a model puts the answer it means).
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


class InvalidModelOutput(RedlineError):
    pass


def extract_json(text: str | None) -> Any:
    """The first complete JSON value of a model answer, decoded by a real JSON decoder: the
    answer itself when it starts with one, else the first fenced block that does, else the
    first object anywhere in the prose. Whatever follows it (prose, braces in prose, another
    fence) is ignored. Raises ValueError when there is none."""
    if not text or not text.strip():
        raise ValueError("the answer was empty")
    stripped = text.strip()
    fenced = (m.group(1).strip() for m in _FENCE.finditer(text))
    first = next((p for p in [stripped, *fenced] if p[:1] in ("{", "[")), None)
    if first is not None:
        # The answer the model meant: a decode error here is the error to report, not a
        # reason to pick a nested object out of it.
        try:
            return raw_decode(first)[0]
        except JSONTooDeep as exc:
            raise ValueError(f"the answer is not usable JSON: {exc}") from None
        except ValueError as exc:
            raise ValueError(f"the answer is not valid JSON ({exc})") from None
    # Prose first: the first "{" where a whole object decodes (a "{x}" in prose does not).
    start = stripped.find("{")
    while start >= 0:
        try:
            return raw_decode(stripped, start)[0]
        except JSONTooDeep as exc:
            # Every "{" after this one is inside it: as deep or nearly, and as unusable.
            raise ValueError(f"the answer is not usable JSON: {exc}") from None
        except ValueError:
            start = stripped.find("{", start + 1)
    raise ValueError("the answer has no JSON object")


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
    if not isinstance(data, dict):
        raise ValueError(f"the answer is a JSON {type(data).__name__}, not an object")
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
