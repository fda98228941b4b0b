"""Issue 10: no finding is lost to the shape of a model's answer. Every case goes through the
real CLI and pipeline, litellm's HTTP path and a scripted model on 127.0.0.1, and asserts what
a user reads: the report's findings and coverage lines, and the exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from test_ask import AskScript

from demo_findings import BARE_EXCEPT, SHELL
from model_review_bed import demo_repo as demo_repo
from model_review_bed import isolated_model_env as isolated_model_env
from model_review_bed import llm as llm
from model_review_bed import review as model_review
from model_review_bed import script as script
from review_script import ReviewScript, role_of
from scripted_llm import Reply, ScriptedLLM

ALL_REVIEWED = (
    "- Reviewed: 4 files: `README.md`, `app/reports.py`, `app/text.py`, `tests/test_text.py`"
)
SHELL_TITLE = "Shell injection through the report name"
REASKED = "Your answer could not be used"


def review(
    capsys: pytest.CaptureFixture[str], repo: Path, llm_url: str, *extra: str
) -> tuple[int, str]:
    """`redline review --branch main` with the scripted model, which must exit 0."""
    code, out, err = model_review(capsys, repo, llm_url, *extra)
    assert code == 0, err
    return code, out


def answer(data: dict[str, Any], before: str = "", after: str = "") -> Reply:
    return Reply.text(before + json.dumps(data) + after)


def notes(report: str) -> list[str]:
    return [
        line.removeprefix("- Note: ") for line in report.splitlines() if line.startswith("- Note: ")
    ]


def reasks(llm: ScriptedLLM, role: str) -> list[str]:
    """The re-ask messages sent to `role` (what the model was told was wrong)."""
    return [
        str(m["content"])
        for body in llm.requests
        if role_of(body) == role
        for m in body["messages"]
        if m.get("role") == "user" and REASKED in str(m.get("content"))
    ]


# -- wrong top-level keys, in every schema a model answers ------------------------------------


def test_a_reviewer_answer_under_the_wrong_key_is_not_reviewed_and_says_why(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three attempts, each asking twice: the model never uses the right key.
    wrong = answer({"issues": [SHELL, BARE_EXCEPT], "summary": "two problems"})
    script.faults[("reviewer", "app/reports.py")] = [wrong] * 6
    _, out = review(capsys, demo_repo, llm.base_url)
    assert "- Reviewed: 3 files: `README.md`, `app/text.py`, `tests/test_text.py`" in out
    skipped = next(line for line in out.splitlines() if line.startswith("  - `app/reports.py`"))
    assert "not reviewed: invalid model output" in skipped
    assert "issues: Extra inputs are not permitted" in skipped
    assert SHELL_TITLE not in out  # the model's findings there were never read
    assert "`app/reports.py:21`" in out  # the analyzers' still are
    told = reasks(llm, "reviewer")
    assert told and "issues: Extra inputs are not permitted" in told[0]


def test_a_reviewer_re_asked_after_the_wrong_key_gets_its_findings_in(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    script.faults[("reviewer", "app/reports.py")] = [answer({"issues": [SHELL]})]
    _, out = review(capsys, demo_repo, llm.base_url)
    assert f"`app/reports.py:21` — {SHELL_TITLE}" in out
    assert ALL_REVIEWED in out and "not reviewed" not in out
    assert [p for r, p in script.calls if r == "reviewer"].count("app/reports.py") == 2


def test_a_reviewer_round_that_only_asks_for_context_is_a_valid_answer(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    ask_more = {"need_context": [{"kind": "callers", "target": "export_report", "reason": "who"}]}
    script.faults[("reviewer", "app/reports.py")] = [answer(ask_more)]
    _, out = review(capsys, demo_repo, llm.base_url)
    assert f"`app/reports.py:21` — {SHELL_TITLE}" in out  # from the round after the context
    assert ALL_REVIEWED in out and not reasks(llm, "reviewer")


def test_a_planner_answer_under_the_wrong_key_falls_back_to_the_rule_plan_with_a_note(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    script.faults[("planner", "")] = [answer({"plan": [], "units_to_review": []})] * 2
    _, out = review(capsys, demo_repo, llm.base_url)
    note = next(n for n in notes(out) if n.startswith("planner answer unusable"))
    assert "plan: Extra inputs are not permitted" in note
    assert "units: Field required" in note
    assert note.endswith("the rule plan was used")
    assert f"`app/reports.py:21` — {SHELL_TITLE}" in out and ALL_REVIEWED in out


def test_a_verifier_answer_under_the_wrong_key_leaves_findings_unverified_with_a_note(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = answer({"results": [], "quality_score": 90})
    script.faults[("verifier", "")] = [wrong] * 2
    _, out = review(capsys, demo_repo, llm.base_url)
    note = next(n for n in notes(out) if n.startswith("verification failed in attempt 1"))
    assert "results: Extra inputs are not permitted" in note
    assert note.endswith("findings are shown unverified")
    # Unverified, so the speculative finding the verifier would reject is still shown.
    assert "Speculative quadratic loop" in out and "verified: CORRECT" not in out


def test_a_verifier_re_asked_after_the_wrong_key_gets_its_verdicts_in(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    script.faults[("verifier", "")] = [answer({"results": [], "quality_score": 90})]
    _, out = review(capsys, demo_repo, llm.base_url)
    assert "Speculative quadratic loop" not in out  # rejected by the re-asked verifier
    assert "verified: CORRECT" in out
    assert "results: Extra inputs are not permitted" in reasks(llm, "verifier")[0]


def test_a_summary_under_the_wrong_key_is_not_used_and_says_why(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = answer({"assessment": "Looks fine.", "risks": ["none"]})
    script.faults[("summarizer", "")] = [wrong] * 2
    _, out = review(capsys, demo_repo, llm.base_url)
    note = next(n for n in notes(out) if n.startswith("summary not written by the model"))
    assert "risks: Extra inputs are not permitted" in note
    assert "Looks fine." not in out
    assert "## Summary" not in out  # no summary rather than an invented one
    assert "findings: 1 Critical, " in out  # the counts, in the headline


# -- how the JSON is wrapped -------------------------------------------------------------------


def _rewrap(script: ReviewScript, wrap: Callable[[str], str]) -> Callable[[dict[str, Any]], Reply]:
    """Every reviewer answer of `script`, rewritten by `wrap`."""

    def handler(body: dict[str, Any]) -> Reply:
        reply = script(body)
        if role_of(body) == "reviewer" and reply.content is not None:
            reply.content = wrap(reply.content)
        return reply

    return handler


def test_braces_in_prose_after_the_json_cost_nothing(
    demo_repo: Path, script: ReviewScript, capsys: pytest.CaptureFixture[str]
) -> None:
    def trailing(text: str) -> str:
        return text + '\n\nFor a clean file an empty dict {} would do, or {"findings": []}.'

    with ScriptedLLM(handler=_rewrap(script, trailing)) as llm:
        _, out = review(capsys, demo_repo, llm.base_url)
    assert f"`app/reports.py:21` — {SHELL_TITLE}" in out
    assert "Code the model imagined" in out
    assert ALL_REVIEWED in out and "not reviewed" not in out
    assert script.count("reviewer") == 4 and not reasks(llm, "reviewer")  # no re-ask


def test_fenced_json_between_prose_with_braces_is_read(
    demo_repo: Path, script: ReviewScript, capsys: pytest.CaptureFixture[str]
) -> None:
    def fenced(text: str) -> str:
        return (
            "Here is my review; I checked the {name} placeholders first.\n\n```json\n"
            + text
            + '\n```\n\nAnything else? A {"findings": []} answer means nothing was found.'
        )

    with ScriptedLLM(handler=_rewrap(script, fenced)) as llm:
        _, out = review(capsys, demo_repo, llm.base_url)
    assert f"`app/reports.py:21` — {SHELL_TITLE}" in out
    assert ALL_REVIEWED in out and "not reviewed" not in out
    assert script.count("reviewer") == 4 and not reasks(llm, "reviewer")


# -- coverage ----------------------------------------------------------------------------------


def test_a_file_whose_reviewer_failed_is_not_listed_as_reviewed(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two runs of three attempts, each asking twice: never a usable answer for app/text.py.
    script.faults[("reviewer", "app/text.py")] = [Reply.text("I would rather not.")] * 12
    _, out = review(capsys, demo_repo, llm.base_url)
    assert "- Reviewed: 3 files: `README.md`, `app/reports.py`, `tests/test_text.py`" in out
    assert "  - `app/text.py`: not reviewed: invalid model output" in out
    _, data = review(capsys, demo_repo, llm.base_url, "--format", "json")
    coverage = json.loads(data)["coverage"]
    assert "app/text.py" not in coverage["reviewed_files"]
    assert "app/reports.py" in coverage["reviewed_files"]  # its answer came from the cache


# -- ask -----------------------------------------------------------------------------------------


def _redline(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed `redline` executable (its exit code is what CI sees)."""
    redline = Path(sys.executable).with_name("redline")
    return subprocess.run(
        [str(redline), *args], capture_output=True, text=True, check=False, timeout=120
    )


def test_ask_that_never_submits_fails_in_the_headline_and_the_exit_code(
    demo_repo: Path,
) -> None:
    script = AskScript([Reply.tool("git", {"command": "status"})])  # loops until stopped
    with ScriptedLLM(handler=script) as llm:
        result = _redline(
            "ask", "review the current branch", "--repo", str(demo_repo), "--quiet",
            "--model", "openai/scripted", "--api-base", llm.base_url,
        )  # fmt: skip
    assert result.returncode == 2
    headline = result.stdout.splitlines()[2]
    assert headline.startswith("**Review failed:** the agent was stopped for repeating a tool")
    assert "No findings: the review did not complete." in result.stdout
    assert "0 files changed" not in result.stdout
    assert "redline: error: the review failed: the agent was stopped" in result.stderr


def test_ask_stopped_at_the_step_limit_is_a_failed_review(demo_repo: Path) -> None:
    from redline.report import render
    from test_ask import run

    commands = [f"log --oneline -n {n}" for n in range(1, 9)]
    script = AskScript([Reply.tool("git", {"command": c}) for c in commands])
    with ScriptedLLM(handler=script) as llm:
        result = run(demo_repo, llm, "review the current branch", max_steps=3)
    assert result.failure == "the agent stopped after 3 steps without submitting a review"
    assert "**Review failed:** the agent stopped after 3 steps" in render(result, "markdown")
    sarif = json.loads(render(result, "sarif"))
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_ask_json_answer_with_a_wrong_key_is_not_taken_as_a_review(demo_repo: Path) -> None:
    from test_ask import run

    script = AskScript(
        [
            Reply.text(json.dumps({"summary": "fine", "findings": [], "issues": [SHELL]})),
            Reply.tool("submit_review", {"summary": "s", "findings": [SHELL]}),
        ]
    )
    with ScriptedLLM(handler=script) as llm:
        result = run(demo_repo, llm, "review the current branch")
    assert [f.line for f in result.findings] == [21]  # from the submission it was reminded to make
    assert "the agent was reminded once to call submit_review" in result.coverage.notes
    assert result.failure is None
