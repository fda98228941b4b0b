"""The environment of a test that runs reviews with the scripted model: none of the developer's
REDLINE_* settings (their model must not be used), a user config of the test's own, the cache
in the test's temporary directory, and a key that is not a secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FAST_RETRIES = "[llm]\nmax_retries = 1\ntimeout = 20\n"
TEST_API_KEY = "sk-test-key-not-secret"


def isolate_model_env(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    *,
    user_config: str = FAST_RETRIES,
    api_key: str = TEST_API_KEY,
) -> None:
    for var in list(os.environ):
        # REDLINE_CACHE_DIR stays: conftest points it at a temporary directory.
        if var.startswith("REDLINE_") and var != "REDLINE_CACHE_DIR":
            monkeypatch.delenv(var)
    user = tmp_path / "user.toml"
    user.write_text(user_config, encoding="utf-8")
    monkeypatch.setenv("REDLINE_CONFIG", str(user))
    monkeypatch.setenv("REDLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REDLINE_API_KEY", api_key)
