"""Smaller things users see: Redline's own dismissals file is not reviewed, and a file in a
declared non-UTF-8 encoding is read as its author wrote it (or its unreadability is named).

The end-to-end tests run the real `redline` executable on real repositories, offline (no model:
the static analyzers are the review), and read what a user reads: the JSON and markdown report.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from redline.encoding import UNDECODABLE_NOTE, as_utf8, coding_cookie, decode_text
from redline.model import Finding
from redline.store.dismissals import DismissalStore

from gitrepo import GitRepo
from real_clients import REDLINE, client_env

# A Latin-1 module: "café" on line 2 is byte 0xE9, invalid as UTF-8; a bare except on line 8
# (ruff E722), and an f-string without placeholders after a non-ASCII string on line 10 (F541,
# with a fix whose columns count the "é").
LATIN1 = (
    b"# -*- coding: latin-1 -*-\n"
    b'NAME = "caf\xe9"\n'
    b"\n"
    b"\n"
    b"def f() -> int:\n"
    b"    try:\n"
    b"        return 1\n"
    b"    except:  # d\xe9j\xe0 vu\n"
    b"        return 2\n"
    b'GREETING = "\xe9t\xe9" + f"summer"\n'
)


def run_review(
    repo: GitRepo, tmp_path: Path, *extra: str, env: dict[str, str] | None = None
) -> str:
    proc = subprocess.run(
        [str(REDLINE), "review", "--repo", str(repo.root), *extra],
        env=client_env(tmp_path, **(env or {})),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode("utf-8")


def review_json(repo: GitRepo, tmp_path: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run_review(repo, tmp_path, "--format", "json", env=env))
    return data


def analyzer(review: dict[str, Any], name: str) -> dict[str, Any]:
    runs = {run["name"]: run for run in review["coverage"]["analyzers"]}
    return runs[name]  # type: ignore[no-any-return]


def test_latin1_file_keeps_its_ruff_findings_on_the_right_lines(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("README.md", "base\n")
    repo.commit("base")
    repo.write("app/legacy.py", LATIN1)

    review = review_json(repo, tmp_path)
    by_rule = {f["rule_id"]: f for f in review["findings"] if f["sources"][0].startswith("ruff:")}
    assert set(by_rule) >= {"E722", "F541"}, review["findings"]
    bare = by_rule["E722"]
    assert (bare["file"], bare["line"], bare["end_line"]) == ("app/legacy.py", 8, 8)
    # The flagged code is quoted as the author wrote it, not as U+FFFD.
    assert "déjà vu" in bare["existing_code"]
    fstring = by_rule["F541"]
    assert fstring["line"] == 10
    assert fstring["existing_code"].strip() == 'GREETING = "été" + f"summer"'
    assert 'GREETING = "été" + "summer"' in fstring["improved_code"]
    ruff = analyzer(review, "ruff")
    assert (ruff["status"], ruff["message"]) == ("ok", ""), ruff
    # Redline's rewrite of the coding line for ruff never shows as a finding of its own.
    assert not [f for f in review["findings"] if f["line"] == 1], review["findings"]


def test_a_file_no_analyzer_can_read_is_named_in_the_coverage(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("README.md", "base\n")
    repo.commit("base")
    # Not UTF-8 and no coding line: neither ruff nor bandit (Python's parser) can read it.
    repo.write("app/broken.py", b'VALUE = "\xff\xfe"\ntry:\n    pass\nexcept:\n    pass\n')
    repo.write("app/fine.py", "try:\n    pass\nexcept:\n    pass\n")

    # bandit on every file: by default it would leave these two to ruff (nothing in them is
    # one of the checks only bandit has). Which analyzers run where is the user's setting.
    review = review_json(repo, tmp_path, env={"REDLINE_BANDIT_SCOPE": "all"})
    ruff, bandit = analyzer(review, "ruff"), analyzer(review, "bandit")
    assert ruff["status"] == "partial"
    assert ruff["message"].startswith("ruff could not read app/broken.py: ")
    assert bandit["status"] == "partial"
    assert bandit["message"].startswith("bandit could not check app/broken.py: ")
    # The readable file is still checked.
    assert {f["file"] for f in review["findings"]} == {"app/fine.py"}

    report = run_review(repo, tmp_path)
    ruff_line = next(line for line in report.splitlines() if line.strip().startswith("- ruff"))
    assert ": partial, 2 files" in ruff_line
    assert "ruff could not read app/broken.py" in ruff_line


def test_dismissals_file_is_not_reviewed_as_a_change(tmp_path: Path) -> None:
    """Issue 25: Redline's own `.redline/dismissed.toml` is not part of the change at all — no
    unit, not counted among the files changed, not listed as skipped — whatever scope."""
    repo = GitRepo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("a.py", "import os\nx = 1\n")
    first = review_json(repo, tmp_path)
    [unused] = [f for f in first["findings"] if f["rule_id"] == "F401"]

    # What the editor's `redline.dismiss` does: write .redline/dismissed.toml in the repository.
    DismissalStore(repo.root).add(Finding.model_validate(unused), "kept on purpose", by="test")
    assert (repo.root / ".redline" / "dismissed.toml").is_file()
    second = review_json(repo, tmp_path)
    assert _not_in_the_change(second)
    assert second["coverage"]["reviewed_files"] == ["a.py"]
    assert second["findings"] == []
    assert second["scope_label"].endswith("1 file, +1 −0"), second["scope_label"]
    assert second["stats"]["files"] == 1, second["stats"]
    report = run_review(repo, tmp_path, "--format", "markdown")
    assert "`.redline/dismissed.toml`" not in report  # not among the files, not skipped
    assert "dismissed (.redline/dismissed.toml or inline markers)" in report  # what it did
    assert "**1 file changed, +1 −0 lines.**" in report
    # The same once it is committed and then edited by hand: still Redline's state, not code.
    repo.commit("dismiss")
    repo.write(".redline/dismissed.toml", "# edited\n")
    repo.write(".redline/rules.md", "Prefer explicit imports.\n")
    third = review_json(repo, tmp_path)
    assert _not_in_the_change(third)
    # The team's own instructions file is theirs, and is reviewed like any text: here, offline,
    # that is by nothing (no analyzer reads Markdown), and the report says so.
    reason = "not reviewed: no analyzer for Markdown and no model ran"
    assert {"path": ".redline/rules.md", "reason": reason} in third["coverage"]["skipped"]
    assert ".redline/rules.md" not in third["coverage"]["reviewed_files"]
    # Alone in a change, it leaves nothing to review; in a commit or a branch, the same.
    (repo.root / ".redline" / "rules.md").unlink()
    alone = review_json(repo, tmp_path)
    assert _not_in_the_change(alone)
    assert alone["scope_label"].endswith("no changes"), alone["scope_label"]
    repo.commit("edit the dismissals")
    for scope in (["--commit", "HEAD"], ["--range", "HEAD~2..HEAD"]):
        data = json.loads(run_review(repo, tmp_path, "--format", "json", *scope))
        assert _not_in_the_change(data), scope


def _not_in_the_change(review: dict[str, Any]) -> bool:
    coverage = review["coverage"]
    paths = [*coverage["reviewed_files"], *(s["path"] for s in coverage["skipped"])]
    paths += [f["file"] for f in review["findings"]]
    return ".redline/dismissed.toml" not in paths


# -- the decoding rules themselves -----------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"# -*- coding: latin-1 -*-\n", "latin-1"),
        (b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n", "cp1252"),
        (b"\n# coding=iso-8859-15\n", "iso-8859-15"),
        (b"x = 1\n# coding: latin-1\n", None),  # line 2 counts only after a comment or blank
        (b"# a\n# b\n# coding: latin-1\n", None),  # line 3 never counts
        (b'x = "# coding: latin-1"\n', None),
    ],
)
def test_coding_line_found_where_python_looks(data: bytes, name: str | None) -> None:
    cookie = coding_cookie(data)
    assert (cookie.name if cookie else None) == name


def test_decoding_prefers_utf8_then_the_declaration_then_replacement() -> None:
    # Valid UTF-8 wins over a stale declaration, as in an editor's buffer.
    assert decode_text("# coding: latin-1\nx = 'é'\n".encode()) == (
        "# coding: latin-1\nx = 'é'\n",
        None,
    )
    assert decode_text(b"# coding: cp1252\nx = '\x80'\n") == ("# coding: cp1252\nx = '€'\n", None)
    # A codec that is not a text encoding, or that cannot decode the bytes, is not used.
    for data in (b"# coding: rot13\nx = '\xff'\n", b"# coding: ascii\nx = '\xff'\n"):
        assert decode_text(data) == (data.decode("utf-8", errors="replace"), UNDECODABLE_NOTE)


def test_transcoding_keeps_lines_and_columns() -> None:
    out = as_utf8(LATIN1)
    assert out is not None
    text = out.decode("utf-8")
    original = LATIN1.decode("latin-1")
    assert text.splitlines()[0] == "# -*- coding: utf-8   -*-"
    assert text.splitlines()[1:] == original.splitlines()[1:]
    assert len(text.splitlines()[0]) == len(original.splitlines()[0])
    assert as_utf8("x = 'é'\n".encode()) is None
    assert as_utf8(b"x = '\xff'\n") is None
