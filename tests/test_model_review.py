"""`redline review` with a model, end to end: the CLI, the real pipeline, litellm's real HTTP
path, and a scripted OpenAI-compatible server on 127.0.0.1 playing the model."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import jsonschema
import pytest

from model_env import FAST_RETRIES, isolate_model_env
from redline.cli.main import main
from redline.store import TaskStore

from model_review_bed import demo, review  # demo: scripts/demo.py
from model_review_bed import demo_repo as demo_repo
from model_review_bed import isolated_model_env as isolated_model_env
from model_review_bed import llm as llm
from model_review_bed import script as script
from review_script import ReviewScript, role_of
from scripted_llm import Reply, ScriptedLLM

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


def test_branch_review_with_a_model_anchors_verifies_and_fuses(
    demo_repo: Path, llm: ScriptedLLM, script: ReviewScript, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = review(capsys, demo_repo, llm.base_url, "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    by_title = {f["title"]: f for f in result["findings"]}

    shell = by_title["Shell injection through the report name"]
    assert (shell["file"], shell["line"]) == ("app/reports.py", 21)
    assert shell["anchor"] == "exact"
    assert shell["verification"]["verdict"] == "CORRECT"
    # Found by the model and by both analyzers: fused into one finding.
    assert any(s.startswith("model:") for s in shell["sources"])
    assert any(s.startswith(("ruff:", "bandit:")) for s in shell["sources"])
    assert not any(
        f["line"] == 21 and f is not shell and f["category"] == "Security"
        for f in result["findings"]
    )

    bare = by_title["Bare except hides real errors"]
    assert (bare["line"], bare["end_line"]) == (27, 28)  # placed by its code, not by "line 3"

    phantom = by_title["Code the model imagined"]
    assert phantom["anchor"] == "unanchored" and phantom["line"] is None

    # The verifier rejected the speculative finding: not shown, but kept in the record.
    assert "Speculative quadratic loop" not in by_title
    assert [d["title"] for d in result["dropped"]] == ["Speculative quadratic loop"]

    assert result["quality_score"] == 85 and result["attempts"] == 1
    # The model's assessment; the counts are the headline's alone (tests/test_counts_agree.py).
    assert result["summary"] and "Severity distribution" not in result["summary"]
    assert result["coverage"]["tokens"] > 0
    assert result["coverage"]["models"]
    assert script.count("planner") == 1 and script.count("summarizer") == 1
    reviewed = {p for r, p in script.calls if r == "reviewer"}
    assert reviewed == {"app/reports.py", "app/text.py", "tests/test_text.py", "README.md"}

    # Nothing secret went to the model; the planner never saw code.
    bodies = json.dumps(llm.requests)
    assert "sk-test-key-not-secret" not in bodies
    planner = next(r for r in llm.requests if role_of(r) == "planner")
    assert "shell=True" not in json.dumps(planner)


def test_every_output_format_carries_the_model_findings(
    demo_repo: Path, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    code, md, _ = review(capsys, demo_repo, llm.base_url)
    assert code == 0
    assert "`app/reports.py:21` — Shell injection through the report name" in md
    assert "`app/reports.py:27` — Bare except hides real errors" in md
    assert "The change needs fixes before merging." in md

    code, sarif_text, _ = review(capsys, demo_repo, llm.base_url, "--format", "sarif")
    sarif = json.loads(sarif_text)
    jsonschema.validate(sarif, json.loads(SCHEMA.read_text(encoding="utf-8")))
    lines = {
        r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in sarif["runs"][0]["results"]
    }
    assert {21, 27} <= lines

    code, simple, _ = review(capsys, demo_repo, llm.base_url, "--format", "json-simple")
    items = json.loads(simple)
    assert any(
        i["suggestionLine"] == 21 and "subprocess.call([" in i["improvedCode"] for i in items
    )


def test_task_record_holds_content_review_and_attempts(
    demo_repo: Path, llm: ScriptedLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = review(capsys, demo_repo, llm.base_url, "--format", "json")
    assert code == 0
    task_id = json.loads(out)["task_id"]
    record = TaskStore(tmp_path / "cache" / "review_content").load(task_id)
    assert next(iter(record)) == "content"
    assert record["status"] == "done"
    assert record["review"]["task_id"] == task_id
    assert len(record["attempts"]) == 1

    assert main(["history", "--repo", str(demo_repo)]) == 0
    listing = capsys.readouterr().out
    assert task_id in listing and str(demo_repo.resolve()) in listing
    assert " tokens, " in listing  # a model ran: its tokens and cost are listed
    assert main(["history", task_id]) == 0
    assert "Shell injection through the report name" in capsys.readouterr().out


def test_invalid_output_twice_marks_the_file_not_reviewed_and_keeps_the_rest(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    # app/text.py's reviewer answers garbage in every attempt (3 attempts × 2 asks).
    script.faults[("reviewer", "app/text.py")] = [Reply.text("I think it is fine!")] * 6
    code, out, _ = review(capsys, demo_repo, llm.base_url, "--format", "json")
    assert code == 0
    result = json.loads(out)
    skipped = {s["path"]: s["reason"] for s in result["coverage"]["skipped"]}
    assert "not reviewed: invalid model output" in skipped["app/text.py"]
    assert any(f["line"] == 21 for f in result["findings"])  # the other files still count
    assert script.count("reviewer") >= 2 * 3  # re-asked once, in each of the 3 attempts


def test_server_errors_are_retried_and_the_review_completes(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    script.faults[("reviewer", "app/reports.py")] = [Reply.error(500)]
    code, out, _ = review(capsys, demo_repo, llm.base_url, "--format", "json")
    assert code == 0
    result = json.loads(out)
    assert any(f["title"].startswith("Shell injection") for f in result["findings"])
    assert not any(s["reason"].startswith("not reviewed") for s in result["coverage"]["skipped"])


def test_unreachable_model_falls_back_to_the_analyzers_with_a_notice(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, _ = review(capsys, demo_repo, f"http://127.0.0.1:{port}/v1")
    assert code == 3  # the model could not be used: not a clean run
    line = f"model openai/scripted at http://127.0.0.1:{port}/v1: nothing is listening there"
    assert f"**The model could not be used:** {line}." in out
    assert "Offline review" not in out  # a model was configured: it failed, it was not absent
    assert "only the static analyzers' findings are shown" in out
    assert "`app/reports.py:21`" in out  # the analyzers' findings are still there


def test_low_quality_score_re_reviews_with_the_verifier_feedback(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    script.quality = [30, 85]
    code, out, _ = review(capsys, demo_repo, llm.base_url, "--format", "json")
    assert code == 0
    result = json.loads(out)
    assert result["attempts"] == 2 and result["quality_score"] == 85
    second = [r for r in llm.requests if role_of(r) == "reviewer"][-1]
    assert "Drop speculative findings; quote the exact code." in json.dumps(second)


def test_unchanged_code_reuses_cached_answers(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    assert review(capsys, demo_repo, llm.base_url)[0] == 0
    first = script.count("reviewer")
    code, out, _ = review(capsys, demo_repo, llm.base_url)
    assert code == 0
    assert script.count("reviewer") == first  # no reviewer call the second time
    assert "reused a cached model answer" in out
    assert "`app/reports.py:21`" in out


def test_estimate_with_a_model_plans_calls_and_tokens_without_calling_it(
    demo_repo: Path, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = review(capsys, demo_repo, llm.base_url, "--estimate")
    assert code == 0
    assert "Model: openai/scripted" in out
    assert "Planned model calls: 7" in out  # planner + 4 files + verifier + summary
    tokens = int(out.split("Prompt tokens (first attempt, estimated): ")[1].split()[0])
    assert tokens > 500
    assert "Nothing was sent to the model." in out
    assert llm.requests == []


def test_repository_instructions_are_read_and_reported(
    demo_repo: Path, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    # The guidance of the branch's base: a review of commits reads it there (review/ground.py).
    demo._git(demo_repo, "checkout", "-q", "main")
    (demo_repo / "AGENTS.md").write_text("Prefer pathlib.\n" + "x" * 20000 + "\n")
    demo._git(demo_repo, "add", "AGENTS.md")
    demo._git(demo_repo, "commit", "-q", "-m", "Guidance")
    demo._git(demo_repo, "checkout", "-q", "feature/export")
    demo._git(demo_repo, "rebase", "-q", "main")
    code, out, _ = review(capsys, demo_repo, llm.base_url)
    assert code == 0
    assert "Repository instructions read: `AGENTS.md`" in out
    assert "truncated: AGENTS.md" in out
    reviewer = next(r for r in llm.requests if role_of(r) == "reviewer")
    assert "Prefer pathlib." in json.dumps(reviewer)


def test_a_rate_limit_mid_review_is_partial_coverage_not_a_model_error(
    demo_repo: Path, script: ReviewScript, llm: ScriptedLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    # One file's reviewer is rate limited in every attempt; the other files are reviewed.
    script.faults[("reviewer", "app/reports.py")] = [Reply.rate_limited(0)] * 50
    code, out, err = review(capsys, demo_repo, llm.base_url)
    assert code == 0, err  # partial coverage, said in the report: not exit 3
    assert "The model could not be used" not in out
    coverage = out.split("## Coverage")[-1]
    # The coverage says which file the rate limit left out, and that the others were reviewed.
    assert "- Reviewed: 3 files: `README.md`, `app/text.py`, `tests/test_text.py`" in coverage
    skipped = next(line for line in coverage.splitlines() if "`app/reports.py`" in line)
    assert "not reviewed:" in skipped and "rate limited (HTTP 429)" in skipped


def test_a_verifier_whose_key_is_refused_leaves_findings_unverified_not_exit_3(
    demo_repo: Path,
    script: ReviewScript,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    roles = '[models.roles.verifier]\nmodel = "openai/strict"\n'
    isolate_model_env(monkeypatch, tmp_path, user_config=FAST_RETRIES + roles)

    def handler(body: dict) -> Reply:  # type: ignore[type-arg]
        if body["model"] == "strict":
            return Reply.error(401, "Incorrect API key provided")
        return script(body)

    with ScriptedLLM(handler=handler) as server:
        code, out, err = review(capsys, demo_repo, server.base_url, "--format", "json")
    assert code == 0, err  # the reviewers' findings stand: no "analyzers' findings only"
    result = json.loads(out)
    assert result["model_error"] is None
    assert any(s.startswith("model:") for f in result["findings"] for s in f["sources"])
    line = f"model openai/strict at {server.base_url}: the key was refused (401)"
    assert any(line in note and "unverified" in note for note in result["coverage"]["notes"])
    assert sum(1 for r in server.requests if r["model"] == "strict") == 1
