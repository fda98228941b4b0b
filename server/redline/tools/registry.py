"""The model's tools as an agent ToolRegistry, bound to one ToolContext.

Every handler is wrapped so that whatever goes wrong comes back as a ToolError whose text has
been redacted: the executor shows ToolError messages as they are, and its catch-all for other
exceptions would print `str(exc)` unredacted. Handlers are synchronous (the executor runs them
in a thread) and bound their own work: subprocess timeouts, size caps.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import Any, Final

from redline.agent.toolkit import Tool, ToolError, ToolRegistry
from redline.errors import RedlineError
from redline.tools.code_tools import git_show_previous, read_function, search_callers
from redline.tools.gh_tool import GH_TOOL_DESCRIPTION, run_gh_tool
from redline.tools.git_tool import GIT_TOOL_DESCRIPTION, run_git_tool
from redline.tools.memory_tools import (
    MAX_CODE_CHARS,
    MAX_HITS,
    MAX_QUERY_CHARS,
    search_memory,
    similar_code,
)
from redline.tools.memory_tools import callers as memory_callers
from redline.tools.read_file import read_file
from redline.tools.sandbox import ToolContext
from redline.tools.write_file import ALLOWED_EXTENSIONS, write_file

log = logging.getLogger(__name__)

TOOL_NAMES: Final = (
    "read_file",
    "read_function",
    "search_callers",
    "git_show_previous",
    "git",
    "gh",
    "callers",
    "similar_code",
    "search_memory",
    "write_file",
)
# Tools that never change anything anywhere (write_file writes only reports, but a caller
# building a pure reviewer may want to leave it out).
READ_ONLY_TOOLS: Final = tuple(n for n in TOOL_NAMES if n != "write_file")

_PATH: Final = {"type": "string", "minLength": 1, "maxLength": 1024}
_LINE: Final = {"type": "integer", "minimum": 1}
_SYMBOL_ARG: Final = {"type": "string", "minLength": 1, "maxLength": 200}
_HITS: Final = {"type": "integer", "minimum": 1, "maximum": MAX_HITS}
_NOT_BUILT_NOTE: Final = (
    " From the repository's project memory (`redline memory build`); says so when it is not built."
)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _guard(ctx: ToolContext, name: str, fn: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(fn)
    def handler(**kwargs: Any) -> str:
        try:
            return fn(ctx, **kwargs)
        except ToolError as exc:
            raise ToolError(ctx.clean(str(exc))) from None
        except RedlineError as exc:
            raise ToolError(ctx.clean(exc.message)) from None
        except OSError as exc:
            raise ToolError(f"{name} failed: {exc.strerror or type(exc).__name__}") from None
        except Exception as exc:
            # Unexpected: log the type only (the message may quote file contents).
            log.warning("tool %s raised %s", name, type(exc).__name__)
            raise ToolError(f"{name} failed unexpectedly ({type(exc).__name__})") from None

    return handler


def build_tools(ctx: ToolContext) -> list[Tool]:
    timeout = max(ctx.limits.git_timeout, ctx.limits.gh_timeout) + 5.0
    exts = ", ".join(sorted(ALLOWED_EXTENSIONS))
    return [
        Tool(
            "read_file",
            "Read a text file of the repository under review, as numbered lines. Optional "
            "1-based start_line/end_line (inclusive); at most "
            f"{ctx.limits.max_lines_per_call} lines per call. Secret files (.env, keys) and "
            ".git are not readable.",
            _schema({"path": _PATH, "start_line": _LINE, "end_line": _LINE}, ["path"]),
            _guard(ctx, "read_file", read_file),
            timeout=timeout,
        ),
        Tool(
            "read_function",
            "Show the whole function or class around a line, or the definition with a given "
            "name, as numbered lines (Python, JavaScript, TypeScript, Go). Give path and "
            "either line or name.",
            _schema(
                {"path": _PATH, "line": _LINE, "name": {"type": "string", "maxLength": 200}},
                ["path"],
            ),
            _guard(ctx, "read_function", read_function),
            timeout=timeout,
        ),
        Tool(
            "search_callers",
            "Find where a symbol (function, class, method or variable name) is used in the "
            "repository's tracked files: whole-word matches with file and line.",
            _schema({"symbol": {"type": "string", "minLength": 1, "maxLength": 200}}, ["symbol"]),
            _guard(ctx, "search_callers", search_callers),
            timeout=timeout,
        ),
        Tool(
            "git_show_previous",
            "Show a file as it was before the change under review (the old side of the diff), "
            "as numbered lines.",
            _schema({"path": _PATH}, ["path"]),
            _guard(ctx, "git_show_previous", git_show_previous),
            timeout=timeout,
        ),
        Tool(
            "git",
            GIT_TOOL_DESCRIPTION,
            _schema(
                {"command": {"type": "string", "minLength": 1, "maxLength": 4000}}, ["command"]
            ),
            _guard(ctx, "git", run_git_tool),
            timeout=timeout,
        ),
        Tool(
            "gh",
            GH_TOOL_DESCRIPTION,
            _schema(
                {"command": {"type": "string", "minLength": 1, "maxLength": 2000}}, ["command"]
            ),
            _guard(ctx, "gh", run_gh_tool),
            timeout=timeout,
        ),
        Tool(
            "callers",
            "List the functions that call a function or method (by name, e.g. send or "
            "Client.send), from the project's code graph: file, lines, name and signature of "
            f"each caller; at most {MAX_HITS} (limit)." + _NOT_BUILT_NOTE,
            _schema({"symbol": _SYMBOL_ARG, "limit": _HITS}, ["symbol"]),
            _guard(ctx, "callers", memory_callers),
            timeout=timeout,
        ),
        Tool(
            "similar_code",
            "Find the functions most similar to some code, to see how the codebase handles "
            "the same thing elsewhere: give either code (a snippet) or path and name (a "
            f"function of the repository). At most {MAX_HITS} (limit)." + _NOT_BUILT_NOTE,
            _schema(
                {
                    "code": {"type": "string", "minLength": 1, "maxLength": MAX_CODE_CHARS},
                    "path": _PATH,
                    "name": _SYMBOL_ARG,
                    "limit": _HITS,
                },
                [],
            ),
            _guard(ctx, "similar_code", similar_code),
            timeout=timeout,
        ),
        Tool(
            "search_memory",
            "Search the project's functions and classes by meaning and by name (\"where are "
            'retries handled", "parse_config"): the best matches with file, lines and '
            f"signature; at most {MAX_HITS} (limit)." + _NOT_BUILT_NOTE,
            _schema(
                {
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
                    "limit": _HITS,
                },
                ["query"],
            ),
            _guard(ctx, "search_memory", search_memory),
            timeout=timeout,
        ),
        Tool(
            "write_file",
            "Save a review report in Redline's report directory (never in the repository). "
            f"path is a plain file name such as 'review.md' (extensions: {exts}).",
            _schema(
                {
                    "path": {"type": "string", "minLength": 1, "maxLength": 300},
                    "content": {"type": "string"},
                },
                ["path", "content"],
            ),
            _guard(ctx, "write_file", write_file),
            timeout=timeout,
        ),
    ]


def build_tool_registry(ctx: ToolContext, names: Iterable[str] | None = None) -> ToolRegistry:
    """A registry with the named tools (default: all of TOOL_NAMES), bound to ctx."""
    tools = {t.name: t for t in build_tools(ctx)}
    wanted = list(TOOL_NAMES if names is None else names)
    unknown = [n for n in wanted if n not in tools]
    if unknown:
        raise ValueError(f"unknown tools: {', '.join(unknown)}")
    return ToolRegistry(tools[n] for n in wanted)
