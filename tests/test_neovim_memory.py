"""Headless Neovim (Debian's 0.7.2) editing a real git repository with `redline lsp` attached:
project memory follows the edits without anyone running a build (tests/nvim/memory.lua types,
saves and asks the installed `redline memory search`, in the same private cache)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import test_neovim
from test_neovim import run_neovim

from gitrepo import GitRepo
from real_clients import TESTS

MEMORY = TESTS / "nvim" / "memory.lua"


def _names(search: dict[str, Any]) -> list[str]:
    assert search["code"] == 0, search["output"]
    return [row["qualname"] for row in json.loads(search["output"])]


def test_saved_edits_reach_memory_without_a_manual_build(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write(
        "app.py",
        'def load_orders(path):\n    """Read the orders file."""\n    return open(path).read()\n',
    )
    repo.write("util.py", 'def slugify(text):\n    """Make a URL slug."""\n    return text\n')
    repo.commit("init")
    # The index is built in a subprocess at the lowest priority: on a busy machine it can take
    # a while; Neovim's script waits for the server to say it is done.
    monkeypatch.setattr(test_neovim, "TIMEOUT", 180)

    result = run_neovim(repo.root, tmp_path, MEMORY)

    assert "def frobnicate_the_quokka(orchard):" not in result["text"]
    assert "def tally_orchard_wallabies(orchard):" in result["text"]
    # After the first save, the new function is found by its docstring and by its name.
    assert _names(result["first"])[0] == "frobnicate_the_quokka", result["first"]
    assert "frobnicate_the_quokka" in _names(result["first_by_name"])
    # After the rename and a save: the new name is found, the old one is gone.
    assert _names(result["second"])[0] == "tally_orchard_wallabies", result["refreshes"]
    assert "frobnicate_the_quokka" not in _names(result["second"])
    assert "frobnicate_the_quokka" not in _names(result["second_by_old_name"])
    # The server did it: its refresher says so (a whole-tree build, then file refreshes).
    last = result["refreshes"][-1]
    assert last["enabled"] is True and last["state"] == "idle"
    (folder,) = last["folders"]
    assert folder["runs"] >= 2 and folder["failures"] == 0 and not folder["fullDue"], last
    assert result["exit"] == {"code": 0, "signal": 0}
