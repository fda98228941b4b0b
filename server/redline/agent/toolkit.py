"""Tools the model can call: a spec, a registry, and an executor that never raises.

Whatever the model sends — an unknown name, broken JSON, wrong argument types, a call that
throws or hangs — comes back to it as the tool's result text starting with "error:", so it can
correct itself; the agent loop never crashes on a bad call. Treat every call as written by the
author of the code under review: guarantees belong in the handler, not in the description.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from redline.agent.redact import redact
from redline.json_bounds import loads as bounded_loads

log = logging.getLogger(__name__)

MAX_OUTPUT_CHARS = 50_000


class ToolError(Exception):
    """Raised by a handler to tell the model what was wrong; the message is shown as is."""


@dataclass
class Tool:
    """A function the model may call.

    `handler` gets the arguments as keyword arguments and may be sync (run in a thread) or
    async. It returns text, or anything JSON-serialisable. A `terminal` tool ends the agent's
    run when it succeeds (e.g. `submit_review`); its return value becomes the run's payload.
    """

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of an object
    handler: Callable[..., Any]
    timeout: float = 30.0
    terminal: bool = False

    def spec(self) -> dict[str, Any]:
        """The OpenAI `tools` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        return [t.spec() for t in self._tools.values()]


@dataclass
class ToolResult:
    content: str  # what the model sees
    ok: bool
    value: Any = None  # the handler's return value (for terminal tools: the payload)
    arguments: dict[str, Any] = field(default_factory=dict)


def cap_output(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output truncated: {limit:,} of {len(text):,} characters shown]"


class ToolExecutor:
    def __init__(self, registry: ToolRegistry, *, max_output_chars: int = MAX_OUTPUT_CHARS) -> None:
        self.registry = registry
        self.max_output_chars = max_output_chars

    async def run(self, name: str, arguments: str | dict[str, Any] | None) -> ToolResult:
        """Run one call. Never raises (except cancellation): failures are results."""
        tool = self.registry.get(name)
        if tool is None:
            known = ", ".join(self.registry.names) or "none"
            return _error(f"unknown tool {name!r}; available tools: {known}")
        try:
            args = _parse_arguments(arguments)
        except ValueError as e:
            return _error(f"arguments for {name} are not a valid JSON object: {e}")
        problems = validate(tool.parameters, args)
        if problems:
            return _error(f"invalid arguments for {name}: " + "; ".join(problems[:10]), args)
        try:
            if inspect.iscoroutinefunction(tool.handler):
                value = await asyncio.wait_for(tool.handler(**args), tool.timeout)
            else:
                # A thread cannot be killed: on timeout it finishes in the background and its
                # result is dropped. Sync handlers must bound their own work (subprocess
                # timeouts, size caps); this only keeps the agent moving.
                value = await asyncio.wait_for(
                    asyncio.to_thread(tool.handler, **args), tool.timeout
                )
                if inspect.isawaitable(value):  # e.g. a partial() around an async function
                    value = await asyncio.wait_for(value, tool.timeout)
        except TimeoutError:
            return _error(f"{name} timed out after {tool.timeout:g} s", args)
        except ToolError as e:
            return _error(str(e), args)
        except Exception as e:
            log.warning("tool %s raised %s: %s", name, type(e).__name__, redact(str(e))[:300])
            return _error(f"{name} failed: {type(e).__name__}: {e}", args)
        return ToolResult(cap_output(_to_text(value), self.max_output_chars), True, value, args)


def _error(message: str, args: dict[str, Any] | None = None) -> ToolResult:
    return ToolResult("error: " + message, False, None, args or {})


def _parse_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, dict):
        return arguments
    try:
        value = bounded_loads(arguments)  # nested too deep: a ValueError, never a RecursionError
    except ValueError as e:
        raise ValueError(str(e)) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"expected an object, got {type(value).__name__}")
    return value


def _to_text(value: Any) -> str:
    if value is None:
        return "ok"
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, indent=1, default=str)
    except (TypeError, ValueError):
        return str(value)


# -- a small JSON-schema subset ----------------------------------------------------------------
# Enough for tool parameters (types, required, properties, additionalProperties, enum, items,
# string/number bounds). It runs on every call, so it stays dependency-free and fast.

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Problems with `value` against `schema`, as short messages naming the field."""
    where = path or "arguments"
    expected = schema.get("type")
    if expected is not None:
        types = expected if isinstance(expected, list) else [expected]
        if not any(_TYPES.get(t, lambda _v: True)(value) for t in types):
            return [f"{where} must be {' or '.join(types)}, got {_json_type(value)}"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where} must be one of {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"missing required field {_join(path, key)!r}")
        for key, item in value.items():
            if key in props:
                problems.extend(validate(props[key], item, _join(path, key)))
            elif schema.get("additionalProperties") is False:
                problems.append(f"unexpected field {_join(path, key)!r}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problems.extend(validate(schema["items"], item, f"{where}[{i}]"))
            if len(problems) > 20:
                break
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{where} is longer than {schema['maxLength']} characters")
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{where} is shorter than {schema['minLength']} characters")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where} must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where} must be <= {schema['maximum']}")
    return problems


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: Any) -> str:
    for name, check in _TYPES.items():
        if name != "number" and check(value):
            return name
    return "number" if _TYPES["number"](value) else type(value).__name__
