"""The installed CLI, offline, on a real git repository: a Go change gets ast-grep's finding on
its line, and the coverage names ast-grep with its version."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from gitrepo import GitRepo

BEFORE = """package app

func Save() error {
\terr := write()
\treturn err
}
"""
AFTER = """package app

func Save() error {
\terr := write()
\tif err != nil {}
\treturn nil
}
"""


def review(repo: Path, fmt: str = "json") -> subprocess.CompletedProcess[str]:
    redline = Path(sys.executable).with_name("redline")
    return subprocess.run(
        [str(redline), "review", "--repo", str(repo), "--format", fmt],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(repo),
            "REDLINE_CONFIG": os.devnull,
            "REDLINE_CACHE_DIR": str(repo.parent / "cache"),
        },
        check=False,
        timeout=120,
    )


def test_go_change_with_swallowed_error_gets_an_offline_finding_on_its_line(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app/save.go", BEFORE)
    repo.commit("base")
    repo.write("app/save.go", AFTER)  # uncommitted: the default scope
    result = review(repo.root)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    found = [f for f in report["findings"] if "ast-grep:go-swallowed-error" in f["sources"]]
    assert len(found) == 1, report["findings"]
    assert (found[0]["file"], found[0]["line"]) == ("app/save.go", 5)
    assert found[0]["title"] == "Error checked and then ignored"
    runs = {r["name"]: r for r in report["coverage"]["analyzers"]}
    assert runs["ast-grep"]["status"] == "ok"
    assert runs["ast-grep"]["version"] == "0.51.1"
    assert (runs["ast-grep"]["files"], runs["ast-grep"]["findings"]) == (1, 1)
    assert 0 < runs["ast-grep"]["seconds"] < 60


def test_markdown_coverage_names_version_files_findings_and_time(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app/save.go", BEFORE)
    repo.commit("base")
    repo.write("app/save.go", AFTER)
    result = review(repo.root, "markdown")
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("- ast-grep"))
    assert re.fullmatch(r"  - ast-grep 0\.51\.1: ok, 1 file, 1 finding, \d+\.\d\d s", line), line


def test_turned_off_by_environment(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app/save.go", BEFORE)
    repo.commit("base")
    repo.write("app/save.go", AFTER)
    redline = Path(sys.executable).with_name("redline")
    result = subprocess.run(
        [str(redline), "review", "--repo", str(repo.root), "--format", "json"],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(repo.root),
            "REDLINE_CONFIG": os.devnull,
            "REDLINE_AST_GREP": "false",
            "REDLINE_CACHE_DIR": str(tmp_path / "cache"),
        },
        check=False,
        timeout=120,
    )
    report = json.loads(result.stdout)
    assert not [f for f in report["findings"] if any("ast-grep" in s for s in f["sources"])]
    assert "ast-grep" not in {r["name"] for r in report["coverage"]["analyzers"]}
