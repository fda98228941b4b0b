"""A test bed for `redline review` with a model (tests/test_model_review.py,
tests/test_model_answers.py): the demo repository, a scripted model that reports the demo's
findings on it, and the environment such a test runs in.

A test module takes the fixtures by importing them under their own names, which is how pytest
finds them (the redundant alias marks a name imported for pytest, not for the code):

    from model_review_bed import demo_repo as demo_repo
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from model_env import isolate_model_env
from redline.cli.main import main

from demo_findings import BARE_EXCEPT, PHANTOM, SHELL, SPECULATIVE
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo


@pytest.fixture(autouse=True)
def isolated_model_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(monkeypatch, tmp_path)


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    # The Python change alone: the model's answers are scripted for its files (the demo's files
    # in other languages are the offline analyzers', tested in test_cli.py and the LSP tests).
    return demo.build_demo_repo(tmp_path / "demo", polyglot=False)


@pytest.fixture
def script() -> ReviewScript:
    return ReviewScript(
        findings={"app/reports.py": [SHELL, BARE_EXCEPT, SPECULATIVE], "app/text.py": [PHANTOM]},
        verdicts={"Speculative": "INCORRECT"},
    )


@pytest.fixture
def llm(script: ReviewScript) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=script) as server:
        yield server


def review(
    capsys: pytest.CaptureFixture[str], repo: Path, llm_url: str, *extra: str
) -> tuple[int, str, str]:
    """`redline review --branch main --quiet` of `repo` with the model at `llm_url`: the exit
    code, stdout and stderr."""
    code = main(
        [
            "review", "--branch", "main", "--repo", str(repo), "--quiet",
            "--model", "openai/scripted", "--api-base", llm_url, *extra,
        ]
    )  # fmt: skip
    out, err = capsys.readouterr()
    return code, out, err
