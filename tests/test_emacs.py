"""Emacs in batch mode (Debian's emacs-nox 28 with elpa-eglot 1.9, or Emacs 29+ with its own
eglot) running the README's Emacs snippet as written: tests/emacs/drive.el loads it, opens
app/reports.py in the demo repository, runs `M-x eglot` (which starts `redline lsp` from PATH) and
`M-x redline-review-branch`, and reads the demo's findings back from Flymake."""

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

DRIVER = TESTS / "emacs" / "drive.el"
TIMEOUT = 120  # seconds for the whole Emacs session; it takes about 3


def emacs_with_eglot() -> str:
    found = shutil.which("emacs")
    install = "apt-get install -y --no-install-recommends emacs-nox elpa-eglot"
    if found is None:
        missing("Emacs (emacs)", install)
    assert found is not None
    probe = subprocess.run(
        [found, "--batch", "--eval", "(require 'eglot)"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    if probe.returncode != 0:
        missing("eglot for Emacs (bundled from Emacs 29)", install)
    return found


def run_emacs(repo: Path, tmp: Path) -> dict[str, Any]:
    out = tmp / "emacs-result.json"
    el = tmp / "redline-snippet.el"
    el.write_text(snippet("Emacs (eglot)", "elisp"), encoding="utf-8")
    home = tmp / "emacs-home"  # ~/.emacs.d and anything eglot or project.el keep: never the user's
    home.mkdir()
    env = client_env(
        tmp,
        HOME=str(home),
        REDLINE_EMACS_SNIPPET=str(el),
        REDLINE_EMACS_REPO=str(repo.resolve()),
        REDLINE_EMACS_OUT=str(out),
        # The snippet runs plain `redline`: found on PATH, as the README tells users.
        PATH=f"{REDLINE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    command = [emacs_with_eglot(), "--batch", "-l", str(DRIVER)]
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
        pytest.fail(f"Emacs did not finish within {TIMEOUT} s: {partial}")
    if not out.exists():
        pytest.fail(f"Emacs wrote no result (exit {proc.returncode})\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert result.get("ok") is True, f"{result.get('error')}\n{result}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, proc.stderr
    return result


def test_the_readme_snippet_reviews_the_branch_into_flymake(tmp_path: Path) -> None:
    repo = demo.build_demo_repo(tmp_path / "demo")

    result = run_emacs(repo, tmp_path)

    assert result["eglot-loaded-before"] is False  # the snippet works from an init file
    assert result["commands"] == [True, True]  # M-x redline-review-branch / -uncommitted
    assert result["mode"] == "python-mode"
    assert result["server-command"][-2:] == ["redline", "lsp"]
    assert str(result["review"]["taskId"])
    # Flymake lines are 1-based: the unused import, shell=True, bare except, mutable default.
    diagnostics = result["diagnostics"]
    assert [d["line"] for d in diagnostics] == [4, 21, 27, 31], diagnostics
    types = {d["line"]: d["type"] for d in diagnostics}
    assert types == {4: "eglot-note", 21: "eglot-error", 27: "eglot-warning", 31: "eglot-warning"}
    assert "os" in diagnostics[0]["text"]
    assert result["server-running"] is False
