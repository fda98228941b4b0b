"""The `redline` command line, end to end on real repositories with the real analyzers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from redline.cli.main import main

from gitrepo import GitRepo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(autouse=True)
def _isolated_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user config or REDLINE_* variable of the machine leaks into a test."""
    for var in list(os.environ):
        # REDLINE_CACHE_DIR stays: conftest points it at a temporary directory.
        if var.startswith("REDLINE_") and var != "REDLINE_CACHE_DIR":
            monkeypatch.delenv(var)
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)  # no user file


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.build_demo_repo(tmp_path_factory.mktemp("demo") / "demo")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_review_puts_each_planted_problem_on_its_line(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "review", "--branch", "main", "--repo", str(demo_repo))
    assert code == 0, err
    findings = out.split("## Coverage")[0].split("\n### ")[1:]
    for problem, (path, line) in demo.EXPECTED.items():
        # Each under its own heading, from the analyzer of its language (issue 26: TypeScript,
        # Go, shell, Dockerfile and workflow files get offline findings beside Python's).
        found = [f for f in findings if f.startswith(f"`{path}:{line}`")]
        assert found, f"{path}:{line} missing from report:\n{out}"
        assert f"from {demo.EXPECTED_ANALYZER[problem]}:" in found[0], (problem, found[0])
    assert len(findings) == len(demo.EXPECTED), out
    # The coverage names each analyzer with its version, files and findings.
    coverage = out.split("## Coverage")[-1]
    for tool in set(demo.EXPECTED_ANALYZER.values()):
        assert re.search(rf"- {tool} \d[^:]*: ok, \d+ files?, [1-9]\d* findings?, ", coverage), (
            tool,
            coverage,
        )
    # The lockfile change is skipped, and the report says so.
    assert "poetry.lock" in out.split("## Coverage")[-1]
    # Clean changes produce no findings.
    assert "app/text.py:" not in out
    assert "tests/test_text.py:" not in out
    assert "feature/export" in out


def test_fail_on_high_exits_1_and_fail_on_is_a_threshold(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(
        capsys, "review", "--branch", "main", "--repo", str(demo_repo), "--fail-on", "HIGH"
    )
    assert code == 1
    # Severity names are case-insensitive; the message says where the threshold came from.
    assert "at or above the fail-on threshold high (set by flag --fail-on)" in err


def test_findings_below_fail_on_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("a.py", "import os\nx = 1\n")  # unused import only: a Low finding
    code, out, _err = run(capsys, "review", "--repo", str(repo.root), "--fail-on", "high")
    assert code == 0
    assert "`a.py:1`" in out


def test_sarif_output_is_valid_sarif_2_1_0(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(
        capsys, "review", "--branch", "main", "--repo", str(demo_repo), "--format", "sarif"
    )
    assert code == 0
    sarif = json.loads(out)
    jsonschema.validate(sarif, json.loads(SCHEMA.read_text(encoding="utf-8")))
    lines = {
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in sarif["runs"][0]["results"]
    }
    for path, line in demo.EXPECTED.values():
        assert (path, line) in lines


def test_json_simple_uses_the_legacy_field_names(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(
        capsys, "review", "--branch", "main", "--repo", str(demo_repo), "--format", "json-simple"
    )
    assert code == 0
    items = json.loads(out)
    assert items
    for item in items:
        assert set(item) >= {
            "relevantFile",
            "existingCode",
            "suggestionContent",
            "improvedCode",
            "label",
            "suggestionLine",
            "severity",
        }
    lines = {(i["relevantFile"], i["suggestionLine"]) for i in items}
    assert ("app/reports.py", 21) in lines


def test_output_file_gets_the_report_and_stdout_stays_empty(
    demo_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "out" / "review.json"
    code, out, err = run(
        capsys, "review", "--branch", "main", "--repo", str(demo_repo),
        "--format", "json", "--output", str(target),
    )  # fmt: skip
    assert code == 0
    assert out == ""
    assert "report written to" in err
    review = json.loads(target.read_text(encoding="utf-8"))
    assert review["scope"] == "branch"
    assert {f["file"] for f in review["findings"]} == {p for p, _ in demo.EXPECTED.values()}


def test_estimate_lists_units_and_skips_without_running_analyzers(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(
        capsys, "review", "--branch", "main", "--repo", str(demo_repo), "--estimate"
    )
    assert code == 0
    assert "poetry.lock" in out and "skip: lockfile" in out
    assert "app/reports.py" in out and "| review |" in out
    assert "shell=True" not in out  # no code and no finding in an estimate
    code, out, _err = run(
        capsys, "review", "--branch", "main", "--repo", str(demo_repo), "--estimate",
        "--format", "json",
    )  # fmt: skip
    estimate = json.loads(out)
    assert estimate["scope"] == "branch" and estimate["scope_label"].startswith("branch ")


def test_not_a_git_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "review", "--repo", str(tmp_path))
    assert code == 2
    assert out == ""
    assert "not a git repository" in err
    assert "Traceback" not in err


def test_repo_path_that_does_not_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "review", "--repo", str(tmp_path / "missing"))
    assert code == 2
    assert "no such directory" in err


def test_nothing_to_review_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    code, out, err = run(capsys, "review", "--repo", str(repo.root))
    assert code == 0
    assert "**Nothing to review.**" in out
    assert "Offline review" not in out  # nothing ran: not an offline review either
    assert "nothing to review" in err


def test_missing_base_branch_is_a_clear_error(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "review", "--branch", "no-such-base", "--repo", str(demo_repo))
    assert code == 2
    assert "no-such-base" in err and "does not exist" in err


def test_bad_range_and_hostile_revision_are_usage_errors(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "review", "--range", "main", "--repo", str(demo_repo))
    assert code == 2 and "A..B" in err
    code, _out, err = run(
        capsys, "review", "--commit=--output=/tmp/redline-pwned", "--repo", str(demo_repo)
    )
    assert code == 2
    assert not Path("/tmp/redline-pwned").exists()


def test_invalid_model_flags_name_the_flag(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(
        capsys, "review", "--repo", str(demo_repo), "--api-base", "ftp://example.invalid"
    )
    assert code == 2
    assert "--api-base" in err and "http" in err


def test_unknown_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["review", "--no-such-flag"])
    assert exc.value.code == 2


def test_installed_entry_point_separates_report_and_progress(demo_repo: Path) -> None:
    """The real `redline` executable: report on stdout, progress on stderr, exit code."""
    redline = Path(sys.executable).with_name("redline")
    result = subprocess.run(
        [str(redline), "review", "--branch", "main", "--repo", str(demo_repo), "--fail-on", "low"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(demo_repo), "REDLINE_CONFIG": os.devnull},
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout.startswith("# ")
    assert "redline:" in result.stderr and "redline:" not in result.stdout
