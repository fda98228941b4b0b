"""One defect, one finding (issue 24): a bare `except: pass` is ruff's E722 ("Bare `except`")
and S110 (`try`-`except`-`pass`) on the same line; a model that reports "Bare except silently
swallows errors" fused with S110 (more shared lines) and left E722 beside it, so the report
showed two "Bare except" findings on one line. And a model title in ruff's own style ("Bare
`except` clause") did not count as naming the topic at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_env import isolate_model_env
from redline.analyzers import run_analyzers
from redline.cli.main import main
from redline.config_models import AnalyzerSettings
from redline.model import Category, Finding, Severity
from redline.review.fusion import fuse

from gitrepo import GitRepo
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

SOURCE = "def read(path):\n    try:\n        return open(path).read()\n    except:\n        pass\n"
EXCEPT_LINE = 4


def _analyzer_findings() -> list[Finding]:
    outcome = run_analyzers(
        {"a.py": SOURCE.encode()}, {"a.py": set(range(1, 6))}, AnalyzerSettings()
    )
    assert {f.rule_id for f in outcome.findings} >= {"E722", "S110"}
    return outcome.findings


def _model(title: str, end_line: int = 5) -> Finding:
    return Finding(
        id="RL-000000000001", file="a.py", line=EXCEPT_LINE, end_line=end_line,
        severity=Severity.MEDIUM, category=Category.FUNCTIONALITY, title=title,
        comment="Catching everything hides real failures; catch OSError.",
        existing_code="    except:\n        pass", sources=["model:m"], confidence=0.8,
    )  # fmt: skip


def _bare_excepts(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if "bare" in f.title.lower() and f.line == EXCEPT_LINE]


@pytest.mark.parametrize(
    "title", ["Bare except silently swallows errors", "Bare `except` clause hides errors"]
)
def test_a_model_finding_absorbs_every_analyzer_finding_it_names_on_its_lines(
    title: str,
) -> None:
    fused = fuse([_model(title)], _analyzer_findings())
    [bare] = _bare_excepts(fused)
    assert bare.title == title
    assert {"model:m", "ruff:E722", "ruff:S110"} <= set(bare.sources)
    assert bare.severity is Severity.MEDIUM


def test_an_analyzer_finding_the_model_does_not_name_stays_its_own() -> None:
    model = _model("Shell injection through path", end_line=4)
    fused = fuse([model], _analyzer_findings())
    assert {f.rule_id for f in fused} >= {"E722", "S110"}


def test_the_report_shows_one_bare_except(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_model_env(monkeypatch, tmp_path)
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "def read(path):\n    return None\n")
    repo.commit("base")
    repo.write("a.py", SOURCE)
    found = {
        "file": "a.py", "line": EXCEPT_LINE, "severity": "Medium", "category": "Functionality",
        "title": "Bare except silently swallows errors",
        "comment": "Catching everything hides real failures; catch OSError.",
        "existing_code": "    except:\n        pass", "confidence": 0.8,
    }  # fmt: skip
    with ScriptedLLM(handler=ReviewScript(findings={"a.py": [found]})) as llm:
        code = main(
            ["review", "--repo", str(repo.root), "--quiet", "--format", "json",
             "--model", "openai/scripted", "--api-base", llm.base_url]
        )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    findings = json.loads(out)["findings"]
    on_line = [f["title"] for f in findings if f["line"] == EXCEPT_LINE]
    assert on_line == ["Bare except silently swallows errors"], on_line
