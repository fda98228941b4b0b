"""`--baseline previous.sarif`: real CLI runs on a real repository, the first run's SARIF as
the second's baseline. What CI sees: the SARIF states, the JSON comparison, the Markdown line,
and an exit code that fails on new findings only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline.cli.main import main

from gitrepo import GitRepo

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())

# F821 (undefined name) is a High finding, F401 (unused import) a Low one: ruff, offline.
FIRST = "import os\n\nvalue = undefined_one\n"
# The unused `os` is fixed, `sys` is a new unused import, the High finding is unchanged
# (and moved down a line: matched by id, not by line).
SECOND = "import sys\n\n\nvalue = undefined_one\n"
THIRD = SECOND + "other = undefined_two\n"


@pytest.fixture(autouse=True)
def _isolated_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in list(os.environ):
        if var.startswith("REDLINE_") and var != "REDLINE_CACHE_DIR":
            monkeypatch.delenv(var)
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)


def review(capsys: pytest.CaptureFixture[str], repo: GitRepo, *argv: str) -> tuple[int, str]:
    code = main(["review", "--repo", str(repo.root), *argv])
    _out, err = capsys.readouterr()
    return code, err


def results_by_state(log: dict[str, Any]) -> dict[str, list[str]]:
    """Each state's results as "path:line message-title", sorted."""
    out: dict[str, list[str]] = {}
    for result in log["runs"][0]["results"]:
        place = result["locations"][0]["physicalLocation"]
        where = f"{place['artifactLocation']['uri']}:{place['region']['startLine']}"
        title = result["message"]["text"].split("\n\n", 1)[0]
        out.setdefault(result["baselineState"], []).append(f"{where} {title}")
    return {state: sorted(items) for state, items in out.items()}


@pytest.fixture
def repo_with_first_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[GitRepo, Path]:
    repo = GitRepo(tmp_path / "r")
    repo.write("app.py", "value = 1\n")
    repo.commit("base")
    repo.write("app.py", FIRST)
    first = tmp_path / "first.sarif"
    code, err = review(capsys, repo, "--format", "sarif", "--output", str(first))
    assert code == 0, err
    return repo, first


def test_second_run_marks_findings_new_unchanged_and_absent(
    repo_with_first_report: tuple[GitRepo, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, first = repo_with_first_report
    repo.write("app.py", SECOND)
    second = tmp_path / "second.sarif"
    code, err = review(
        capsys, repo, "--format", "sarif", "--output", str(second), "--baseline", str(first)
    )
    assert code == 0, err
    log = json.loads(second.read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert results_by_state(log) == {
        "new": ["app.py:1 Unused import `sys`"],
        "unchanged": ["app.py:4 Undefined name `undefined_one`"],
        # The fixed finding is carried from the first report, where it was.
        "absent": ["app.py:1 Unused import `os`"],
    }
    absent = next(r for r in log["runs"][0]["results"] if r["baselineState"] == "absent")
    assert "ruleIndex" not in absent and "fixes" not in absent
    assert log["runs"][0]["properties"]["baseline"] == {
        "file": str(first),
        "new": 1,
        "unchanged": 1,
        "absent": 1,
    }

    # The JSON report: ids, and the fixed finding's place.
    out_json = tmp_path / "second.json"
    code, err = review(
        capsys, repo, "--format", "json", "--output", str(out_json), "--baseline", str(first)
    )
    assert code == 0, err
    data = json.loads(out_json.read_text())
    ids = {f["title"]: f["id"] for f in data["findings"]}
    first_ids = {
        r["message"]["text"].split("\n\n")[0]: r["partialFingerprints"]["redline/v1"]
        for r in json.loads(first.read_text())["runs"][0]["results"]
    }
    assert data["baseline"] == {
        "file": str(first),
        "new": [ids["Unused import `sys`"]],
        "unchanged": [ids["Undefined name `undefined_one`"]],
        "absent": [
            {
                "id": first_ids["Unused import `os`"],
                "title": "Unused import `os`",
                "file": "app.py",
                "line": 1,
            }
        ],
    }

    # The Markdown report: one line of counts, and each finding's state.
    out_md = tmp_path / "second.md"
    code, err = review(
        capsys, repo, "--format", "markdown", "--output", str(out_md), "--baseline", str(first)
    )
    assert code == 0, err
    text = out_md.read_text()
    assert f"Compared with `{first}`: 1 new, 1 unchanged, 1 fixed." in text
    assert "Fixed: `app.py:1` Unused import `os`." in text
    high = text.split("Undefined name `undefined_one`", 1)[1].split("###", 1)[0]
    assert "· unchanged since the baseline*" in high
    low = text.split("Unused import `sys`", 1)[1].split("###", 1)[0]
    assert "· new since the baseline*" in low


def test_fail_on_counts_new_findings_only(
    repo_with_first_report: tuple[GitRepo, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, first = repo_with_first_report
    repo.write("app.py", SECOND)
    # Without a baseline the unchanged High finding fails the build, as before.
    code, err = review(capsys, repo, "--format", "json", "--fail-on", "high")
    assert code == 1, err
    # With it, the only High finding is one the baseline already had.
    code, err = review(
        capsys, repo, "--format", "json", "--fail-on", "high", "--baseline", str(first)
    )
    assert code == 0, err
    assert "failing" not in err

    repo.write("app.py", THIRD)
    code, err = review(
        capsys, repo, "--format", "json", "--fail-on", "high", "--baseline", str(first)
    )
    assert code == 1
    assert (
        f"failing: a new High finding (not in the baseline {first}) is at or above the "
        "fail-on threshold high (set by flag --fail-on)"
    ) in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("not json {", "not JSON"),
        ('{"version": "2.0.0", "runs": []}', "not a SARIF 2.1.0 log"),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "ESLint"}}, '
            '"results": []}]}',
            "a run of 'ESLint', not Redline's",
        ),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "Redline"}}, '
            '"results": [{"ruleId": "x", "message": {"text": "t"}}]}]}',
            "a result has no partialFingerprints['redline/v1']",
        ),
    ],
)
def test_a_file_that_is_not_a_redline_sarif_report_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("app.py", "value = 1\n")
    repo.commit("base")
    repo.write("app.py", FIRST)
    bad = tmp_path / "previous.sarif"
    if content is not None:
        bad.write_text(content)
    out = tmp_path / "report.sarif"
    code, err = review(capsys, repo, "--format", "sarif", "-o", str(out), "--baseline", str(bad))
    assert code == 2
    assert f"redline: error: --baseline {bad}: {message}" in err
    # Refused before the review ran: no report pretends to be a comparison.
    assert not out.exists()


def test_fixed_findings_from_the_baseline_are_redacted_like_the_rest(
    repo_with_first_report: tuple[GitRepo, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, first = repo_with_first_report
    # A baseline edited by hand (or written by an older, laxer version) with a token in it.
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    log = json.loads(first.read_text())
    for result in log["runs"][0]["results"]:
        result["message"]["text"] = result["message"]["text"].replace(
            "Unused import `os`", f"Unused import `os` {token}"
        )
    first.write_text(json.dumps(log))
    repo.write("app.py", SECOND)
    for fmt in ("sarif", "json", "markdown"):
        out = tmp_path / f"second.{fmt}"
        code, err = review(capsys, repo, "--format", fmt, "-o", str(out), "--baseline", str(first))
        assert code == 0, err
        text = out.read_text()
        assert "Unused import `os`" in text
        assert token not in text, fmt
