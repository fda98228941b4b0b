"""Shared by the real-client tests (tests/test_neovim.py, tests/test_vscode_jsonrpc.py): the
`redline` executable, the server's environment, and what to do when a client is missing.

`make test` installs both clients (Debian's `neovim`, and `npm ci` in tests/node). Outside CI a
missing client skips its test with the command that installs it; in CI (`CI` set) it fails.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# The console script next to the interpreter running the tests (.venv/bin/redline).
REDLINE = Path(sys.executable).with_name("redline")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(what: str, install: str) -> None:
    """Fail in CI, skip elsewhere: `what` is not installed; `install` says how to get it."""
    message = f"{what} is not installed; `make test` installs it, or run: {install}"
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


def client_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment for a client and the server it starts: no REDLINE_* from the developer
    (no model: the review is the offline analyzers), no user config, caches under `tmp`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CONFIG"] = os.devnull  # no user file
    env["REDLINE_CACHE_DIR"] = str(tmp / "redline-cache")
    env.update(extra)
    return env
