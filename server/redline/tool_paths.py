"""The programs the user named in their own settings (`[tools] git`, `gh`, `glab`).

Only config.load_user_settings sets them — from the defaults, the user's file, REDLINE_*
variables and flags, never from a repository's `.redline.toml` (config_repo.py's allowlist has
no `tools.*` key) — and git/binaries.py reads them when it looks a program up. A module of its
own, importing nothing, so neither side imports the other's package.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

_lock = threading.Lock()
_named: dict[str, str] = {}


def name_tools(paths: Mapping[str, str | None]) -> None:
    """Record the user's choices (None or "" for a tool: look it up on PATH)."""
    with _lock:
        _named.clear()
        _named.update({tool: path for tool, path in paths.items() if path})


def named_tool(tool: str) -> str | None:
    """The path the user named for `tool`, if any."""
    with _lock:
        return _named.get(tool)
