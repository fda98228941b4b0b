"""What headless Neovim (Debian's 0.7.2, default LSP handlers) shows its user from `redline lsp`:
tests/nvim/messages.lua records every `vim.notify` and `nvim_out_write`.

- A review that finds nothing says so once ("no findings"), at Info: without it an empty review
  only clears the squiggles, which looks like nothing happened.
- A command's error is shown once: Neovim shows the error answer to `workspace/executeCommand`;
  a `window/showMessage` with the same text on top showed it twice.
"""

from __future__ import annotations

from pathlib import Path

from test_neovim import run_neovim

from gitrepo import GitRepo
from real_clients import TESTS

MESSAGES = TESTS / "nvim" / "messages.lua"


def test_neovim_shows_no_findings_once_and_each_command_error_once(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("clean.py", "def add(a: int, b: int) -> int:\n    return a + b\n")
    repo.commit("init")
    repo.write("clean.py", "def add(a: int, b: int) -> int:\n    return b + a\n")

    result = run_neovim(repo.root, tmp_path, MESSAGES)

    assert result["finished"] == {"state": "finished", "findings": 0}, result
    after_start = result["shown"][: result["shown_at_start"]]
    review = result["shown"][result["shown_at_start"] : result["shown_after_review"]]
    assert after_start == [], after_start
    # Info messages reach Neovim's message area through nvim_out_write: "LSP[redline][Info] …".
    assert len(review) == 1, review
    assert review[0]["how"] == "out"
    assert review[0]["text"].startswith("LSP[redline][Info] Redline: no findings"), review
    assert "uncommitted changes" in review[0]["text"]

    errors = result["errors"]
    assert len(errors["bad-scope"]) == 1, errors
    assert "unknown scope 'nope'" in errors["bad-scope"][0]
    assert len(errors["bad-format"]) == 1, errors
    assert "unknown export format 'pdf'" in errors["bad-format"][0]
    assert len(errors["gone-finding"]) == 1, errors
    assert "that finding is no longer current" in errors["gone-finding"][0]
    # The error answer is what was shown (`vim.notify` at ERROR, level 4 in 0.7).
    for shown in errors.values():
        assert shown[0].startswith("notify:4 redline: "), shown
    assert result["exit"] == {"code": 0, "signal": 0}
