"""Context for reviewer models: per-unit bundles within a token budget (provider.py, reading
the repository through repo_reader.py), and the repository's own instructions (AGENTS.md,
CLAUDE.md, ...) as untrusted guidance (instructions.py).

    provider = ContextProvider(scope, tool_ctx=ctx, token_budget=6000)
    bundle = provider.bundle(unit, ContextLevel.FUNCTION, requests)
    prompt_part, cache_key_part = bundle.render(), bundle.digest()
"""

from redline.context.budget import estimate_tokens
from redline.context.instructions import Instructions, load_instructions, render_for_prompt
from redline.context.provider import ContextBundle, ContextProvider, ContextSection

__all__ = [
    "ContextBundle",
    "ContextProvider",
    "ContextSection",
    "Instructions",
    "estimate_tokens",
    "load_instructions",
    "render_for_prompt",
]
