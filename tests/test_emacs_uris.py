"""Emacs + eglot (batch) in a repository under `café/c++proj`: eglot spells its URIs
`caf%C3%A9/c++proj` (`+` unencoded), the server `caf%C3%A9/c%2B%2Bproj`. tests/emacs/uris.el
loads the README's snippet, reviews the branch, applies the quick fix at the unused import, adds
a first line to the unsaved buffer, reviews again, then changes app/extra.py on disk (as a pull
would) and opens it; it records where Flymake shows the findings at each step."""

from __future__ import annotations

from pathlib import Path

import pytest

import test_emacs
from test_lsp_uris import build_repo

from real_clients import TESTS


def test_emacs_in_a_path_with_e_acute_and_plus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = build_repo(tmp_path)
    monkeypatch.setattr(test_emacs, "DRIVER", TESTS / "emacs" / "uris.el")
    result = test_emacs.run_emacs(repo, tmp_path)

    assert "/caf%C3%A9/c++proj/app/reports.py" in result["buffer-uri"], result["buffer-uri"]
    assert result["review"] == "finished"
    assert result["lines-reviewed"] == [4, 21, 27, 31]  # Flymake lines are 1-based

    # The quick fix is offered ("No code actions available" before) and applied.
    titles = result["action-titles"]
    assert titles and titles[0].startswith("Redline: apply fix"), titles
    assert result["import-left"] == "import subprocess"  # `import os` above it is gone
    assert result["lines-after-fix"] == [20, 26, 30]

    # A new first line (unsaved) moves every squiggle down one.
    assert result["lines-after-edit"] == [21, 27, 31]

    # Reviewed again with the buffer unsaved: the findings are placed in the buffer.
    assert result["rerun"] == "finished" and result["modified"] is True
    assert result["lines-after-rerun"] == [21, 27, 31]

    # app/extra.py changed on disk after the review, then opened: eglot (which drops the
    # diagnostics of files it has not visited) shows its finding where its code now is.
    assert result["extra-managed"] is True
    assert result["lines-opened"] == [5]
