"""A debater whose model fails is named with the setting that configures it: the hint under
its note names `debate.reviewers.<name>.…`, not a setting the debater does not read."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from debate_bed import DebateScript, debate_settings, make_repo
from model_env import isolate_model_env
from redline.agent.llm import LLMClient
from redline.config_models import Settings
from redline.debate.run import run_debate
from redline.requests import DebateRequest, ScopeKind, ScopeRequest

from scripted_llm import ScriptedLLM

BRANCH = DebateRequest(ScopeRequest(ScopeKind.BRANCH, "main"))


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(monkeypatch, tmp_path)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _debate(root: Path, settings: Settings) -> Any:
    return asyncio.run(
        run_debate(BRANCH, root, settings, client=LLMClient(settings, backoff_base=0.0))
    )


def test_a_debater_at_a_dead_api_base_is_pointed_at_its_own_setting(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    script = DebateScript(lambda name, rnd, body: f"{name} round {rnd}")
    with ScriptedLLM(handler=script) as llm:
        settings = debate_settings(llm)
        data = settings.model_dump()
        dead = f"http://127.0.0.1:{_closed_port()}/v1"
        data["debate"]["reviewers"]["bob"]["api_base"] = dead
        review = _debate(tmp_path / "repo", Settings.model_validate(data))
    debate = review.debate
    assert debate is not None
    skipped = next(t for t in debate.turns if t.speaker == "bob")
    assert skipped.kind == "skipped" and skipped.note is not None
    assert f"model openai/bob-model at {dead}: nothing is listening there" in skipped.note
    # Bob's address is his own table's: the flag or variable would not change it.
    fix = "hint: start the model server, or fix debate.reviewers.bob.api_base"
    assert skipped.note.endswith(fix)
    out = next(n for n in debate.notes if n.startswith("Bob is out of the debate"))
    assert "debate.reviewers.bob.api_base" in out and "REDLINE_API_BASE" not in out
    # The others, on the shared address, debated on.
    assert {t.speaker for t in debate.turns if t.kind == "turn"} == {"alice", "carol"}


def test_a_debater_on_the_shared_address_keeps_the_flag_in_its_hint(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    settings = Settings.model_validate(
        {
            "models": {"model": "openai/m", "api_base": dead, "api_key": "sk-test-key-not-secret"},
            "llm": {"max_retries": 0, "timeout": 20},
        }
    )
    review = _debate(tmp_path / "repo", settings)
    assert review.failure is not None
    assert "fix --api-base / REDLINE_API_BASE" in review.failure
    assert "debate.reviewers" not in review.failure


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({"bob": {"model": "openai/b", "api_base": "http://127.0.0.1:1/v1", "prompt": "x"}},
         "debate.reviewers.bob.api_base"),
        ({"bob": {"model": "openai/b", "prompt": "x"}},
         "debate.reviewers.bob.api_base (else --api-base / REDLINE_API_BASE)"),
        ({}, ""),  # the built-in roster on the shared address: the generic hint
    ],
)  # fmt: skip
def test_the_roster_names_where_each_address_is_set(
    table: dict[str, dict[str, str]], expected: str
) -> None:
    from redline.debate.roster import build_roster

    reviewers = {"alice": {"model": "openai/a", "prompt": "x"}, **table} if table else {}
    models = {"model": "openai/m", "api_base": "http://127.0.0.1:2/v1"}
    roster = build_roster(
        Settings.model_validate({"models": models, "debate": {"reviewers": reviewers}})
    )
    assert roster.debaters[-1].api_base_setting == expected
