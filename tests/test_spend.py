"""Spending less time and fewer tokens on the model (issue 10): what a user waits for and pays."""

from __future__ import annotations

import asyncio

from redline.agent.llm import LLMClient
from redline.config_models import LLMSettings, ModelSettings, Settings
from redline.model import Category, Finding, Severity
from redline.review.verifier import BATCH, verify

from review_script import ReviewScript
from scripted_llm import ScriptedLLM


def _finding(n: int) -> Finding:
    return Finding(
        id=f"RL-{n:012x}",
        file="a.py",
        line=n + 1,
        severity=Severity.HIGH,
        category=Category.FUNCTIONALITY,
        title=f"Problem {n}",
        comment="c",
        existing_code=f"x{n} = 1",
        sources=["model:openai/scripted"],
    )


def test_verifier_batches_run_at_once() -> None:
    findings = [_finding(n) for n in range(2 * BATCH + 5)]  # three batches
    script = ReviewScript(delay=0.3)
    with ScriptedLLM(handler=script) as llm:
        settings = Settings(
            models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="k"),
            llm=LLMSettings(max_retries=0, timeout=20),
        )
        text = "\n".join(f"x{n} = 1" for n in range(len(findings)))
        result = asyncio.run(verify(LLMClient(settings), findings, {"a.py": text}.get))
        peak = llm.max_in_flight
    assert script.count("verifier") == 3 and peak == 3
    assert [f.id for f in result.kept] == [f.id for f in findings]
    assert all(f.verification and f.verification.verdict == "CORRECT" for f in result.kept)
