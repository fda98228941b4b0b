"""Fake `gh` and `glab` executables for the scope and runner tests (tests/test_git_runner.py,
tests/test_gitlab_scope.py): small shell scripts that answer the few commands Redline runs.

A fake `<tool>` is installed as `<tmp>/<tool>bin/<tool>` and records what it was given in
`<tmp>/<tool>data`: every call's arguments in `calls` (a line a call), the last call's environment
in `env`, and what `api` read on stdin in `stdin`. Each knows one change, whose diff is DIFF:
gh pull request 12, glab merge request !7.

The posting tests' fake forge is another kind: tests/fake_forge.py, a Python program that keeps
a forge's state and answers its REST API through `gh api` / `glab api` (tests/forge_bed.py
installs it).
"""

from __future__ import annotations

import json
import stat
from collections.abc import Mapping
from pathlib import Path

from gitrepo import GitRepo

DIFF = (
    "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n"
    "@@ -1 +1,2 @@\n one\n+two\n"
)


def add_change(repo: GitRepo, origin: str) -> GitRepo:
    """`repo` with remote `origin` and the change of DIFF: a.txt "one" on main, and branch feature
    adding "two"; main is checked out."""
    repo.git("remote", "add", "origin", origin)
    repo.write("a.txt", "one\n")
    repo.commit("init")
    repo.checkout("-b", "feature")
    repo.write("a.txt", "one\ntwo\n")
    repo.commit("feature")
    repo.checkout("main")
    return repo


def script(path: Path, body: str) -> Path:
    """An executable /bin/sh script at `path` running `body` (its directory made as needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _fake_tool(
    tmp_path: Path, tool: str, *, auth_rc: int, view: Mapping[str, object] | None, answers: str
) -> Path:
    """A fake `tool` that records each call, exits `auth_rc` on `auth status`, takes `api` input,
    and otherwise answers as the `case` branches in `answers` say (with `view.json`, holding
    `view`, and `change.diff`, holding DIFF, in the data directory $D)."""
    data = tmp_path / f"{tool}data"
    data.mkdir()
    (data / "view.json").write_text(json.dumps(view or {}))
    (data / "change.diff").write_text(DIFF)
    return script(
        tmp_path / f"{tool}bin" / tool,
        f'D="{data}"\n'
        'printf "%s\\n" "$*" >> "$D/calls"\n'
        'env > "$D/env"\n'
        'case "$1 $2" in\n'
        f'  "auth status") exit {auth_rc} ;;\n'
        f"{answers}"
        '  api*) cat > "$D/stdin"; echo "{}" ;;\n'
        '  *) echo "unexpected: $*" >&2; exit 9 ;;\n'
        "esac\n",
    )


def fake_gh(tmp_path: Path, *, auth_rc: int = 0, view: Mapping[str, object] | None = None) -> Path:
    """Answers like gh: `auth status` (exit `auth_rc`), `pr view 12 ...` (`view` as JSON),
    `pr diff 12 ...` (DIFF) and `api ...` (`{}`); any other pull request is not found."""
    return _fake_tool(
        tmp_path,
        "gh",
        auth_rc=auth_rc,
        view=view,
        answers=(
            '  "pr view") [ "$3" = 12 ] || { echo "no pull requests found" >&2; exit 1; }\n'
            '    cat "$D/view.json" ;;\n'
            '  "pr diff") [ "$3" = 12 ] || exit 1; cat "$D/change.diff" ;;\n'
        ),
    )


def fake_glab(
    tmp_path: Path, *, auth_rc: int = 0, view: Mapping[str, object] | None = None
) -> Path:
    """Answers like glab: `auth status` (exit `auth_rc`), `mr view 7 --output json` (`view`),
    `mr diff 7 --raw` (DIFF) and `api ...` (`{}`); any other merge request is 404 Not Found."""
    return _fake_tool(
        tmp_path,
        "glab",
        auth_rc=auth_rc,
        view=view,
        answers=(
            '  "mr view") [ "$3" = 7 ] && [ "$4 $5" = "--output json" ] || '
            '{ echo "404 Not Found" >&2; exit 1; }\n'
            '    cat "$D/view.json" ;;\n'
            '  "mr diff") [ "$3" = 7 ] && [ "$4" = --raw ] || exit 1; cat "$D/change.diff" ;;\n'
        ),
    )


def calls(tmp_path: Path, tool: str) -> list[str]:
    """The calls the fake `tool` under `tmp_path` got, as argument lines ([] if none)."""
    log = tmp_path / f"{tool}data" / "calls"
    return log.read_text().splitlines() if log.exists() else []
