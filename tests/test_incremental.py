"""Incremental re-reviews: after a small push, only what changed goes back to the model.

The real pipeline against the scripted model: plans are reused per unit (keyed by the unit's
index entry), verdicts per finding (keyed by what the verifier is shown), the summary by the
findings it lists, and reviewer answers per file (keyed by the prompt)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from redline.agent.llm import LLMClient
from redline.config_models import LLMSettings, ModelSettings, Settings
from redline.model import Category, Finding, Severity
from redline.review.summary import summarize
from redline.review.verifier import verify
from redline.store import ReviewCache

from gitrepo import GitRepo
from review_script import ReviewScript, review_branch, role_of
from scripted_llm import ScriptedLLM

FILES = 6


def module(i: int, *, sign: str = "-", limit: int = 20) -> str:
    lines = [f'"""Module {i}."""', ""]
    for f in range(3):
        changed = f == 1
        lines += [
            "",
            f"def handle_{f}(records: list[dict], limit: int = {limit if changed else 10}):",
            "    out = []",
            "    for record in records[:limit]:",
            f'        score = record.get("w", 0) {sign if changed else "+"} record.get("b", 1)',
            "        out.append(score)",
            "    return out",
        ]
    return "\n".join(lines) + "\n"


def finding(i: int) -> dict[str, Any]:
    return {
        "file": f"src/mod_{i}.py",
        "severity": "High",
        "category": "Functionality",
        "title": f"Sign flip in module {i}",
        "comment": "The boost is subtracted now.",
        "existing_code": '        score = record.get("w", 0) - record.get("b", 1)',
        "confidence": 0.8,
    }


@pytest.fixture
def change(repo: GitRepo) -> GitRepo:
    for i in range(FILES):
        repo.write(f"src/mod_{i}.py", module(i, sign="+", limit=10))
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(FILES):
        repo.write(f"src/mod_{i}.py", module(i))
    repo.commit("feature")
    return repo


@pytest.fixture
def script() -> ReviewScript:
    return ReviewScript(findings={"src/mod_0.py": [finding(0)], "src/mod_3.py": [finding(3)]})


@pytest.fixture
def llm(script: ReviewScript) -> Any:
    with ScriptedLLM(handler=script) as server:
        yield server


def test_a_one_line_edit_in_place_asks_only_that_files_reviewer(
    change: GitRepo, llm: ScriptedLLM
) -> None:
    first, calls = review_branch(change.root, llm)
    assert calls == {"planner": 1, "reviewer": FILES, "verifier": 1, "summarizer": 1}

    change.write("src/mod_1.py", module(1, limit=30))  # the same line, another value
    change.commit("tweak")
    again, calls = review_branch(change.root, llm)
    assert calls == {"reviewer": 1}
    assert [f.id for f in again.findings] == [f.id for f in first.findings]
    assert all(f.verification and f.verification.verdict == "CORRECT" for f in again.findings)
    assert again.summary == first.summary and again.quality_score == first.quality_score
    notes = "\n".join(again.coverage.notes)
    assert "reused their cached plan" in notes and "verdicts reused" in notes
    assert "summary: reused" in notes


def test_fixing_a_finding_costs_its_reviewer_and_a_new_summary(
    change: GitRepo, llm: ScriptedLLM, script: ReviewScript
) -> None:
    review_branch(change.root, llm)
    change.write("src/mod_0.py", module(0, sign="+"))
    change.commit("fix")
    del script.findings["src/mod_0.py"]
    again, calls = review_branch(change.root, llm)
    assert calls == {"reviewer": 1, "summarizer": 1}
    assert [f.file for f in again.findings] == ["src/mod_3.py"]
    # The fixed unit changed shape (fewer changed lines): it gets the rule plan, said so.
    assert any("got the rule plan" in n for n in again.coverage.notes)


def test_a_one_line_edit_beside_a_finding_asks_no_new_summary(
    change: GitRepo, llm: ScriptedLLM
) -> None:
    # mod_0's finding is re-reported and re-verified (its code window changed) while mod_3's
    # verdict comes from the cache: the findings are the same, so is the summary.
    first, _ = review_branch(change.root, llm)
    change.write("src/mod_0.py", module(0, limit=30))  # beside mod_0's finding
    change.commit("tweak")
    again, calls = review_branch(change.root, llm)
    assert calls == {"reviewer": 1, "verifier": 1}
    assert sorted(f.id for f in again.findings) == sorted(f.id for f in first.findings)
    assert again.summary == first.summary
    assert "summary: reused" in "\n".join(again.coverage.notes)


def test_a_larger_delta_plans_only_the_new_units(
    change: GitRepo, llm: ScriptedLLM, script: ReviewScript
) -> None:
    review_branch(change.root, llm)
    for i in range(FILES, FILES + 3):
        change.write(f"src/mod_{i}.py", module(i))
    change.commit("three more modules")
    _, calls = review_branch(change.root, llm)
    assert calls["planner"] == 1 and calls["reviewer"] == 3
    planner = [b for b in llm.requests if role_of(b) == "planner"][-1]
    index = json.dumps(planner["messages"])
    assert all(f"src/mod_{i}.py" in index for i in range(FILES, FILES + 3))
    assert not any(f"src/mod_{i}.py" in index for i in range(FILES))


def _finding(line: int, title: str = "Sign flip") -> Finding:
    return Finding(
        id=f"RL-{line:012x}",
        file="a.py",
        line=line,
        severity=Severity.HIGH,
        category=Category.FUNCTIONALITY,
        title=title,
        comment="c",
        existing_code="x = 1",
        sources=["model:openai/scripted"],
    )


def test_verdicts_are_reused_only_for_unchanged_code_and_good_scores(tmp_path: Path) -> None:
    script = ReviewScript(quality=[30, 90, 90])
    with ScriptedLLM(handler=script) as llm:
        settings = Settings(
            models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="k"),
            llm=LLMSettings(max_retries=0, timeout=20),
        )
        client = LLMClient(settings)
        cache = ReviewCache(tmp_path / "c")
        text = {"a.py": "x = 1\n" * 40}

        async def go() -> list[Any]:
            out = []
            for _ in range(3):
                out.append(await verify(client, [_finding(5)], text.get, cache=cache))
            text["a.py"] = "x = 2\n" + text["a.py"]  # the code around the finding changes
            out.append(await verify(client, [_finding(5)], text.get, cache=cache))
            return out

        low, good, reused, changed = asyncio.run(go())
    assert (low.cached, low.quality_score) == (0, 30)  # scored low: not kept
    assert (good.cached, good.quality_score) == (0, 90)
    assert (reused.cached, reused.quality_score, len(reused.responses)) == (1, 90, 0)
    assert reused.kept[0].verification is not None
    assert changed.cached == 0 and script.count("verifier") == 3


def test_the_summary_is_reused_for_the_same_findings_whatever_the_label(tmp_path: Path) -> None:
    script = ReviewScript()
    with ScriptedLLM(handler=script) as llm:
        settings = Settings(
            models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="k")
        )
        client = LLMClient(settings)
        cache = ReviewCache(tmp_path / "c")

        async def go() -> list[int]:
            sizes = []
            for label, findings in (
                ("branch at abc123", [_finding(5)]),
                ("branch at def456", [_finding(5)]),
                ("branch at def456", [_finding(5), _finding(9, "Another")]),
            ):
                _, responses = await summarize(client, label, findings, cache=cache)
                sizes.append(len(responses))
            return sizes

        assert asyncio.run(go()) == [1, 0, 1]
    assert script.count("summarizer") == 2


def test_without_a_cache_every_stage_asks_the_model(
    change: GitRepo, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDLINE_NO_CACHE", "1")
    review_branch(change.root, llm)
    _, calls = review_branch(change.root, llm)
    assert calls == {"planner": 1, "reviewer": FILES, "verifier": 1, "summarizer": 1}
