"""Headless Neovim (Debian's 0.7.2) in a repository under `café/c++proj`: Neovim spells its
URIs `caf%c3%a9/c++proj`, the server `caf%C3%A9/c%2B%2Bproj`. tests/nvim/uris.lua reviews, asks
for code actions at the unused import and applies the fix, adds a first line to the unsaved
buffer, reruns the review, then changes app/extra.py on disk (as a pull would) and opens it;
it records what Neovim shows at each step."""

from __future__ import annotations

from pathlib import Path

from test_lsp_uris import build_repo
from test_neovim import run_neovim

from real_clients import TESTS


def test_neovim_in_a_path_with_e_acute_and_plus(tmp_path: Path) -> None:
    repo = build_repo(tmp_path)
    result = run_neovim(repo, tmp_path, TESTS / "nvim" / "uris.lua")

    buffer_uri = result["buffer_uri"]
    assert "/caf%c3%a9/c++proj/app/reports.py" in buffer_uri, buffer_uri
    assert result["lines_reviewed"] == [3, 20, 26, 30]

    # The quick fix is offered and applied: the import is gone, its squiggle with it, and
    # the squiggles below moved up with the deleted line.
    titles = result["action_titles"]
    assert titles and titles[0].startswith("Redline: apply fix"), titles
    assert result["import_left"] == "import subprocess"  # `import os` above it is gone
    assert result["lines_after_fix"] == [19, 25, 29]

    # A new first line in the buffer (unsaved) moves every squiggle down one.
    assert result["lines_after_edit"] == [20, 26, 30]

    # A rerun reviews the file on disk but places its findings in the unsaved buffer, and
    # publishes them under Neovim's own spelling.
    assert result["lines_after_rerun"] == [20, 26, 30]
    reports = [u for u in result["published_after_rerun"] if u.endswith("/app/reports.py")]
    assert reports and set(reports) == {buffer_uri}, reports

    # app/extra.py changed on disk after the review, then opened: its squiggle is where its
    # code now is.
    assert result["lines_opened"] == [4]
    assert result["exit"] == {"code": 0, "signal": 0}
