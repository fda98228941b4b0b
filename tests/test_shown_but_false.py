"""Issue 10, "shown but false": what a user sees when the model's quote is not in the file, when
it reports the same problem twice, when its fix does not parse, and when it quotes Redline's own
prompt gutter. The CLI, the real pipeline, litellm's real HTTP path and a scripted model on
127.0.0.1 (the language server's side is in test_lsp_server.py's model scenario)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_env import isolate_model_env
from redline.cli.main import main

from demo_findings import BARE_EXCEPT, GUTTER, NEAR_MISS, NOT_PARSING, SHELL
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

REPORTS = "app/reports.py"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One scripted review rendered in every format (the answers are cached after the first)."""
    root = tmp_path_factory.mktemp("false")
    repo = demo.build_demo_repo(root / "demo")
    script = ReviewScript(
        # BARE_EXCEPT twice: the same finding, word for word, as models do repeat themselves.
        findings={REPORTS: [SHELL, BARE_EXCEPT, BARE_EXCEPT, NEAR_MISS, NOT_PARSING, GUTTER]}
    )
    env = {
        "REDLINE_CONFIG": str(root / "user.toml"),
        "REDLINE_CACHE_DIR": str(root / "cache"),
        "REDLINE_API_KEY": "sk-test-key-not-secret",
    }
    (root / "user.toml").write_text("[llm]\nmax_retries = 1\ntimeout = 20\n")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    out: dict[str, str] = {}
    try:
        with ScriptedLLM(handler=script) as llm:
            for fmt in ("markdown", "json", "json-simple", "sarif"):
                out[fmt] = _review(repo, llm.base_url, fmt)
        out["verifier_prompts"] = "\n".join(
            json.dumps(b) for b in llm.requests if "You verify the findings" in json.dumps(b)
        )
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    yield out


def _review(repo: Path, url: str, fmt: str) -> str:
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(
            [
                "review", "--branch", "main", "--repo", str(repo), "--quiet",
                "--model", "openai/scripted", "--api-base", url, "--format", fmt,
            ]
        )  # fmt: skip
    assert code == 0
    return buffer.getvalue()


def _by_title(outputs: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {f["title"]: f for f in json.loads(outputs["json"])["findings"]}


def _sarif_results(outputs: dict[str, str]) -> dict[str, dict[str, Any]]:
    results = json.loads(outputs["sarif"])["runs"][0]["results"]
    return {r["message"]["text"].split("\n", 1)[0]: r for r in results}


def _simple(outputs: dict[str, str]) -> dict[str, dict[str, Any]]:
    items = json.loads(outputs["json-simple"])
    return {i["suggestionContent"].split("\n", 1)[0]: i for i in items}


# -- near-miss quotes ------------------------------------------------------------------------


def test_a_near_miss_quote_keeps_the_models_quote_at_an_approximate_location(
    outputs: dict[str, str],
) -> None:
    near = _by_title(outputs)[NEAR_MISS["title"]]
    # Not the file's text passed off as the quote: the model's own words, labelled.
    assert near["existing_code"] == NEAR_MISS["existing_code"]
    assert (near["line"], near["anchor"], near["fix"]) == (15, "approximate", "not_in_file")
    assert near["confidence"] < NEAR_MISS["confidence"]
    md = outputs["markdown"]
    assert f"`{REPORTS}:15` (approximate location) — {NEAR_MISS['title']}" in md
    assert "Quoted code (not found in the file; the location is approximate):" in md
    assert "Suggested fix:\n\n```python\n    return (report.fetch" not in md
    assert "Suggested code (not applicable: the quoted code is not in the file):" in md
    result = _sarif_results(outputs)[NEAR_MISS["title"]]
    assert "fixes" not in result
    assert "Approximate location" in result["message"]["text"]
    simple = _simple(outputs)[NEAR_MISS["title"]]
    assert simple["improvedCode"] is None
    assert simple["existingCode"] == NEAR_MISS["existing_code"]
    assert (
        "(Approximate location: the quoted code is not in the file.)"
        in (simple["suggestionContent"])
    )


# -- duplicates ------------------------------------------------------------------------------


def test_the_same_finding_twice_is_shown_and_verified_once(outputs: dict[str, str]) -> None:
    findings = json.loads(outputs["json"])["findings"]
    bare = [f for f in findings if f["title"] == BARE_EXCEPT["title"]]
    assert len(bare) == 1
    assert (bare[0]["line"], bare[0]["end_line"]) == (27, 28)
    assert outputs["markdown"].count(f"— {BARE_EXCEPT['title']}") == 1
    assert len(_sarif_results(outputs)) == len(findings)
    assert outputs["verifier_prompts"].count(BARE_EXCEPT["title"]) == 1
    notes = json.loads(outputs["json"])["coverage"]["notes"]
    assert any("1 duplicate finding merged" in n for n in notes)


# -- fixes that do not parse -----------------------------------------------------------------


def test_a_fix_that_does_not_parse_is_never_an_applicable_fix(outputs: dict[str, str]) -> None:
    by_title = _by_title(outputs)
    broken = by_title[NOT_PARSING["title"]]
    assert (broken["line"], broken["anchor"], broken["fix"]) == (33, "exact", "does_not_parse")
    assert broken["improved_code"] == NOT_PARSING["improved_code"]  # shown, marked
    # The shell fix parses: the same pipeline verdict keeps it applicable everywhere.
    assert by_title[SHELL["title"]]["fix"] == "parses"
    md = outputs["markdown"]
    section = md.split(NOT_PARSING["title"], 1)[1].split("\n### ", 1)[0]
    assert "Suggested code (does not parse as is):" in section
    assert "Suggested fix" not in section
    results = _sarif_results(outputs)
    assert "fixes" not in results[NOT_PARSING["title"]]
    assert results[NOT_PARSING["title"]]["properties"]["fix"] == "does_not_parse"
    assert "fixes" in results[SHELL["title"]]
    simple = _simple(outputs)
    assert simple[NOT_PARSING["title"]]["improvedCode"] is None
    assert (
        "Suggested code (does not parse as is):"
        in (simple[NOT_PARSING["title"]]["suggestionContent"])
    )
    assert simple[SHELL["title"]]["improvedCode"] is not None


# -- Redline's own gutter --------------------------------------------------------------------


def test_a_quote_with_redlines_prompt_gutter_anchors_exactly(outputs: dict[str, str]) -> None:
    gutter = _by_title(outputs)[GUTTER["title"]]
    assert (gutter["line"], gutter["end_line"], gutter["anchor"]) == (28, 28, "exact")
    assert gutter["existing_code"] == "        return None"
