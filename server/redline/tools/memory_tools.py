"""The agent's project-memory tools: callers, similar_code, search_memory.

They read the repository's project memory (redline/memory/query.py `ProjectMemory`), opened
once per run (one ToolContext: a review, an `ask`, a debate) and never built here: a run uses
what `redline memory build` (or the language server's refresh) left, and without it every tool
answers NOT_BUILT. Arguments are JSON-schema'd in tools/registry.py and checked again here
(an identifier, one short line of text); answers hold at most MAX_HITS hits of MAX_HIT_CHARS
per line and pass through ToolContext.clean (secrets masked, invisible characters shown),
like every tool's. What memory holds was redacted when it was built; it may lag the work tree
by a few edits, so the answers point at read_function for the code as it is now.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Final, cast

from redline.agent.toolkit import ToolError
from redline.tools.names import shown
from redline.tools.paths import read_repo_bytes
from redline.tools.sandbox import ToolContext

if TYPE_CHECKING:
    from redline.memory.model import Hit, Symbol
    from redline.memory.query import ProjectMemory

log = logging.getLogger(__name__)

NOT_BUILT: Final = "project memory is not built for this repository (run `redline memory build`)"
MAX_HITS: Final = 20
DEFAULT_HITS: Final = 8
MAX_HIT_CHARS: Final = 240
MAX_QUERY_CHARS: Final = 300
MAX_CODE_CHARS: Final = 4000
SYMBOL: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]{0,99}(?:\.[A-Za-z_$][A-Za-z0-9_$]{0,99}){0,4}")
_STALE_NOTE: Final = (
    "(project memory: it may lag the working tree by a few edits; read_function shows a "
    "function as it is now)"
)


def project_memory(ctx: ToolContext) -> ProjectMemory | None:
    """The repository's project memory, opened on first use and kept for the run (one
    ToolContext); None when it is not built or cannot be opened (the reason is logged)."""
    with ctx._lock:
        if not ctx.memory_slot:
            ctx.memory_slot.append(_open(ctx))
        found = ctx.memory_slot[0]
    return cast("ProjectMemory | None", found)


def close_memory(ctx: ToolContext) -> None:
    """Close the run's project memory, if it was opened (the end of a review or agent run)."""
    with ctx._lock:
        opened = ctx.memory_slot[0] if ctx.memory_slot else None
        ctx.memory_slot[:] = [None]
    if opened is not None:
        try:
            cast("ProjectMemory", opened).close()
        except Exception as exc:  # closing must not fail a finished review
            log.info("project memory: close failed (%s)", type(exc).__name__)


def _open(ctx: ToolContext) -> ProjectMemory | None:
    try:
        from redline.config_models import Settings
        from redline.memory.query import ProjectMemory

        return ProjectMemory.open(ctx.root, ctx.settings or Settings())
    except Exception as exc:  # a broken or unreachable index: the run goes on without it
        log.warning("project memory could not be opened: %s", type(exc).__name__)
        return None


def _limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_HITS
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ToolError("limit must be a positive integer")
    return min(limit, MAX_HITS)


def _cut(text: str, limit: int = MAX_HIT_CHARS) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def format_hit(hit: Hit) -> str:
    sym = hit.stored.symbol
    head = f"{sym.path}:{sym.start}-{sym.end} {sym.kind} {sym.qualname} — {_cut(hit.why, 80)}"
    signature = _cut(sym.signature or sym.body.split("\n", 1)[0])
    return f"{_cut(head)}\n    {signature}" if signature else _cut(head)


def _answer(ctx: ToolContext, header: str, hits: list[Hit]) -> str:
    lines = [header, *(format_hit(h) for h in hits)]
    if hits:
        lines.append(_STALE_NOTE)
    text = "\n".join(lines)
    budget = ctx.limits.max_output_chars
    if len(text) > budget:
        text = text[: budget - 20] + "\n… (cut)"
    return ctx.clean(text)


def _symbol(symbol: object) -> str:
    if not isinstance(symbol, str) or not SYMBOL.fullmatch(symbol.strip()):
        raise ToolError(
            "symbol must be an identifier such as parse_config or Client.send "
            "(letters, digits, _, $ and dots)"
        )
    return symbol.strip()


def callers(ctx: ToolContext, symbol: str, limit: int | None = None) -> str:
    name = _symbol(symbol)
    k = _limit(limit)
    memory = project_memory(ctx)
    if memory is None:
        return NOT_BUILT
    last = name.rsplit(".", 1)[-1]
    hits = memory.callers(last, limit=k)[:k]
    if not hits:
        return ctx.clean(f"no function in project memory calls {last}")
    return _answer(ctx, f"{len(hits)} functions that call {last} (project memory):", hits)


def similar_code(
    ctx: ToolContext,
    code: str | None = None,
    path: str | None = None,
    name: str | None = None,
    limit: int | None = None,
) -> str:
    k = _limit(limit)
    if (code is None or code == "") == (path is None or path == ""):
        raise ToolError("give either code (a snippet) or path and name (a function of the repo)")
    memory = project_memory(ctx)
    if memory is None:
        return NOT_BUILT
    exclude: Symbol | None = None
    if code:
        if not isinstance(code, str):
            raise ToolError("code must be text")
        text, what = code[:MAX_CODE_CHARS], "the code given"
    else:
        if not isinstance(name, str) or not SYMBOL.fullmatch(name.strip()):
            raise ToolError("with path, name is the function's name (e.g. send or Client.send)")
        text, exclude = _function_text(ctx, str(path), name.strip())
        what = f"{shown(name.strip())} in {shown(str(path))}"
    hits = memory.similar(text, limit=k + 3, exclude=exclude)
    if exclude is not None:  # nor what contains it or is inside it (its class, its helpers)
        hits = [h for h in hits if not _overlaps(h.stored.symbol, exclude)]
    hits = hits[:k]
    if not hits:
        return ctx.clean(f"nothing in project memory is similar to {what}")
    return _answer(ctx, f"{len(hits)} functions similar to {what} (project memory):", hits)


def _overlaps(a: Symbol, b: Symbol) -> bool:
    return a.path == b.path and a.start <= b.end and b.start <= a.end


def _function_text(ctx: ToolContext, path: str, name: str) -> tuple[str, Symbol]:
    """The function's current text (the same hardened read as read_function), and the Symbol
    to leave out of its own answer."""
    from redline.memory.model import Symbol as MemorySymbol
    from redline.tools.code_tools import definitions, find_definition
    from redline.tools.read_file import decode_text

    rp, data = read_repo_bytes(ctx, path)
    found = find_definition(definitions(rp.rel, data), name)
    if found is None:
        raise ToolError(f"no function or class named {shown(name)} in {shown(path)}")
    text, _ = decode_text(data, path)
    body = "\n".join(text.splitlines()[found.start - 1 : found.end])
    symbol = MemorySymbol(
        rp.rel,
        found.name,
        "class" if found.kind == "class" else "function",
        found.start,
        found.end,
        "",
        body=body,
    )
    return f"{found.name}\n{body[:MAX_CODE_CHARS]}", symbol


def search_memory(ctx: ToolContext, query: str, limit: int | None = None) -> str:
    if not isinstance(query, str) or not query.strip() or "\n" in query.strip():
        raise ToolError(f"query must be one line of text, at most {MAX_QUERY_CHARS} characters")
    if len(query) > MAX_QUERY_CHARS:
        raise ToolError(f"query must be one line of text, at most {MAX_QUERY_CHARS} characters")
    k = _limit(limit)
    memory = project_memory(ctx)
    if memory is None:
        return NOT_BUILT
    hits = memory.search(query.strip(), limit=k)[:k]
    if not hits:
        return ctx.clean(f"nothing in project memory matches {query.strip()!r}")
    return _answer(ctx, f"{len(hits)} matches for {query.strip()!r} (project memory):", hits)


__all__ = [
    "MAX_HITS",
    "NOT_BUILT",
    "callers",
    "close_memory",
    "format_hit",
    "project_memory",
    "search_memory",
    "similar_code",
]
