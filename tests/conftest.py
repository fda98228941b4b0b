from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from gitrepo import GitRepo
from xdist_groups import pytest_collection_modifyitems  # noqa: F401 (a hook)

# A private HOME, XDG_* dirs and cache for the whole session and its subprocesses, and a final
# check that the user's own Redline directories were not touched (tests/private_env.py).
pytest_plugins = ["private_env"]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """An empty git repository on branch main."""
    return GitRepo(tmp_path / "repo")


@pytest.fixture(autouse=True)
def _private_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Task records and cached answers go to a per-test directory, never the user's cache."""
    monkeypatch.setenv("REDLINE_CACHE_DIR", str(tmp_path_factory.mktemp("redline-cache")))
