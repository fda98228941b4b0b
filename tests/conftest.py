from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from gitrepo import GitRepo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """An empty git repository on branch main."""
    return GitRepo(tmp_path / "repo")
