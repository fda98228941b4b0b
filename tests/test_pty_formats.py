"""Every output format of the installed CLI, in a pseudo-terminal, on a real change that holds a
finding of every severity (offline: the analyzers' rules give each one):

- Critical: `subprocess.call(cmd, shell=True)` with a variable command (S602 on variable input)
- High: `eval(text)` (S307)
- Medium: a bare `except:` (E722)
- Low: an unused variable (F841)
- Info: a `%`-format (UP031)

Each run must exit 0, print no traceback, and show every finding with its severity, as its
format shows them. (An Info finding once crashed the terminal report while every example test
passed: none drew one.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from pty_run import Run, plain, run_redline
from redline.model import Severity

from gitrepo import GitRepo

CHANGE = """import subprocess


def run(cmd):
    subprocess.call(cmd, shell=True)


def evaluate(text):
    return eval(text)


def load(path):
    try:
        return open(path).read()
    except:
        return None


def label(x):
    unused = 1
    return "value: %s" % x
"""
# The line of each severity's finding in app.py.
LINES = {
    Severity.CRITICAL: 5,
    Severity.HIGH: 9,
    Severity.MEDIUM: 15,
    Severity.LOW: 20,
    Severity.INFO: 21,
}


@pytest.fixture(scope="module")
def change(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = GitRepo(tmp_path_factory.mktemp("formats") / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("start")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", CHANGE)
    repo.commit("every severity")
    return repo.root


def review(repo: Path, home: Path, *extra: str) -> Run:
    run = run_redline(
        ["review", "--branch", "main", "--repo", str(repo), *extra],
        home,
        stdout_tty=True,
        stderr_tty=True,
    )
    everything = plain(run.stdout + run.stderr)
    assert "Traceback" not in everything
    assert run.code == 0, everything
    return run


def _json(run: Run) -> Any:
    return json.loads(plain(run.stdout))


def test_terminal(change: Path, tmp_path: Path) -> None:
    shown = plain(review(change, tmp_path).stdout)
    for severity, line in LINES.items():
        assert severity.value.upper() in shown
        assert f"app.py:{line}" in shown


def test_markdown(change: Path, tmp_path: Path) -> None:
    text = plain(review(change, tmp_path, "--format", "markdown").stdout)
    tokens = MarkdownIt("commonmark").parse(text)
    section = ""
    placed: dict[int, str] = {}  # a finding's line → its severity section
    for i, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        heading = tokens[i + 1].content
        if token.tag == "h2":
            section = heading
        elif token.tag == "h3":
            for line in LINES.values():
                if f"app.py:{line}`" in heading:
                    placed[line] = section
    for severity, line in LINES.items():
        assert severity.value in placed[line]


def test_json(change: Path, tmp_path: Path) -> None:
    data = _json(review(change, tmp_path, "--format", "json"))
    found = {(f["severity"], f["line"]) for f in data["findings"]}
    assert {(s.value, line) for s, line in LINES.items()} <= found


def test_json_simple(change: Path, tmp_path: Path) -> None:
    data = _json(review(change, tmp_path, "--format", "json-simple"))
    found = {(f["severity"], f["suggestionLine"]) for f in data}
    assert {(s.value, line) for s, line in LINES.items()} <= found


def test_sarif(change: Path, tmp_path: Path) -> None:
    import jsonschema

    log = _json(review(change, tmp_path, "--format", "sarif"))
    schema = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
    jsonschema.validate(log, json.loads(schema.read_text(encoding="utf-8")))
    found = {
        (r["properties"]["severity"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
        for r in log["runs"][0]["results"]
    }
    assert {(s.value, line) for s, line in LINES.items()} <= found
