"""Limits, attacked end to end: the installed `redline` against the demo repository and the
scripted model server, which records every request body and its size.

- A file whose diff is over the per-file cap (2 × review.max_file_bytes) is cut while the diff
  is read: no request carries any of it, and the report lists it as skipped, with why.
- A request over llm.max_request_bytes is never sent: its file is listed as not reviewed.
- A model answer (or tool-call arguments) nested 100,000 deep is invalid output — re-asked,
  then a failed unit — never a RecursionError, a traceback or exit 1 ("findings at or above
  --fail-on").
- Whatever a command raises, the CLI leaves one line on stderr and exit 2.

The 60 MB and 200 MB files of the issue, and peak memory, are measured in
benchmarks/big_diff.py; here a few MB against a small configured limit show the same rules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from redline.agent.attempts import TRUNCATION_NOTE, request_bytes
from redline.agent.llm import LLMClient, RequestTooLarge
from redline.config_models import LLMSettings, ModelSettings, Settings

from demo_findings import SHELL
from review_script import ReviewScript
from scripted_llm import Reply, ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

REDLINE = str(Path(sys.executable).with_name("redline"))
TEST_KEY = "sk-test-key-not-secret"
MARKER = "OVERSIZE_MARKER_5e1d"  # in every line of the big file: must reach no request
DEEP = 100_000
AGENT_PROMPT_MARK = "You are Redline's review agent"
# A GitHub token's shape: deep tool arguments holding one take the redactor's JSON path.
FAKE_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    return demo.build_demo_repo(tmp_path / "demo", polyglot=False)  # the model's files only


def user_env(
    tmp_path: Path, user_config: str = "", *, retries: int = 0, **extra: str
) -> dict[str, str]:
    """No REDLINE_* or provider key of the developer's; a user file of the test's own."""
    user = tmp_path / "user.toml"
    llm = f"[llm]\nmax_retries = {retries}\ntimeout = 30\n"
    user.write_text(llm + user_config, encoding="utf-8")
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("REDLINE_") and not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))
    }
    return (
        base
        | extra
        | {
            "REDLINE_CONFIG": str(user),
            "REDLINE_CACHE_DIR": str(tmp_path / "cache"),
            "REDLINE_API_KEY": TEST_KEY,
        }
    )


def redline(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REDLINE, *argv], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def review(
    env: dict[str, str], repo: Path, llm: ScriptedLLM, *flags: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    result = redline(
        env, "review", "--branch", "main", "--repo", str(repo), "--quiet", "--format", "json",
        "--model", "openai/scripted", "--api-base", llm.base_url, *flags,
    )  # fmt: skip
    assert result.stdout, result.stderr
    return result, json.loads(result.stdout)


def git(repo: Path, *argv: str) -> None:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
    env |= {"PATH": os.environ["PATH"], "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid"}
    subprocess.run(["git", *argv], cwd=repo, env=env, check=True, capture_output=True)


def commit(repo: Path, files: dict[str, str], message: str) -> None:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def marked_lines(size: int, name: str = "ROW") -> str:
    line = f'{name}_{{:07d}} = "{MARKER} {"x" * 30}"\n'
    return "".join(line.format(i) for i in range(size // len(line.format(0)) + 1))


def skipped(report: dict[str, Any]) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in report["coverage"]["skipped"]}


def sent(llm: ScriptedLLM) -> str:
    return "\n".join(json.dumps(body) for body in llm.requests)


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "RecursionError" not in stderr, stderr[-2000:]


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=ReviewScript(findings={"app/reports.py": [SHELL]})) as server:
        yield server


# -- a file over the per-file cap is cut where the diff is read ---------------------------------


def test_a_file_over_the_cap_reaches_no_request_and_is_reported_skipped(
    demo_repo: Path, llm: ScriptedLLM, tmp_path: Path
) -> None:
    # 3 MB against max_file_bytes = 200,000: the per-file diff cap is 400,000 bytes.
    commit(demo_repo, {"data/table.py": marked_lines(3_000_000)}, "a big generated table")
    env = user_env(tmp_path, REDLINE_MAX_FILE_BYTES="200000")
    result, report = review(env, demo_repo, llm)
    no_traceback(result.stderr)
    assert result.returncode == 0, result.stderr
    assert llm.sizes, "the rest of the change was still reviewed by the model"
    assert max(llm.sizes) < 400_000
    assert MARKER not in sent(llm)
    reason = skipped(report)["data/table.py"]
    assert "diff too large" in reason and "400,000" in reason
    assert "data/table.py" not in report["coverage"]["reviewed_files"]
    assert MARKER not in result.stdout
    # The other files were reviewed as usual: the reviewer's finding is there.
    assert any(f["file"] == "app/reports.py" for f in report["findings"])


def test_a_cut_file_is_skipped_offline_too_and_the_totals_still_count_it(
    demo_repo: Path, tmp_path: Path
) -> None:
    commit(demo_repo, {"data/table.py": marked_lines(1_000_000)}, "a big generated table")
    env = user_env(tmp_path, REDLINE_MAX_FILE_BYTES="100000")
    result = redline(
        env, "review", "--branch", "main", "--repo", str(demo_repo), "-q", "--format", "json"
    )
    no_traceback(result.stderr)
    report = json.loads(result.stdout)
    assert "diff too large" in skipped(report)["data/table.py"]
    assert MARKER not in result.stdout
    rows = 1_000_000 // len(f'ROW_0000000 = "{MARKER} {"x" * 30}"\n') + 1
    assert report["stats"]["added"] >= rows  # the cut file's lines are still counted


def test_a_file_over_the_read_limit_shows_the_model_only_its_diff_and_the_report_says_so(
    demo_repo: Path, llm: ScriptedLLM, tmp_path: Path
) -> None:
    """A one-line change in a file over the read limit: the analyzers cannot read it and the
    model sees only the diff — and the report says exactly that, not "skipped"."""
    table = marked_lines(300_000)
    git(demo_repo, "checkout", "-q", "main")  # the table is on the base already
    commit(demo_repo, {"data/table.py": table}, "a big table")
    git(demo_repo, "checkout", "-q", "feature/export")
    git(demo_repo, "merge", "-q", "--no-edit", "main")
    changed = table.replace("ROW_0003000 = ", "ROW_0003000 = None or ", 1)
    commit(demo_repo, {"data/table.py": changed}, "one row changed")
    env = user_env(tmp_path, REDLINE_MAX_FILE_BYTES="100000")
    result, report = review(env, demo_repo, llm)
    assert result.returncode == 0, result.stderr
    assert "ROW_0003000 = None or" in sent(llm)
    assert sent(llm).count(MARKER) < 20  # the hunk and its context, not the 7,000-line file
    reason = skipped(report)["data/table.py"]
    assert reason.startswith("not analyzed: ") and "read limit" in reason
    assert "data/table.py" in report["coverage"]["reviewed_files"]


# -- a request over llm.max_request_bytes is not sent -------------------------------------------


def test_a_request_over_the_byte_cap_is_refused_and_its_file_reported(
    demo_repo: Path, llm: ScriptedLLM, tmp_path: Path
) -> None:
    # ~80 KB of diff: within the per-file cap, over a 40,000-byte request cap.
    commit(demo_repo, {"app/table.py": marked_lines(80_000)}, "a table")
    env = user_env(tmp_path, "max_request_bytes = 40000\n")
    result, report = review(env, demo_repo, llm)
    no_traceback(result.stderr)
    assert result.returncode == 0, result.stderr
    assert llm.sizes and max(llm.sizes) <= 40_000
    assert MARKER not in sent(llm)
    reason = skipped(report)["app/table.py"]
    assert "not reviewed" in reason and "llm.max_request_bytes" in reason
    assert any("were not sent" in note for note in report["coverage"]["notes"])
    assert any(f["file"] == "app/reports.py" for f in report["findings"])


def test_a_repository_cannot_lift_the_byte_cap(
    demo_repo: Path, llm: ScriptedLLM, tmp_path: Path
) -> None:
    lifted = "[llm]\nmax_request_bytes = 100000000\n"
    commit(demo_repo, {".redline.toml": lifted, "app/table.py": marked_lines(80_000)}, "lifted")
    env = user_env(tmp_path, "max_request_bytes = 40000\n")
    _, report = review(env, demo_repo, llm)
    assert max(llm.sizes) <= 40_000
    assert MARKER not in sent(llm)
    # A review of commits reads the settings from the base: the change's attempt is a finding
    # on the edited file that names the key.
    settings_findings = [f for f in report["findings"] if f["file"] == ".redline.toml"]
    assert settings_findings
    assert any("llm.max_request_bytes" in f["title"] + f["comment"] for f in settings_findings)


async def test_the_client_refuses_an_oversized_request_before_anything_is_sent() -> None:
    """One place every request passes: the first call, and a truncation re-ask that grows."""
    cap = 4000
    note = {"role": "user", "content": TRUNCATION_NOTE}
    # A message that fits, but not with the note a truncated answer is asked again with.
    fits = (
        next(
            n
            for n in range(cap, 0, -1)
            if request_bytes({"messages": [{"role": "user", "content": "y" * n}, note]}) <= cap
        )
        + 1
    )
    with ScriptedLLM([Reply.truncated("x" * 2000), Reply.text("never asked")]) as server:
        settings = Settings(
            models=ModelSettings(model="openai/scripted", api_base=server.base_url, api_key="k"),
            llm=LLMSettings(max_retries=0, timeout=20, max_request_bytes=cap),
        )
        client = LLMClient(settings)
        with pytest.raises(RequestTooLarge, match=r"llm\.max_request_bytes"):
            await client.complete("reviewer", [{"role": "user", "content": "y" * (cap + 1)}])
        assert server.requests == [] and client.requests_sent == 0
        with pytest.raises(RequestTooLarge):
            await client.complete("reviewer", [{"role": "user", "content": "y" * fits}])
        assert len(server.requests) == 1 and client.requests_sent == 1
        assert client.requests_too_large == 2


# -- answers nested 100,000 deep ----------------------------------------------------------------


def test_deep_answers_in_a_review_are_invalid_output_not_a_crash(
    demo_repo: Path, tmp_path: Path
) -> None:
    script = ReviewScript(findings={"app/reports.py": [SHELL]})
    # Deep answers in three shapes (bare, fenced, in prose), for the first answer and the
    # re-ask; the reviewer's also for the supervisor's next attempt at the failed file.
    script.faults = {
        ("planner", ""): [Reply.text("[" * DEEP)] * 2,
        ("reviewer", "app/reports.py"): [Reply.text("```json\n" + '{"a": ' * DEEP + "\n```")] * 6,
        ("summarizer", ""): [Reply.text("Here it is: " + '{"a": ' * DEEP)] * 2,
    }
    with ScriptedLLM(handler=script) as server:
        # No --fail-on: exit 1 could only be the crash's.
        result, report = review(user_env(tmp_path), demo_repo, server)
    no_traceback(result.stderr)
    assert result.returncode == 0, result.stderr[-2000:]
    reason = skipped(report)["app/reports.py"]
    assert "invalid model output" in reason and "deeper than 64" in reason
    notes = "\n".join(report["coverage"]["notes"])
    assert "planner answer unusable" in notes and "summary not written by the model" in notes
    # Re-asked once, as any malformed answer is.
    assert script.count("planner") == 2 and script.count("summarizer") == 2
    assert script.calls.count(("reviewer", "app/reports.py")) >= 2


@dataclass
class AgentScript:
    """Plays the ask agent by its step (assistant messages so far), the verifier otherwise."""

    steps: list[Reply]
    review: ReviewScript = field(default_factory=ReviewScript)

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        if not messages or AGENT_PROMPT_MARK not in str(messages[0].get("content")):
            return self.review(body)
        step = sum(1 for m in messages if m.get("role") == "assistant")
        return self.steps[min(step, len(self.steps) - 1)]


def ask(env: dict[str, str], repo: Path, llm: ScriptedLLM) -> subprocess.CompletedProcess[str]:
    return redline(
        env, "ask", "review the branch against main", "--repo", str(repo), "--quiet",
        "--format", "json", "--model", "openai/scripted", "--api-base", llm.base_url,
    )  # fmt: skip


SUBMIT = Reply.tool("submit_review", {"summary": "Shell injection.", "findings": [SHELL]})


def test_a_deep_answer_to_ask_is_invalid_output_and_the_agent_is_asked_again(
    demo_repo: Path, tmp_path: Path
) -> None:
    script = AgentScript([Reply.text("[" * DEEP), SUBMIT])
    with ScriptedLLM(handler=script) as server:
        result = ask(user_env(tmp_path), demo_repo, server)
    no_traceback(result.stderr)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert any("reminded once" in note for note in report["coverage"]["notes"])
    assert [f["file"] for f in report["findings"]] == ["app/reports.py"]


def test_a_deep_answer_to_ask_every_time_fails_the_review_with_exit_2(
    demo_repo: Path, tmp_path: Path
) -> None:
    script = AgentScript([Reply.text("```json\n" + '{"findings": ' * DEEP + "\n```")])
    with ScriptedLLM(handler=script) as server:
        result = ask(user_env(tmp_path), demo_repo, server)
    no_traceback(result.stderr)
    assert result.returncode == 2
    assert "without calling submit_review" in json.loads(result.stdout)["failure"]


def test_deep_tool_arguments_to_ask_are_invalid_output_asked_once_more(
    demo_repo: Path, tmp_path: Path
) -> None:
    """Unstreamed, litellm decodes tool-call arguments itself as it reads the answer: it runs
    out of stack there, and the call is treated as malformed output — asked once more, then
    the run fails with its one line (exit 2), never litellm's traceback."""
    script = AgentScript([Reply.tool("read_file", "[" * DEEP + "]" * DEEP)])
    with ScriptedLLM(handler=script) as server:
        # Retries allowed: malformed output still gets only one.
        result = ask(user_env(tmp_path, retries=3), demo_repo, server)
        agent_calls = [b for b in server.requests if AGENT_PROMPT_MARK in json.dumps(b)[:2000]]
    no_traceback(result.stderr)
    assert result.returncode == 2
    assert len(agent_calls) == 2  # the answer, and the one retry of malformed output
    assert "nested too deep to read" in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("redline: ") for line in lines)
    assert "attempt 1 of 2" in lines[0] and lines[1].startswith("redline: error: ")


DEBATERS = {"openai/alice": "Alice", "openai/bob": "Bob"}


def debate_config(base_url: str) -> str:
    lines = ["[debate]", "rounds = 1"]
    for model, label in DEBATERS.items():
        lines += [f"[debate.reviewers.{label.lower()}]", f'model = "{model}"']
        lines += [f'api_base = "{base_url}"', f'prompt = "You are {label}. Argue."']
    lines += ["[debate.summarizer]", 'model = "openai/judge"', f'api_base = "{base_url}"']
    return "\n".join(lines) + "\n"


def test_deep_tool_arguments_in_a_streamed_debate_turn_are_a_tool_error(
    demo_repo: Path, tmp_path: Path
) -> None:
    """Streamed (a debate turn), the arguments reach Redline's own tool layer whole: there
    they are refused as too deep — a tool error the debater reads — and redacted, not a
    crash; a summary nested 100,000 deep is invalid output like any other."""
    deep = "[" * DEEP + json.dumps(FAKE_TOKEN) + "]" * DEEP  # valid JSON, 100,000 deep
    tool_results: list[str] = []

    def answer(body: dict[str, Any]) -> Reply:
        model = str(body.get("model", "")).split("/")[-1]
        if model == "judge":
            return Reply.text("[" * DEEP)
        messages = body.get("messages", [])
        tool_results.extend(m["content"] for m in messages if m.get("role") == "tool")
        if model == "alice" and not any(m.get("role") == "assistant" for m in messages):
            return Reply.tool("read_file", deep)
        return Reply.text(f"{model}: the shell call takes user input.")

    with ScriptedLLM(handler=answer) as server:
        env = user_env(tmp_path, debate_config(server.base_url))
        result = redline(
            env, "debate", "--branch", "main", "--repo", str(demo_repo), "--quiet",
            "--format", "json",
        )  # fmt: skip
        requests = json.dumps(server.requests)
    no_traceback(result.stderr)
    assert result.returncode == 0, result.stderr[-2000:]
    assert tool_results and all("deeper than 64" in text for text in tool_results)
    assert FAKE_TOKEN not in requests
    debate = json.loads(result.stdout)["debate"]
    assert [t["label"] for t in debate["turns"] if t["kind"] == "turn"] == ["Alice", "Bob"]
    assert "deeper than 64" in debate["summarizer_error"]


# -- whatever a command raises: one line, exit 2 ------------------------------------------------

_RAISE = """
import sys
import redline.cli.main as cli
import redline.agent.litellm_loader as loader

TOKEN = sys.argv[2]

def boom(args):
    raise RuntimeError("boom " + TOKEN + "\\n  second line of a message")

cli._run_command = boom
if sys.argv[1] == "importing":
    loader.import_in_progress = lambda: True  # the exit that leaves through os._exit
sys.argv = ["redline", "history"]
sys.exit(cli.main())
"""


@pytest.mark.parametrize("when", ["plain", "importing"])
def test_an_unexpected_exception_leaves_one_line_and_exit_2(when: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _RAISE, when, FAKE_TOKEN],
        env=user_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("redline: internal error: RuntimeError: boom")
    assert FAKE_TOKEN not in result.stderr  # the message is redacted like every other line
