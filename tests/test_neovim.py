"""Headless Neovim (Debian's 0.7.2) as a real client of `redline lsp`.

tests/nvim/init.lua starts the server with `vim.lsp.start_client`, opens app/reports.py in the
demo repository, runs a branch review, reads `vim.diagnostic.get`, applies the "Redline: apply
fix" code action at the unused import with `vim.lsp.util.apply_workspace_edit` (then its command),
and writes what it saw as JSON. tests/nvim/readme_snippet.lua runs the README's Neovim snippet,
taken from README.md as written, with `redline` found on PATH as a user's would be."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from readme_snippets import snippet
from real_clients import REDLINE, TESTS, client_env, missing

sys.path.insert(0, str(TESTS.parent / "scripts"))
import demo

INIT = TESTS / "nvim" / "init.lua"
TIMEOUT = 90  # seconds for the whole Neovim session; it takes about 2


def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        missing("Neovim (nvim)", "apt-get install -y --no-install-recommends neovim")
    assert found is not None
    return found


def run_neovim(repo: Path, tmp: Path, init: Path = INIT, **extra: str) -> dict[str, Any]:
    out = tmp / "nvim-result.json"
    state = tmp / "nvim-state"  # shada, swap, undo and lsp.log: never the user's
    env = client_env(
        tmp,
        REDLINE_NVIM_SERVER=str(REDLINE),
        REDLINE_NVIM_REPO=str(repo.resolve()),
        REDLINE_NVIM_OUT=str(out),
        **extra,
        XDG_CONFIG_HOME=str(state / "config"),
        XDG_DATA_HOME=str(state / "data"),
        XDG_STATE_HOME=str(state / "state"),
        XDG_CACHE_HOME=str(state / "cache"),
    )
    command = [nvim(), "--headless", "-i", "NONE", "--noplugin", "-n", "-u", str(init)]
    try:
        proc = subprocess.run(
            command,
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        partial = out.read_text(encoding="utf-8") if out.exists() else "(no result written)"
        pytest.fail(f"Neovim did not finish within {TIMEOUT} s: {partial}\n{lsp_log(state)}")
    if not out.exists():
        pytest.fail(
            f"Neovim wrote no result (exit {proc.returncode})\nstdout: {proc.stdout[-2000:]}\n"
            f"stderr: {proc.stderr[-2000:]}\n{lsp_log(state)}"
        )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert result.get("ok") is True, f"{result.get('error')}\n{result}\n{lsp_log(state)}"
    assert proc.returncode == 0, proc.stderr
    return result


def lsp_log(state: Path) -> str:
    log = state / "cache" / "nvim" / "lsp.log"
    return "lsp.log:\n" + log.read_text(encoding="utf-8")[-3000:] if log.exists() else ""


def test_neovim_reviews_shows_diagnostics_and_applies_a_fix(tmp_path: Path) -> None:
    repo = demo.build_demo_repo(tmp_path / "demo")
    before = (repo / "app/reports.py").read_text(encoding="utf-8").splitlines()
    assert before[3] == "import os"

    result = run_neovim(repo, tmp_path)

    assert result["version"]["major"] == 0 and result["version"]["minor"] >= 7
    assert result["offset_encoding"] == "utf-16"
    assert result["finished"]["state"] == "finished", result["finished"]
    # app/reports.py's four, and one in each of the demo's files in other languages.
    assert result["finished"]["findings"] == len(demo.EXPECTED)
    assert result["states"][0] == "started" and result["states"][-1] == "finished"

    # vim.diagnostic lines are 0-based: the unused import, shell=True, bare except, mutable default.
    assert result["diagnostic_lines"] == [3, 20, 26, 30]
    assert {d["source"] for d in result["diagnostics"]} == {"redline"}
    severities = {d["lnum"]: d["severity"] for d in result["diagnostics"]}
    # vim.diagnostic.severity: ERROR 1, WARN 2, INFO 3.
    assert severities == {3: 3, 20: 1, 26: 2, 30: 2}

    titles = result["action_titles"]
    assert titles[0].startswith("Redline: apply fix") and "os" in titles[0], titles
    assert any(t.startswith("Redline: dismiss finding") for t in titles), titles

    # The edit deleted `import os` in the buffer (not on disk: the buffer is unsaved) ...
    after = result["text_after"].split("\n")
    assert "import os" not in after
    assert after == before[:3] + before[4:]
    assert result["lines_after"] == result["lines_before"] - 1
    assert (repo / "app/reports.py").read_text(encoding="utf-8").splitlines() == before
    # ... the action's command told the server, which dropped that finding; the rest moved up.
    assert result["fix_command"] == "redline.fixApplied"
    assert str(result["fix_command_result"]["closed"]).startswith("RL-")
    assert result["diagnostic_lines_after_fix"] == [19, 25, 29]

    assert result["exit"] == {"code": 0, "signal": 0}


def test_the_readme_snippet_runs_one_server_per_repository(tmp_path: Path) -> None:
    """The README's Neovim 0.7–0.10 snippet, as written: three buffers of different filetypes in
    one repository share one client and one server process; `<leader>rb` from the second buffer
    reviews the branch and each finding shows once; the server's start-up is no error in
    Neovim's log."""
    repo = demo.build_demo_repo(tmp_path / "demo")
    lua = tmp_path / "readme-snippet.lua"
    lua.write_text(snippet("Neovim 0.7–0.10", "lua"), encoding="utf-8")

    result = run_neovim(
        repo,
        tmp_path,
        TESTS / "nvim" / "readme_snippet.lua",
        REDLINE_NVIM_SNIPPET=str(lua),
        # The snippet runs plain `redline`: found on PATH, as the README tells users.
        PATH=f"{REDLINE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )

    assert len(set(result["filetypes"])) == 3, result["filetypes"]
    assert result["clients"] == 1 and result["server_processes"] == 1, result
    assert result["root_dir"] == str(repo.resolve())
    assert result["finished"] == {"state": "finished", "findings": len(demo.EXPECTED)}, result[
        "finished"
    ]
    seen = [(d["file"], d["lnum"], d["message"]) for d in result["diagnostics"]]
    assert len(seen) == len(set(seen)) == len(demo.EXPECTED), seen
    # Every file's findings (0-based lines), each once: the unused import, shell=True, bare
    # except and mutable default of app/reports.py, and the one of each other language's file.
    assert sorted((file, line) for file, line, _ in seen) == sorted(
        (path, line - 1) for path, line in demo.EXPECTED.values()
    )
    assert result["clients_after"] == 1 and result["server_processes_after"] == 1

    log = (tmp_path / "nvim-state" / "cache" / "nvim" / "lsp.log").read_text(encoding="utf-8")
    errors = [line for line in log.splitlines() if line.startswith("[ERROR]")]
    assert errors == [], "\n".join(errors)
    started = [line for line in log.splitlines() if "language server started" in line]
    assert len(started) == 1 and started[0].startswith("[INFO]"), log[-3000:]


UNDO = TESTS / "nvim" / "undo.lua"


def _shown(rows: list[dict[str, Any]]) -> list[tuple[int, int, int, int, str]]:
    return [(d["lnum"], d["col"], d["end_lnum"], d["end_col"], d["message"]) for d in rows]


@pytest.mark.parametrize("scenario", ["dd_u", "J_u", "join_next_u", "S_retype", "substitute_same"])
def test_an_undone_edit_brings_the_finding_back(tmp_path: Path, scenario: str) -> None:
    """`dd` then `u`, `J` then `u`, `:join` then `u`, `S` and the line typed again, `:s/os/os/`:
    the text is what the review saw, so every finding is shown again where it was, with the
    same range, through `vim.diagnostic.get` (tests/nvim/undo.lua types the keys)."""
    repo = demo.build_demo_repo(tmp_path / "demo")
    result = run_neovim(repo, tmp_path, UNDO, REDLINE_NVIM_SCENARIO=scenario)
    assert result["text_after"] == result["text_before"]
    assert _shown(result["after"]) == _shown(result["before"]), result["steps"]


def test_a_moved_line_takes_its_finding_along(tmp_path: Path) -> None:
    """`ddp` on the unused import: the line is one lower, and so is its diagnostic (same
    columns); the other findings stay where they were."""
    repo = demo.build_demo_repo(tmp_path / "demo")
    result = run_neovim(repo, tmp_path, UNDO, REDLINE_NVIM_SCENARIO="ddp")
    assert result["text_after"][3:5] == ["import subprocess", "import os"]
    before, after = _shown(result["before"]), _shown(result["after"])
    moved = [(line + 1, col, end + 1, end_col, msg) for line, col, end, end_col, msg in before[:1]]
    assert after == moved + before[1:], result["steps"]
