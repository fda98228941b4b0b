"""`redline ask` end to end: the CLI, the agent with the real tools on the demo repository,
litellm's real HTTP path, and a scripted OpenAI-compatible server playing the agent and the
verifier."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline import config
from redline.agent.llm import LLMClient
from redline.agent.toolkit import ToolError
from redline.cli.main import main
from redline.config_models import Settings
from redline.model import Review
from redline.requests import AskRequest
from redline.review.ask import SUBMIT_NUDGE, run_ask, scope_label
from redline.review.submission import parse_submission
from redline.store import TaskStore

from demo_findings import BARE_EXCEPT as BARE_EXCEPT_FINDING
from demo_findings import SHELL, SPECULATIVE
from model_review_bed import demo_repo as demo_repo  # pytest fixtures, from the shared bed
from model_review_bed import isolated_model_env as isolated_model_env
from review_script import ReviewScript
from scripted_llm import Reply, ScriptedLLM

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
AGENT_PROMPT_MARK = "You are Redline's review agent"

# Right code, wrong line number and a "./" path: anchoring must normalise and place it.
BARE_EXCEPT = dict(BARE_EXCEPT_FINDING, file="./app/reports.py")
SUBMISSION = {
    "summary": "The export feature shells out with user input.",
    "findings": [SHELL, BARE_EXCEPT, SPECULATIVE],
}
BRANCH_STEPS = [
    Reply.tool("git", {"command": "log --oneline main..HEAD"}),
    Reply.tool("git", {"command": "diff main...HEAD"}),
    Reply.tool("read_file", {"path": "app/reports.py"}),
    Reply.tool("submit_review", SUBMISSION),
]


@dataclass
class AskScript:
    """Plays the agent by conversation position (so every run of the CLI gets the same
    script) and the verifier through ReviewScript. `faults[step]` replies are served first,
    once each, at that step (a retry of the same step gets the next one, then the script)."""

    steps: list[Reply]
    review: ReviewScript = field(
        default_factory=lambda: ReviewScript(verdicts={"Speculative": "INCORRECT"})
    )
    faults: dict[int, list[Reply]] = field(default_factory=dict)
    agent_requests: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        if not messages or AGENT_PROMPT_MARK not in str(messages[0].get("content")):
            return self.review(body)
        self.agent_requests.append(body)
        step = sum(1 for m in messages if m.get("role") == "assistant")
        if self.faults.get(step):
            return self.faults[step].pop(0)
        return self.steps[min(step, len(self.steps) - 1)]  # the last step repeats


@pytest.fixture
def script() -> AskScript:
    return AskScript(list(BRANCH_STEPS))


@pytest.fixture
def llm(script: AskScript) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=script) as server:
        yield server


def ask(
    capsys: pytest.CaptureFixture[str], repo: Path, llm_url: str, request: str, *extra: str
) -> tuple[int, str, str]:
    code = main(
        [
            "ask", request, "--repo", str(repo), "--quiet",
            "--model", "openai/scripted", "--api-base", llm_url, *extra,
        ]
    )  # fmt: skip
    out, err = capsys.readouterr()
    return code, out, err


def settings_for(repo: Path, llm: ScriptedLLM) -> Settings:
    flags = {"models.model": "openai/scripted", "models.api_base": llm.base_url}
    return config.load_settings(repo, flags).settings


def run(repo: Path, llm: ScriptedLLM, request: str, **kw: Any) -> Review:
    """run_ask with short backoffs, so retried faults cost milliseconds."""
    settings = settings_for(repo, llm)
    client = LLMClient(settings, backoff_base=0.01, backoff_max=0.05)
    return asyncio.run(run_ask(AskRequest(request), repo, settings, client=client, **kw))


def tool_results(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m.get("role") == "tool"]


def record_of(tmp_path: Path, task_id: str) -> dict[str, Any]:
    return TaskStore(tmp_path / "cache" / "review_content").load(task_id)


# -- the main path -----------------------------------------------------------------------------


def test_ask_reviews_the_current_branch_with_anchored_verified_findings(
    demo_repo: Path,
    llm: ScriptedLLM,
    script: AskScript,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = ask(
        capsys, demo_repo, llm.base_url, "review the current branch", "--format", "json"
    )
    assert code == 0, err
    result = json.loads(out)

    # The agent got the system prompt, the request, every tool plus submit_review...
    first = script.agent_requests[0]
    assert first["messages"][1] == {"role": "user", "content": "review the current branch"}
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"git", "gh", "read_file", "read_function", "search_callers", "submit_review"} <= offered
    # ...and saw the real repository through them.
    seen = tool_results(script.agent_requests[-1])
    assert "Export reports as zip archives" in seen[0]
    assert "diff --git a/app/reports.py b/app/reports.py" in seen[1]
    assert "+    return subprocess.call(command, shell=True)" in seen[1]
    assert "  21|     return subprocess.call(command, shell=True)" in seen[2]

    by_title = {f["title"]: f for f in result["findings"]}
    shell = by_title["Shell injection through the report name"]
    assert (shell["file"], shell["line"], shell["anchor"]) == ("app/reports.py", 21, "exact")
    assert shell["verification"]["verdict"] == "CORRECT"
    assert shell["sources"] == ["model:openai/scripted"]
    bare = by_title["Bare except hides real errors"]
    assert (bare["file"], bare["line"], bare["end_line"]) == ("app/reports.py", 27, 28)
    assert bare["anchor"] == "relocated"  # placed by its code, not by "line 3"
    assert "Speculative quadratic loop" not in by_title
    assert [d["title"] for d in result["dropped"]] == ["Speculative quadratic loop"]

    assert result["scope"] == "ask"
    assert result["scope_label"] == 'ask: "review the current branch"'
    assert result["quality_score"] == 85
    assert "Severity distribution" not in result["summary"]  # the headline counts
    assert "The export feature shells out with user input." in result["summary"]
    coverage = result["coverage"]
    assert coverage["models"] == ["openai/scripted"] and coverage["tokens"] > 0
    assert coverage["model_calls"] == 5  # four agent steps and the verifier
    assert "app/reports.py" in coverage["reviewed_files"]
    assert result["stats"]["files"] == 5
    assert any(
        "4 tool calls in 4 model steps (git ×2, read_file ×1, submit_review ×1)" in n
        for n in coverage["notes"]
    )
    assert "sk-test-key-not-secret" not in json.dumps(llm.requests)

    record = record_of(tmp_path, result["task_id"])
    assert record["status"] == "done"
    assert record["content"]["request"] == "review the current branch"
    assert record["content"]["repo"] == str(demo_repo.resolve())
    assert [c["tool"] for c in record["tool_calls"]] == [
        "git",
        "git",
        "read_file",
        "submit_review",
    ]
    assert len(record["submission"]["submitted"]["findings"]) == 3
    assert [d["title"] for d in record["verification"]["dropped"]] == ["Speculative quadratic loop"]
    assert record["review"]["task_id"] == result["task_id"]

    assert main(["history", "--repo", str(demo_repo)]) == 0
    assert 'ask: "review the current branch"' in capsys.readouterr().out


def test_every_output_format_carries_the_findings_at_the_right_lines(
    demo_repo: Path, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    request = "review the current branch"
    code, md, _ = ask(capsys, demo_repo, llm.base_url, request)
    assert code == 0
    assert "`app/reports.py:21` — Shell injection through the report name" in md
    assert "`app/reports.py:27` — Bare except hides real errors" in md
    assert "Speculative quadratic loop" not in md.split("Dropped")[0]

    code, sarif_text, _ = ask(capsys, demo_repo, llm.base_url, request, "--format", "sarif")
    assert code == 0
    sarif = json.loads(sarif_text)
    jsonschema.validate(sarif, json.loads(SCHEMA.read_text(encoding="utf-8")))
    regions = sorted(
        (r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"])
        for r in sarif["runs"][0]["results"]
    )
    assert [line for line, _ in regions] == [21, 27]

    code, simple, _ = ask(capsys, demo_repo, llm.base_url, request, "--format", "json-simple")
    assert code == 0
    items = {i["suggestionLine"]: i for i in json.loads(simple)}
    assert set(items) == {21, 27}
    assert "subprocess.call([" in items[21]["improvedCode"]
    assert items[27]["existingCode"] == "    except:\n        return None"

    code, _, err = ask(capsys, demo_repo, llm.base_url, request, "--fail-on", "high")
    assert code == 1 and "Critical" in err


def test_a_chinese_request_works_the_same(
    demo_repo: Path, llm: ScriptedLLM, script: AskScript, capsys: pytest.CaptureFixture[str]
) -> None:
    code, md, err = ask(capsys, demo_repo, llm.base_url, "审查当前分支")
    assert code == 0, err
    assert script.agent_requests[0]["messages"][1]["content"] == "审查当前分支"
    assert '# Redline review: ask: "审查当前分支"' in md
    assert "`app/reports.py:21` — Shell injection through the report name" in md
    assert "`app/reports.py:27` — Bare except hides real errors" in md


# -- what the model gets wrong -------------------------------------------------------------------


def test_an_invalid_submission_is_rejected_and_the_second_one_accepted(
    demo_repo: Path, tmp_path: Path
) -> None:
    bad = dict(SHELL, severity="Urgent")
    script = AskScript(
        [
            Reply.tool("git", {"command": "diff main...HEAD"}),
            Reply.tool("submit_review", {"summary": "s", "findings": [bad]}),
            Reply.tool("submit_review", {"summary": "fixed", "findings": [SHELL]}),
        ]
    )
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review the current branch", store=TaskStore())
    rejected = tool_results(script.agent_requests[-1])[-1]
    assert rejected.startswith("error:") and "severity" in rejected
    assert [(f.title, f.line) for f in review.findings] == [(SHELL["title"], 21)]
    record = TaskStore().load(review.task_id)
    assert [c["ok"] for c in record["tool_calls"]] == [True, False, True]
    assert record["status"] == "done"


def test_pydantic_has_the_last_word_on_a_submission() -> None:
    # The handler validates again with pydantic (the executor's schema check is a subset): what
    # is wrong comes back as a ToolError naming the field, and lenient spellings are accepted.
    with pytest.raises(ToolError, match=r"findings\.0\.confidence"):
        parse_submission({"summary": "", "findings": [dict(SHELL, confidence=7)]})
    with pytest.raises(ToolError, match=r"findings\.0\.comment"):
        parse_submission(
            {"summary": "", "findings": [{k: v for k, v in SHELL.items() if k != "comment"}]}
        )
    ok = parse_submission({"summary": "", "findings": [dict(SHELL, severity="critical")]})
    assert ok.findings[0].severity.value == "Critical"


def test_a_model_that_never_submits_is_stopped_and_the_review_says_why(
    demo_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = AskScript([Reply.tool("git", {"command": "status"})])  # forever
    with ScriptedLLM(handler=script) as llm:
        code, out, err = ask(
            capsys, demo_repo, llm.base_url, "review my current changes", "--format", "json"
        )
    assert code == 2  # a failed review, not a clean one
    result = json.loads(out)  # the report is still written
    assert result["findings"] == []
    why = result["coverage"]["notes"][0]
    assert result["failure"] == why
    assert f"redline: error: the review failed: {why}" in err
    assert why.startswith("the agent was stopped for repeating a tool call")
    assert "before submitting a review" in why
    assert len(script.agent_requests) == 4  # the loop detector's limit, not max_steps
    record = record_of(tmp_path, result["task_id"])
    assert record["status"] == "failed"
    assert record["error"] == why
    assert record["submission"]["stop_reason"] == "loop"
    assert [c["tool"] for c in record["tool_calls"]] == ["git", "git"]  # the two that ran
    assert record["review"]["coverage"]["notes"][0] == why


def test_running_out_of_steps_is_reported(demo_repo: Path) -> None:
    commands = ["status", "log --oneline -n 3", "branch", "diff --stat main...HEAD"]
    script = AskScript([Reply.tool("git", {"command": c}) for c in commands])
    script.steps += [Reply.tool("git", {"command": f"log --oneline -n {n}"}) for n in range(1, 9)]
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review the current branch", max_steps=5)
    assert review.coverage.notes[0] == (
        "the agent stopped after 5 steps without submitting a review"
    )
    assert review.findings == [] and review.attempts == 1


def test_an_unknown_tool_is_an_error_result_and_the_agent_continues(demo_repo: Path) -> None:
    script = AskScript(
        [
            Reply.tool("run_shell", {"cmd": "touch /tmp/pwned"}),
            Reply.tool("git", {"command": "diff main...HEAD"}),
            Reply.tool("submit_review", {"summary": "s", "findings": [SHELL]}),
        ]
    )
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review the current branch")
    first = tool_results(script.agent_requests[1])[0]
    assert first.startswith("error: unknown tool 'run_shell'")
    assert [f.line for f in review.findings] == [21]
    assert "unknown tool ×1" in review.coverage.notes[0]


def test_a_prose_answer_is_reminded_once_to_submit(demo_repo: Path) -> None:
    script = AskScript(
        [
            Reply.tool("git", {"command": "diff main...HEAD"}),
            Reply.text("The branch looks risky: the export shells out."),
            Reply.tool("submit_review", {"summary": "s", "findings": [SHELL]}),
        ]
    )
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review the current branch")
    last = script.agent_requests[-1]["messages"]
    assert last[-1] == {"role": "user", "content": SUBMIT_NUDGE}
    assert [f.line for f in review.findings] == [21]
    assert "the agent was reminded once to call submit_review" in review.coverage.notes


def test_a_json_answer_is_taken_as_the_submission(demo_repo: Path) -> None:
    script = AskScript([Reply.text("```json\n" + json.dumps(SUBMISSION) + "\n```")])
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "审查提交 HEAD")
    assert {f.line for f in review.findings} == {21, 27}
    assert len(script.agent_requests) == 1  # no reminder needed


def test_a_prose_answer_twice_ends_with_the_text_as_summary(demo_repo: Path) -> None:
    script = AskScript([Reply.text("Everything looks fine to me.")])
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review my current changes", store=TaskStore())
    assert review.findings == []
    assert review.coverage.notes[0].startswith(
        "the agent answered without calling submit_review, even when asked to"
    )
    assert review.summary is not None and "Everything looks fine to me." in review.summary
    assert TaskStore().load(review.task_id)["status"] == "failed"


def test_findings_on_secret_or_outside_files_are_never_read(demo_repo: Path) -> None:
    (demo_repo / ".env").write_text("API_TOKEN=abcdefgh12345678\n")
    secret = dict(SHELL, file=".env", existing_code="API_TOKEN=abcdefgh12345678")
    outside = dict(SHELL, file="../../../../etc/passwd", existing_code="root:x:0:0")
    script = AskScript(
        [Reply.tool("submit_review", {"summary": "", "findings": [secret, outside]})]
    )
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review the current branch")
    everything = review.findings + review.dropped
    assert len(everything) == 2
    assert all(f.line is None and f.anchor.value == "unanchored" for f in everything)
    verifier = [r for r in llm.requests if AGENT_PROMPT_MARK not in json.dumps(r["messages"][0])]
    assert "root:x:0:0:" not in json.dumps(verifier)  # nothing from /etc/passwd was sent


# -- fault injection -----------------------------------------------------------------------------


def test_garbage_bodies_and_server_errors_are_retried(demo_repo: Path) -> None:
    script = AskScript(list(BRANCH_STEPS))
    script.faults = {0: [Reply.garbage()], 2: [Reply.error(500)], 3: [Reply.error(503)]}
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review the current branch", store=TaskStore())
    assert {f.line for f in review.findings} == {21, 27}
    assert len(script.agent_requests) == 4 + 3  # each fault cost one retry
    assert TaskStore().load(review.task_id)["status"] == "done"


def test_a_model_failure_mid_run_keeps_what_the_agent_did(demo_repo: Path) -> None:
    script = AskScript(list(BRANCH_STEPS))
    script.faults = {2: [Reply.error(500), Reply.error(500)]}  # both attempts of step 2 fail
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review the current branch", store=TaskStore())
    assert review.findings == []
    assert review.coverage.notes[0].startswith(
        "a model call failed before the agent submitted a review: model call for role 'ask' failed"
    )
    record = TaskStore().load(review.task_id)
    assert record["status"] == "failed"
    assert [c["tool"] for c in record["tool_calls"]] == ["git", "git"]
    assert record["review"]["coverage"]["notes"][0] == review.coverage.notes[0]


def test_a_failing_verifier_leaves_the_findings_unverified(demo_repo: Path) -> None:
    script = AskScript(list(BRANCH_STEPS))
    script.review.faults[("verifier", "")] = [Reply.error(500), Reply.error(500)]
    with ScriptedLLM(handler=script) as llm:
        review = run(demo_repo, llm, "review the current branch", store=TaskStore())
    assert {f.line for f in review.findings} == {21, 27, 32}  # nothing dropped unverified
    assert all(f.verification is None for f in review.findings)
    assert any(n.startswith("verification failed") for n in review.coverage.notes)
    assert TaskStore().load(review.task_id)["status"] == "done"


def test_an_unwritable_task_store_does_not_stop_the_review(demo_repo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with ScriptedLLM(handler=AskScript(list(BRANCH_STEPS))) as llm:
        review = run(demo_repo, llm, "review the current branch", store=TaskStore(blocker))
    assert {f.line for f in review.findings} == {21, 27}


# -- configuration -------------------------------------------------------------------------------


def test_ask_without_a_model_exits_2_and_says_what_to_set(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ask", "review the current branch", "--repo", str(demo_repo), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "ask needs a model: set --model or REDLINE_MODEL" in err


def test_the_scope_label_is_one_clean_bounded_line() -> None:
    label = scope_label("review\x1b[31m this\nbranch" + "x" * 500)
    assert label.startswith('ask: "review[31m this branch')
    assert "\x1b" not in label and "\n" not in label and len(label) < 140
