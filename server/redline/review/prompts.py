"""Prompts are Markdown files in the repository's `prompts/` folder (packaged as
`redline/prompts` in a wheel); code never carries long prompt strings."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

_CANDIDATES = (
    Path(__file__).resolve().parents[1] / "prompts",  # installed wheel: redline/prompts
    Path(__file__).resolve().parents[3] / "prompts",  # source checkout: <repo>/prompts
)


@cache
def load_prompt(name: str) -> str:
    for folder in _CANDIDATES:
        path = folder / f"{name}.md"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"prompt {name!r} not found in {[str(c) for c in _CANDIDATES]}")


def prompt_version(*names: str) -> str:
    """A short hash of the prompts' text: part of every cache key, so editing a prompt
    invalidates the answers it produced."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(load_prompt(name).encode("utf-8"))
    return digest.hexdigest()[:12]
