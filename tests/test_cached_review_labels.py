"""A model review whose answers all came from the answer cache is no offline review: every
place that says where the findings came from names the model and the cache. End to end: the
installed `redline`, a scripted model on 127.0.0.1, the same review run twice (the second
calls no model), then `redline history` and its re-render."""

from __future__ import annotations

import json
from pathlib import Path

from pty_run import Run, plain, run_redline
from redline.model import Coverage, Review
from redline.publish.bodies import summary_body
from redline.report import render

from model_review_bed import demo_repo as demo_repo
from model_review_bed import llm as llm
from model_review_bed import script as script
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

OFFLINE = "Offline review: no model ran"
CACHED = (
    "Cached review: no model was called. The model's part is {model}'s earlier answers, "
    "reused from the answer cache (the code they are about is unchanged)."
)


def _review(home: Path, repo: Path, url: str, *extra: str, tty: bool = False) -> Run:
    args = [
        "review", "--branch", "main", "--repo", str(repo), "--quiet",
        "--model", "openai/scripted", "--api-base", url, *extra,
    ]  # fmt: skip
    env = {"REDLINE_API_KEY": "sk-test-key-not-secret", "COLUMNS": "400"}
    return run_redline(args, home, stdout_tty=tty, stderr_tty=False, env=env)


def test_a_review_from_cached_answers_names_the_model_and_the_cache(
    tmp_path: Path, demo_repo: Path, llm: ScriptedLLM, script: ReviewScript
) -> None:
    home = tmp_path / "home"
    first = _review(home, demo_repo, llm.base_url)
    assert first.code == 0, first.stderr
    assert "- Models: `openai/scripted`" in first.stdout
    calls = len(llm.requests)

    # The terminal report (stdout on a pty), from the cache alone.
    again = _review(home, demo_repo, llm.base_url, "--color", "never", tty=True)
    assert again.code == 0, again.stderr
    assert len(llm.requests) == calls  # no model was called
    screen = " ".join(plain(again.stdout).split())  # rich wraps: compare the words
    assert CACHED.format(model="openai/scripted") in screen
    assert OFFLINE not in screen and "offline review" not in screen
    assert "Models: none called; openai/scripted answered before, reused from the" in screen
    assert "Bare except hides real errors" in screen  # the model's verified finding, shown

    markdown = _review(home, demo_repo, llm.base_url)
    assert len(llm.requests) == calls
    assert f"> {CACHED.format(model='`openai/scripted`')}" in markdown.stdout
    assert OFFLINE not in markdown.stdout
    assert "- Models: none (offline review" not in markdown.stdout

    sarif = json.loads(_review(home, demo_repo, llm.base_url, "--format", "sarif").stdout)
    properties = sarif["runs"][0]["properties"]
    assert properties["models"] == [] and properties["cachedModels"] == ["openai/scripted"]
    data = json.loads(_review(home, demo_repo, llm.base_url, "--format", "json").stdout)
    assert data["coverage"]["cached_models"] == ["openai/scripted"]

    history = run_redline(
        ["history", "--repo", str(demo_repo)], home, stdout_tty=False, stderr_tty=False
    )
    assert history.code == 0, history.stderr
    assert "offline (no model)" not in history.stdout
    label = "· cached answers of openai/scripted (no model called)"
    cached = [line for line in history.stdout.splitlines() if line.endswith(label)]
    assert len(cached) == 4, history.stdout  # every run but the first
    newest = history.stdout.split()[0]
    shown = run_redline(["history", newest], home, stdout_tty=False, stderr_tty=False)
    assert shown.code == 0, shown.stderr
    assert f"> {CACHED.format(model='`openai/scripted`')}" in shown.stdout
    assert OFFLINE not in shown.stdout
    listed = run_redline(
        ["history", "--repo", str(demo_repo), "--format", "json"],
        home,
        stdout_tty=False,
        stderr_tty=False,
    )
    rows = json.loads(listed.stdout)
    assert [r["cached_models"] for r in rows][-1] == []  # the first run called the model
    assert rows[0]["models"] == [] and rows[0]["cached_models"] == ["openai/scripted"]


def _cached_review() -> Review:
    return Review(
        task_id="t",
        scope="branch",
        scope_label="branch b vs main",
        repo="/r",
        coverage=Coverage(reviewed_files=["a.py"], cached_models=["openai/m"]),
    )


def test_the_pull_request_comment_of_a_cached_review_names_the_model_and_the_cache() -> None:
    body = summary_body(_cached_review(), "review")
    assert f"> {CACHED.format(model='`openai/m`')}" in body
    assert OFFLINE not in body


def test_an_offline_review_is_still_called_one() -> None:
    review = _cached_review().model_copy(update={"coverage": Coverage(reviewed_files=["a.py"])})
    for text in (render(review, "markdown"), summary_body(review, "review")):
        assert OFFLINE in text and "Cached review" not in text
